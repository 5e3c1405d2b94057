/**
 * The shortcuts of the authentication stage (src/mail/stages/authentication.ts) give what the long way gives: DKIM of
 * a message with no signature field reads its header only, with mailauth's own verifier steps, and must answer
 * exactly as mailauth's `dkimVerify` streaming the whole message does.
 */
import { dkimVerify, type DNSResolver } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../../src/index.js';
import { verifyDkim } from '../../../src/mail/stages/authentication.js';
import { dnsQuery } from '../../../src/mail/stages/dns-query.js';
import { fakeDns } from '../../helpers/dns.js';

const BODY = 'Hello,\r\n\r\nA body of a few lines.\r\n-- \r\nsomeone\r\n';

/** Messages with no signature field, in the shapes senders send. */
const UNSIGNED: Record<string, string> = {
  'CRLF line breaks': `From: Someone <someone@example.org>\r\nTo: agent@here.test\r\nSubject: plain\r\n\r\n${BODY}`,
  'bare LF line breaks': `From: someone@example.org\nTo: agent@here.test\nSubject: plain\n\nHello\nthere\n`,
  'a header that ends in LF then CRLF': `From: someone@example.org\nSubject: mixed\n\r\nbody\r\n`,
  'a folded From with a quoted comma in the name': `Subject: folded\r\nFrom: "Doe, Jane"\r\n <jane@example.org>\r\n\r\n${BODY}`,
  'two From addresses': `From: a@example.org, b@example.net\r\nSubject: two\r\n\r\n${BODY}`,
  'two From fields': `From: a@example.org\r\nFrom: b@example.net\r\nSubject: two fields\r\n\r\n${BODY}`,
  'no From, a Return-Path': `Return-Path: <bounce@example.org>\r\nSubject: no from\r\n\r\n${BODY}`,
  'a signature named inside another field': `From: someone@example.org\r\nX-Note: DKIM-Signature: not a field\r\n\r\n${BODY}`,
  'an ARC-Authentication-Results field without a seal': `ARC-Authentication-Results: i=1; mx.example.net; spf=pass\r\nFrom: someone@example.org\r\n\r\n${BODY}`,
  'a blank first line': `\r\nFrom: someone@example.org\r\n\r\n${BODY}`,
  'a body with lines that look like fields': `From: someone@example.org\r\nSubject: quoted\r\n\r\nFrom: intruder@evil.test\r\nDKIM-Signature: v=1; d=evil.test\r\n\r\n`,
  'a body after LF then CRLF with a From line': `From: someone@example.org\n\r\nFrom: intruder@evil.test\r\n`,
  'no body': 'From: someone@example.org\r\nSubject: header only\r\n',
  'a header with an 8-bit name': `From: =?utf-8?q?J=C3=BCrgen?= <j@example.org>\r\nSubject: Gr\u00fc\u00dfe\r\n\r\n${BODY}`,
};

/** What a DKIM result says, with the ARC data `arc()` reads next (not enumerable, so compared on its own). */
async function outcome(verify: () => Promise<Awaited<ReturnType<typeof dkimVerify>>>): Promise<unknown> {
  try {
    const result = await verify();
    return { result: { ...result }, arc: (result as { arc?: unknown }).arc };
  } catch (error) {
    return { rejected: String(error) };
  }
}

describe('DKIM of a message with no signature field', () => {
  const resolver = dnsQuery(fakeDns()) as unknown as DNSResolver;

  for (const [name, text] of Object.entries(UNSIGNED)) {
    for (const sender of ['envelope@example.org', undefined]) {
      it(`answers as dkimVerify does: ${name}, ${sender ? 'with' : 'without'} a MAIL FROM`, async () => {
        const raw = Buffer.from(text, 'utf8');
        const options = { resolver, sender, minBitLength: 1024 };
        const long = await outcome(() => dkimVerify(raw, options as Parameters<typeof dkimVerify>[1]));
        expect(await outcome(() => verifyDkim(raw, options))).toEqual(long);
      });
    }
  }

  it('reports none and the From addresses DMARC needs', async () => {
    const result = await verifyDkim(Buffer.from(UNSIGNED['two From addresses']!), {
      resolver,
      sender: undefined,
      minBitLength: 1024,
    });
    expect(result.headerFrom).toEqual(['a@example.org', 'b@example.net']);
    expect(result.results).toEqual([
      { status: { result: 'none', comment: 'message not signed' }, info: 'dkim=none (message not signed)' },
    ]);
  });

  it('still verifies a signed message whole: a signature whose body hash does not match is not passed', async () => {
    const signed = Buffer.from(
      `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=sel; h=from:subject; bh=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=; b=AAAA\r\nFrom: someone@example.org\r\nSubject: signed\r\n\r\n${BODY}`,
    );
    const options = { resolver, sender: 'someone@example.org', minBitLength: 1024 };
    const result = await verifyDkim(signed, options);
    expect(result.results?.[0]?.status).toMatchObject({ result: 'neutral', comment: 'body hash did not verify' });
    expect(await outcome(() => verifyDkim(signed, options))).toEqual(
      await outcome(() => dkimVerify(signed, options as Parameters<typeof dkimVerify>[1])),
    );
  });
});

describe('SPF and DMARC results kept with the DNS cache', () => {
  const CLIENT = { address: '192.0.2.10', helo: 'mail.example.test' };
  const message = (from: string) => Buffer.from(`From: ${from}\r\nTo: agent@here.test\r\nSubject: kept\r\n\r\n${BODY}`);

  function setUp(ttlMs: number) {
    const dns = fakeDns();
    dns.txt.set('example.test', [['v=spf1 ip4:192.0.2.10 exists:%{l}._spf.example.test -all']]);
    dns.txt.set('_dmarc.example.test', [['v=DMARC1; p=reject']]);
    return { dns, authenticate: createAuthenticator({ dns, authservId: 'mx.here.test', cacheTtlMs: ttlMs }) };
  }

  it('keeps each result for its own inputs: client IP, HELO name and the whole MAIL FROM (SPF macros read the local part)', async () => {
    const { dns, authenticate } = setUp(60_000);
    dns.hosts.set('alice._spf.example.test', ['127.0.0.2']);
    const elsewhere = { address: '198.51.100.20', helo: 'other.example.net' };
    for (let round = 0; round < 2; round++) {
      const pass = await authenticate({
        raw: message('alice@example.test'),
        mailFrom: 'alice@example.test',
        client: CLIENT,
      });
      expect(pass.spf).toEqual({ result: 'pass', domain: 'example.test' });
      expect(pass.dmarc).toEqual({ result: 'pass', domain: 'example.test', policy: 'reject' });
      // Another client for the same sender: SPF by the macro (alice exists), DMARC aligned through it.
      expect(
        (await authenticate({ raw: message('alice@example.test'), mailFrom: 'alice@example.test', client: elsewhere }))
          .spf,
      ).toEqual({ result: 'pass', domain: 'example.test' });
      // Bob from outside, with the same From field: the macro finds no record for bob, so SPF fails, and DMARC with it.
      const fail = await authenticate({
        raw: message('alice@example.test'),
        mailFrom: 'bob@example.test',
        client: elsewhere,
      });
      expect(fail.spf).toEqual({ result: 'fail', domain: 'example.test' });
      expect(fail.dmarc).toEqual({ result: 'fail', domain: 'example.test', policy: 'reject' });
      expect(fail.header).toContain('spf=fail');
      expect(fail.header).toContain('dmarc=fail');
      // Bob from the listed IP passes.
      expect(
        (await authenticate({ raw: message('bob@example.test'), mailFrom: 'bob@example.test', client: CLIENT })).spf
          ?.result,
      ).toBe('pass');
    }
  });

  it('never keeps a temporary failure: the next message is checked again', async () => {
    const { dns, authenticate } = setUp(60_000);
    dns.failing.add('example.test');
    dns.failing.add('_dmarc.example.test');
    const during = await authenticate({
      raw: message('carol@example.test'),
      mailFrom: 'carol@example.test',
      client: CLIENT,
    });
    expect(during.spf?.result).toBe('temperror');
    expect(during.dmarc?.result).toBe('temperror');
    dns.failing.clear();
    const after = await authenticate({
      raw: message('carol@example.test'),
      mailFrom: 'carol@example.test',
      client: CLIENT,
    });
    expect(after.spf).toEqual({ result: 'pass', domain: 'example.test' });
    expect(after.dmarc).toEqual({ result: 'pass', domain: 'example.test', policy: 'reject' });
  });

  it('keeps nothing with a TTL of 0: a changed record is seen by the next message', async () => {
    const { dns, authenticate } = setUp(0);
    expect(
      (await authenticate({ raw: message('dave@example.test'), mailFrom: 'dave@example.test', client: CLIENT })).spf
        ?.result,
    ).toBe('pass');
    dns.txt.set('example.test', [['v=spf1 -all']]);
    dns.txt.set('_dmarc.example.test', [['v=DMARC1; p=quarantine']]);
    const changed = await authenticate({
      raw: message('dave@example.test'),
      mailFrom: 'dave@example.test',
      client: CLIENT,
    });
    expect(changed.spf?.result).toBe('fail');
    expect(changed.dmarc).toEqual({ result: 'fail', domain: 'example.test', policy: 'quarantine' });
  });

  it('sees a changed record once the TTL has passed', async () => {
    const { dns, authenticate } = setUp(50);
    expect(
      (await authenticate({ raw: message('erin@example.test'), mailFrom: 'erin@example.test', client: CLIENT })).spf
        ?.result,
    ).toBe('pass');
    dns.txt.set('example.test', [['v=spf1 -all']]);
    await new Promise((done) => setTimeout(done, 80));
    expect(
      (await authenticate({ raw: message('erin@example.test'), mailFrom: 'erin@example.test', client: CLIENT })).spf
        ?.result,
    ).toBe('fail');
  });
});
