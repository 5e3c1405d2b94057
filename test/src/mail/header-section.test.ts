/**
 * The header-section limits and linear readers (src/mail/header-section.ts, and the header reader the DKIM check uses
 * in src/mail/stages/authentication.ts): what they find, what they cut, and that the DKIM check still answers exactly
 * as mailauth's own `dkimVerify` does, now for signed messages too (its header reader was quadratic).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { dkimSign, dkimVerify, type DNSResolver } from 'mailauth';
import { describe, expect, it } from 'vitest';
import {
  headerSectionBytes,
  headerSectionEnd,
  headerSectionTooLarge,
  limitHeaderSection,
} from '../../../src/mail/header-section.js';
import { MAX_DKIM_SIGNATURES, parseHeaderFields, verifyDkim } from '../../../src/mail/stages/authentication.js';
import { dnsQuery } from '../../../src/mail/stages/dns-query.js';
import { fakeDns } from '../../helpers/dns.js';

const { parseHeaders } = createRequire(import.meta.url)('mailauth/lib/tools.js') as {
  parseHeaders(buffer: Buffer): unknown;
};

describe('header section', () => {
  it('finds the end of the header section with CRLF, LF and mixed line breaks', () => {
    expect(headerSectionEnd(Buffer.from('A: 1\r\nB: 2\r\n\r\nbody'))).toBe(11);
    expect(headerSectionBytes(Buffer.from('A: 1\r\nB: 2\r\n\r\nbody'))).toBe(10);
    expect(headerSectionBytes(Buffer.from('A: 1\nB: 2\n\nbody'))).toBe(9);
    expect(headerSectionBytes(Buffer.from('A: 1\nB: 2\n\r\nbody'))).toBe(9);
    expect(headerSectionBytes(Buffer.from('\r\nbody'))).toBe(0);
    expect(headerSectionEnd(Buffer.from('A: 1\r\nB: 2\r\n'))).toBe(-1);
    expect(headerSectionBytes(Buffer.from('A: 1\r\nB: 2\r\n'))).toBe(12);
  });

  it('knows a header section over the limit from its first bytes alone', () => {
    const header = `X-Fold: a\r\n${' b\r\n'.repeat(1000)}`;
    const message = Buffer.from(`${header}\r\n${'x'.repeat(100_000)}`);
    const size = headerSectionBytes(message);
    expect(size).toBe(header.length - 2);
    expect(headerSectionTooLarge(message, size)).toBe(false);
    expect(headerSectionTooLarge(message, size - 1)).toBe(true);
    expect(headerSectionTooLarge(Buffer.from('A: 1\r\n\r\n'), 3)).toBe(true);
    expect(headerSectionTooLarge(Buffer.from('A: 1\r\n\r\n'), 4)).toBe(false);
    // No empty line at all: the whole message is header.
    expect(headerSectionTooLarge(Buffer.from('A: 1\r\n'.repeat(100)), 599)).toBe(true);
  });

  it('discards the fields past the limit, whole, and keeps the body', () => {
    const message = Buffer.from(`Subject: kept\r\nX-Long: a\r\n b\r\n c\r\nX-Next: gone\r\n\r\nthe body\r\n`);
    const { raw, discardedBytes } = limitHeaderSection(message, 34);
    expect(raw.toString()).toBe('Subject: kept\r\nX-Long: a\r\n b\r\n c\r\n\r\nthe body\r\n');
    expect(discardedBytes).toBe(14);
    // A limit inside a folded field drops the whole field.
    expect(limitHeaderSection(message, 33).raw.toString()).toBe('Subject: kept\r\n\r\nthe body\r\n');
    expect(limitHeaderSection(message, 1000).raw).toBe(message);
    expect(limitHeaderSection(Buffer.from('X: 1\nY: 2\nZ: 3\n'), 8).raw.toString()).toBe('X: 1\n\r\n');
  });
});

describe("the DKIM check's header reader", () => {
  const line = fc.oneof(
    fc.constantFrom(
      'From: a@example.org',
      'Subject: hi',
      ' folded',
      '\tfolded',
      'no colon',
      ':empty name',
      'X-A:b',
      ' ',
      '',
      'To : x@y',
    ),
    fc.string({ maxLength: 30 }).map((text) => text.replace(/[\r\n]/g, '')),
  );
  it('gives what mailauth parseHeaders gives, for any header', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.constantFrom('\r\n', '\n'),
        fc.constantFrom('', '\r\n', '\n', '\r\n\r\n'),
        (lines, breakWith, trailer) => {
          const section = Buffer.from(lines.join(breakWith) + trailer, 'latin1');
          expect(parseHeaderFields(section)).toEqual(parseHeaders(section));
        },
      ),
      { numRuns: 500, seed: 33 },
    );
  });

  it('reads a field folded over 100,000 lines whole (mailauth took 25 s on it; the scaling watchdog measures ours)', () => {
    const section = Buffer.from(`X-Fold: a\r\n${' b\r\n'.repeat(100_000)}\r\n`);
    const { parsed } = parseHeaderFields(section);
    expect(parsed).toHaveLength(1);
    expect(parsed[0]!.line.length).toBe(section.length - 4);
  });
});

describe('DKIM of a signed message', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dns = fakeDns();
  dns.txt.set('sel._domainkey.example.org', [
    [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
  ]);
  const resolver = dnsQuery(dns) as unknown as DNSResolver;
  // One time for both verifiers: a signature stamped in the next second would be "from the future" to one of them.
  const options = {
    resolver,
    sender: 'someone@example.org',
    minBitLength: 1024,
    curTime: new Date(Date.now() + 60_000),
  };

  async function signed(message: string, canonicalization = 'relaxed/relaxed'): Promise<Buffer> {
    const result = await dkimSign(message, {
      canonicalization,
      signatureData: [
        {
          signingDomain: 'example.org',
          selector: 'sel',
          privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
        },
      ],
    } as never);
    return Buffer.from(result.signatures + message);
  }
  const answers = async (raw: Buffer) => {
    const ours = await verifyDkim(raw, options);
    const theirs = await dkimVerify(raw, options);
    expect({ ...ours }).toEqual({ ...theirs });
    expect((ours as { arc?: unknown }).arc).toEqual((theirs as { arc?: unknown }).arc);
    return ours;
  };

  for (const canonicalization of ['relaxed/relaxed', 'simple/simple', 'relaxed/simple']) {
    it(`passes and fails as dkimVerify does (${canonicalization})`, async () => {
      const raw = await signed(
        'From: someone@example.org\r\nTo: agent@here.test\r\nSubject: signed\r\n\r\nHello,\r\nthere.\r\n',
        canonicalization,
      );
      expect((await answers(raw)).results?.[0]?.status.result).toBe('pass');
      // The body altered after signing.
      const altered = Buffer.from(raw.toString().replace('there.', 'where?'));
      expect((await answers(altered)).results?.[0]?.status.result).not.toBe('pass');
      // A signed field altered.
      await answers(Buffer.from(raw.toString().replace('Subject: signed', 'Subject: changed')));
    });
  }

  it('hashes a body with bare LF line breaks and one of several slices as dkimVerify does', async () => {
    const body = `${'a line of text\n'.repeat(100_000)}\r\n\n`;
    const raw = await signed(`From: someone@example.org\nSubject: big\n\n${body}`);
    expect((await answers(raw)).results?.[0]?.status.result).toBe('pass');
  });

  it(`verifies at most ${MAX_DKIM_SIGNATURES} DKIM signatures of a message`, async () => {
    const one = await signed('From: someone@example.org\r\nSubject: many\r\n\r\nbody\r\n');
    const signature = one.toString().slice(0, one.toString().indexOf('From:'));
    const raw = Buffer.from(signature.repeat(50) + one.toString().slice(signature.length));
    const result = await verifyDkim(raw, options);
    expect(result.results).toHaveLength(MAX_DKIM_SIGNATURES);
    expect(result.results?.every((row) => row.status.result === 'pass')).toBe(true);
  });

  it('does not verify a signature over more than 256 fields', async () => {
    const many = Array.from({ length: 300 }, (_, index) => `x-${index}`).join(':');
    const raw = Buffer.from(
      `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=sel; h=from:${many}; bh=AAAA; b=AAAA\r\nFrom: someone@example.org\r\n\r\nbody\r\n`,
    );
    const result = await verifyDkim(raw, options);
    expect(result.results).toEqual([
      { status: { result: 'none', comment: 'message not signed' }, info: 'dkim=none (message not signed)' },
    ]);
  });
});
