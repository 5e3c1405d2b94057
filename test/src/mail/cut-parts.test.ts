/**
 * Cutting removed attachments out of the raw message (src/mime/cut-parts.ts, src/mail/stages/policy-raw.ts):
 * messages built by nodemailer's composer (and by hand where the shape matters), parsed by the real parser pool, cut,
 * then parsed again: what was cut is gone, a note stands in its place, and everything else is byte for byte. The
 * cuts run on the parser pool's thread (MimeParser.cut), as at ingest, but for the pure edge cases.
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createMimeParser, cutParts, sha256, withBodyReplaced, type ParsedMessage } from '../../../src/mime/index.js';
import { MAX_DEPTH } from '../../../src/mime/cut-parts.js';
import { policyRaw } from '../../../src/mail/stages/policy-raw.js';
import { decideAttachments } from '../../../src/mail/stages/policy-limits.js';

type ComposerOptions = ConstructorParameters<typeof MailComposer>[0];

function build(options: ComposerOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    new MailComposer(options).compile().build((error, message) => (error ? reject(error) : resolve(message))),
  );
}

const parser = createMimeParser({ workers: 1 });
afterAll(() => parser.close());

async function parse(raw: Buffer): Promise<ParsedMessage> {
  const result = await parser.parse(raw);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

/** Cuts the attachments `drop` names (by file name) out of `raw`; undefined when one was not found. */
async function cutNamed(raw: Buffer, drop: string[]): Promise<Buffer | undefined> {
  const parsed = await parse(raw);
  // On the pool's thread, as ingest runs it.
  return parser.cut(
    raw,
    parsed.attachments.map((attachment) => ({
      hash: attachment.hash,
      size: attachment.content.length,
      note: drop.includes(attachment.filename) ? `removed ${attachment.filename}\r\n` : undefined,
    })),
  );
}

const EXE = Buffer.alloc(900, 9);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(1200, 7)]);

describe('cutParts', () => {
  it('replaces a removed attachment by a note and keeps every other byte', async () => {
    const raw = await build({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'Files',
      text: 'Two files',
      html: '<p>Two files</p>',
      attachments: [
        { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'setup.exe', content: EXE, contentType: 'application/x-msdownload' },
      ],
    });
    const cut = (await cutNamed(raw, ['setup.exe']))!;
    expect(cut).toBeDefined();
    expect(cut.toString('latin1')).not.toContain(EXE.toString('base64').slice(0, 60));
    const again = await parse(cut);
    expect(again.attachments.map((attachment) => attachment.filename)).toEqual(['report.pdf']);
    expect(again.attachments[0]!.content.equals(PDF)).toBe(true);
    expect(again.body).toContain('Two files');
    expect(again.searchText).toContain('removed setup.exe');
    // The header section is as received.
    const head = (bytes: Buffer) => bytes.subarray(0, bytes.indexOf('\r\n\r\n'));
    expect(head(cut).equals(head(raw))).toBe(true);
  });

  it('finds parts nested in related and alternative parts, and in an attached message sent inline', async () => {
    const inner = await build({
      from: 'c@example.org',
      to: 'd@example.org',
      subject: 'Inner',
      text: 'inner body',
      attachments: [{ filename: 'inner.exe', content: EXE, contentType: 'application/x-msdownload' }],
    });
    const raw = await build({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'Nested',
      text: 'outer',
      html: '<p>outer <img src="cid:logo@x"></p>',
      attachments: [
        { filename: 'logo.png', content: Buffer.alloc(64, 1), contentType: 'image/png', cid: 'logo@x' },
        { filename: 'fwd.eml', content: inner, contentType: 'message/rfc822', contentDisposition: 'inline' },
        { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
      ],
    });
    const parsed = await parse(raw);
    expect(parsed.attachments.map((attachment) => attachment.filename)).toEqual([
      'logo.png',
      'inner.exe',
      'report.pdf',
    ]);
    const cut = (await cutNamed(raw, ['logo.png', 'inner.exe']))!;
    const again = await parse(cut);
    expect(again.attachments.map((attachment) => attachment.filename)).toEqual(['report.pdf']);
    expect(again.attachments[0]!.hash).toBe(sha256(PDF));
  });

  it('removes an attached message whole, and a message that is one attachment keeps its header fields', async () => {
    const inner = await build({ from: 'c@example.org', to: 'd@example.org', subject: 'Inner', text: 'secret inner' });
    const raw = await build({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'Forward',
      text: 'see attached',
      attachments: [
        { filename: 'fwd.eml', content: inner, contentType: 'message/rfc822', contentDisposition: 'attachment' },
      ],
    });
    const cut = (await cutNamed(raw, ['fwd.eml']))!;
    expect(cut.toString()).not.toContain('secret inner');
    expect((await parse(cut)).attachments).toEqual([]);

    const single = Buffer.from(
      'From: a@example.org\r\nTo: b@example.org\r\nSubject: Only a file\r\nMIME-Version: 1.0\r\n' +
        `Content-Type: application/x-msdownload; name=setup.exe\r\nContent-Transfer-Encoding: base64\r\n\r\n${EXE.toString('base64')}\r\n`,
    );
    const alone = (await cutNamed(single, ['setup.exe']))!;
    const parsed = await parse(alone);
    expect(parsed.subject).toBe('Only a file');
    expect(parsed.attachments).toEqual([]);
    expect(parsed.searchText).toContain('removed setup.exe');
  });

  it('cuts quoted-printable and unencoded parts, and the removed one of two with the same bytes', async () => {
    const csv = Buffer.from('name,value\r\nà,1\r\n');
    const raw = await build({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'Same bytes',
      text: 'hello',
      attachments: [
        { filename: 'data.csv', content: csv, contentType: 'text/csv', contentTransferEncoding: 'quoted-printable' },
        { filename: 'notes.txt', content: 'plain notes\n', contentType: 'text/plain', contentTransferEncoding: '7bit' },
        { filename: 'a.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'b.pdf', content: PDF, contentType: 'application/pdf' },
      ],
    });
    const cut = (await cutNamed(raw, ['data.csv', 'notes.txt', 'b.pdf']))!;
    const again = await parse(cut);
    expect(again.attachments.map((attachment) => attachment.filename)).toEqual(['a.pdf']);
  });

  it('says so when a part to cut is not in the message, or lies deeper than it looks', async () => {
    const raw = await build({ from: 'a@example.org', to: 'b@example.org', subject: 'x', text: 'y' });
    expect(cutParts(raw, [{ hash: sha256(EXE), size: EXE.length, note: 'gone' }])).toBeUndefined();
    expect(cutParts(raw, [{ hash: sha256(EXE), size: EXE.length, note: undefined }])).toBe(raw);

    // Nested one level deeper than the walk goes.
    let entity = `Content-Type: application/x-msdownload; name=deep.exe\r\nContent-Disposition: attachment; filename=deep.exe\r\nContent-Transfer-Encoding: base64\r\n\r\n${EXE.toString('base64')}`;
    for (let level = 0; level <= MAX_DEPTH; level++)
      entity = `Content-Type: multipart/mixed; boundary=b${level}\r\n\r\n--b${level}\r\n${entity}\r\n--b${level}--`;
    const deep = Buffer.from(`From: a@example.org\r\nSubject: deep\r\n${entity}\r\n`);
    const parsed = await parse(deep);
    expect(parsed.attachments.map((attachment) => attachment.filename)).toEqual(['deep.exe']);
    expect(await cutNamed(deep, ['deep.exe'])).toBeUndefined();
  });

  it('reads a hostile shape in bounded work: 5,000 empty parts and a long run of false delimiters', async () => {
    const parts = Array.from({ length: 5000 }, () => '--h\r\nContent-Type: text/plain\r\n\r\nx\r\n').join('');
    const hostile = Buffer.from(
      `From: a@example.org\r\nContent-Type: multipart/mixed; boundary=h\r\n\r\n${'x--h'.repeat(200_000)}\r\n${parts}--h--\r\n`,
    );
    expect(cutParts(hostile, [{ hash: sha256(EXE), size: EXE.length, note: 'gone' }])).toBeUndefined();
  });
});

describe('policyRaw', () => {
  it('names the removed attachment, its type, size, reason and the policy in the note', async () => {
    const raw = await build({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'Files',
      text: 'Two files',
      attachments: [
        { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'setup\r\n--evil.exe', content: EXE, contentType: 'application/x-msdownload' },
      ],
    });
    const parsed = await parse(raw);
    const { keep, removed } = decideAttachments(
      { limit_attachment_allowed_types: ['application/pdf'] },
      parsed.attachments.map((attachment) => ({
        filename: attachment.filename,
        contentType: attachment.contentType,
        size: attachment.content.length,
      })),
    );
    const stored = await policyRaw(parser, raw, parsed, { policyId: 'policy_1', keep, removed, unchecked: false });
    const again = await parse(stored);
    expect(again.attachments.map((attachment) => attachment.filename)).toEqual(['report.pdf']);
    expect(again.searchText).toContain(
      `"setup --evil.exe" (application/x-msdownload, 900 bytes): type not allowed (limit_attachment_allowed_types)`,
    );
    expect(again.searchText).toContain('policy policy_1');

    // Nothing found (here: a hash that is not there) keeps the header fields and a note only.
    const blind = await policyRaw(
      parser,
      raw,
      { ...parsed, attachments: parsed.attachments.map((a) => ({ ...a, hash: sha256(Buffer.from(a.hash)) })) },
      {
        policyId: 'policy_1',
        keep,
        removed,
        unchecked: false,
      },
    );
    const withheld = await parse(blind);
    expect(withheld.subject).toBe('Files');
    expect(withheld.attachments).toEqual([]);
    expect(withheld.searchText).toContain('could not be cut out');
    expect(blind.toString()).not.toContain(PDF.toString('base64').slice(0, 60));
    expect(withBodyReplaced(raw, 'note').toString()).toContain('Subject: Files');

    // A message that did not parse, under a policy that limits attachments: nothing of its body was checked, none kept.
    const unchecked = await policyRaw(
      parser,
      raw,
      { ...parsed, attachments: [] },
      { policyId: 'policy_1', keep: [], removed: [], unchecked: true },
    );
    const header = await parse(unchecked);
    expect(header.subject).toBe('Files');
    expect(header.attachments).toEqual([]);
    expect(header.searchText).toContain('could not be parsed');
    expect(unchecked.toString()).not.toContain(EXE.toString('base64').slice(0, 60));
  });
});
