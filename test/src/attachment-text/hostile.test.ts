/**
 * Hostile attachments: each refusal names its reason (zip_bomb, unreadable, encrypted, unsupported, too_large,
 * timeout), nothing crashes the process, the main thread stays responsive while a worker reads, and the reader goes
 * on working after a thread was stopped.
 */
import { readFileSync } from 'node:fs';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AttachmentTextError,
  createAttachmentTextReader,
  type AttachmentTextReader,
} from '../../../src/attachment-text/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/agent/attachments/${name}`, import.meta.url));

let reader: AttachmentTextReader;
beforeAll(async () => {
  reader = createAttachmentTextReader({ workers: 1 });
  await reader.warmUp();
}, 60_000);
afterAll(() => reader.close());

const DOCX_TYPES = `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`;

/** Sets the declared uncompressed size of `name` in a zip's local header and central directory. */
function lieAboutSize(zip: Uint8Array, name: string, size: number): Buffer {
  const bytes = Buffer.from(zip);
  const encoded = Buffer.from(name);
  for (let at = 0; at < bytes.length - 46; at++) {
    const signature = bytes.readUInt32LE(at);
    if (signature === 0x04034b50 && bytes.subarray(at + 30, at + 30 + encoded.length).equals(encoded))
      bytes.writeUInt32LE(size, at + 22);
    if (signature === 0x02014b50 && bytes.subarray(at + 46, at + 46 + encoded.length).equals(encoded))
      bytes.writeUInt32LE(size, at + 24);
  }
  return bytes;
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'read';
  } catch (error) {
    expect(error).toBeInstanceOf(AttachmentTextError);
    return (error as AttachmentTextError).reason;
  }
}

describe('refusals', () => {
  it('refuses the DOCX zip bomb before inflating it', async () => {
    const started = performance.now();
    const error = await reader
      .extract(fixture('contract-bomb.docx'), { filename: 'contract.docx' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'zip_bomb', code: 'unprocessable', type: 'attachment_zip_bomb' });
    expect((error as Error).message).toContain('inflates 1021 times (limit 200)');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses an entry that lies about its size while it inflates', async () => {
    const zip = zipSync({
      '[Content_Types].xml': strToU8(DOCX_TYPES),
      'word/document.xml': strToU8(`<w:document><w:body>${'<w:p/>'.repeat(2_000_000)}</w:body></w:document>`),
    });
    const lying = lieAboutSize(zip, 'word/document.xml', 4_000);
    const error = await reader.extract(lying, { filename: 'x.docx' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'zip_bomb' });
    expect((error as Error).message).toContain('inflates beyond its declared 4000 bytes');
  });

  it('refuses a zip of too many entries', async () => {
    const files: Record<string, Uint8Array> = { 'word/document.xml': strToU8('<w:document/>') };
    for (let index = 0; index < 10_001; index++) files[`word/media/e${index}.xml`] = new Uint8Array(0);
    expect(await reasonOf(reader.extract(zipSync(files, { level: 0 }), { filename: 'many.docx' }))).toBe('zip_bomb');
  });

  it('answers unreadable for the XLSX cut short and the PDF cut short', async () => {
    expect(await reasonOf(reader.extract(fixture('budget-malformed.xlsx'), { filename: 'budget.xlsx' }))).toBe(
      'unreadable',
    );
    expect(await reasonOf(reader.extract(fixture('invoice-truncated.pdf'), { filename: 'invoice.pdf' }))).toBe(
      'unreadable',
    );
  });

  it('answers unreadable for XML nested deeper than the bound, quickly', async () => {
    const deep = `<w:document><w:body>${'<w:sdt>'.repeat(60_000)}${'</w:sdt>'.repeat(60_000)}</w:body></w:document>`;
    const zip = zipSync({ '[Content_Types].xml': strToU8(DOCX_TYPES), 'word/document.xml': strToU8(deep) });
    const started = performance.now();
    const error = await reader.extract(zip, { filename: 'deep.docx' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'unreadable' });
    expect((error as Error).message).toContain('nests deeper than 256 elements');
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('answers encrypted for the PDF with a password, and for an encrypted Office file', async () => {
    const error = await reader.extract(fixture('invoice-encrypted.pdf')).catch((e: unknown) => e);
    expect(error).toMatchObject({
      reason: 'encrypted',
      message: 'The PDF is encrypted: it needs a password to be read.',
    });
    // An encrypted DOCX is an OLE compound file holding an EncryptionInfo stream.
    const ole = Buffer.alloc(4096);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
    Buffer.from('EncryptionInfo', 'utf16le').copy(ole, 1024);
    expect(await reasonOf(reader.extract(ole, { filename: 'contract.docx' }))).toBe('encrypted');
  });

  it('answers unsupported for a legacy binary Office file, and encrypted for an encrypted zip entry', async () => {
    const ole = Buffer.alloc(4096);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
    Buffer.from('WordDocument', 'utf16le').copy(ole, 1024);
    expect(await reasonOf(reader.extract(ole, { filename: 'old.doc', contentType: 'application/msword' }))).toBe(
      'unsupported',
    );
    const zip = Buffer.from(fixture('contract.docx'));
    // Set the "encrypted" flag of every entry, in the local headers and the directory.
    for (let at = 0; at < zip.length - 4; at++) {
      const signature = zip.readUInt32LE(at);
      if (signature === 0x04034b50) zip.writeUInt16LE(zip.readUInt16LE(at + 6) | 1, at + 6);
      if (signature === 0x02014b50) zip.writeUInt16LE(zip.readUInt16LE(at + 8) | 1, at + 8);
    }
    expect(await reasonOf(reader.extract(zip, { filename: 'contract.docx' }))).toBe('encrypted');
  });

  it('answers too_large for an attachment over the reader’s byte limit', async () => {
    const small = createAttachmentTextReader({ maxBytes: 1_000 });
    try {
      const error = await small.extract(fixture('invoice.pdf')).catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: 'too_large', code: 'unprocessable' });
    } finally {
      await small.close();
    }
  });

  it('reads an ODS whose repeat counts claim millions of cells in bounded time and output', async () => {
    const content = `<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet><table:table table:name="Big">${'<table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>'.repeat(50)}</table:table></office:spreadsheet></office:body></office:document-content>`;
    const zip = zipSync({
      mimetype: [strToU8('application/vnd.oasis.opendocument.spreadsheet'), { level: 0 }],
      'content.xml': strToU8(content),
    });
    const started = performance.now();
    const result = await reader.extract(zip, { filename: 'big.ods', maxRows: 200, maxColumns: 10, maxTokens: 100 });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result.metadata.sheets?.[0]).toMatchObject({ rows: 50 * 1_048_576, columns: 16_384, rowsShown: 200 });
    expect(result.metadata.characters).toBeLessThan(20_000);
  });
});

describe('deadline and responsiveness', () => {
  /** A CSV of about `megabytes` MB. */
  const bigCsv = (megabytes: number) => {
    const row = 'SO-100001,2025-01-02,"Fabrikam, Inc.",orders@fabrikam.example,79.19,open,rush delivery requested\n';
    return Buffer.from(
      `order_id,date,customer,email,amount,status,notes\n${row.repeat(Math.ceil((megabytes * 1e6) / row.length))}`,
    );
  };

  it('stops an extraction that overruns its deadline, answers timeout, and reads the next attachment', async () => {
    const started = performance.now();
    const error = await reader
      .extract(bigCsv(8), { filename: 'slow.csv', maxRows: 100_000, timeoutMs: 150 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'timeout', code: 'unprocessable' });
    expect(performance.now() - started).toBeLessThan(1_500);
    const next = await reader.extract(fixture('invoice.pdf'));
    expect(next.text).toContain('INV-2025-0417');
  }, 30_000);

  it('keeps the main thread responsive while a large attachment is read', async () => {
    // The machine running the suite may be busy (other processes share its cores), so the check is relative: a
    // timer every 5 ms keeps firing through a read of seconds, never held for a large part of it, where a read on
    // the main thread would hold it for the whole read.
    let longest = 0;
    let ticks = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    try {
      const result = await reader.extract(bigCsv(6), { filename: 'export.csv', maxRows: 100_000, maxTokens: 5_000 });
      expect(result.truncated).toBe(true);
      expect(result.metadata.characters).toBeGreaterThan(1_000_000);
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(300);
    expect(ticks).toBeGreaterThan(elapsed / 50);
    expect(longest).toBeLessThan(Math.max(250, elapsed / 4));
  }, 60_000);

  it('never crashes the process on random bytes declared as each format', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const kinds = ['x.pdf', 'x.docx', 'x.xlsx', 'x.pptx', 'x.ods', 'x.csv', 'x.html', 'x.ics', 'x.eml', 'x.png'];
    for (const name of kinds) {
      for (const prefix of [[], [0x25, 0x50, 0x44, 0x46, 0x2d], [0x50, 0x4b, 0x03, 0x04]]) {
        const bytes = Buffer.from([...prefix, ...Array.from({ length: 3000 }, () => Math.floor(random() * 256))]);
        const outcome = await reasonOf(reader.extract(bytes, { filename: name }));
        expect(['read', 'unreadable', 'unsupported', 'zip_bomb', 'encrypted']).toContain(outcome);
      }
    }
  }, 60_000);
});
