/**
 * Inbound stage 2 (src/mail/stages/authentication.ts): SPF, DKIM, DMARC and ARC through the injected resolver. The
 * DKIM case is real end to end: a message sent from one Agentpost domain to another is signed by the outbound
 * path with the domain's own key, its selector is published in the test's resolver, and the stored copy is checked.
 */
import { MessageFields } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, type Authenticator } from '../../src/index.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const SENDER_DOMAIN = 'sender.agentpost.localhost';
const SENDER = `agent@${SENDER_DOMAIN}`;
const RECEIVER = 'agent@receiver.agentpost.localhost';
/** The sending mail server, as the receiving side's SMTP session saw it. */
const CLIENT = { address: '203.0.113.7', helo: `mail.${SENDER_DOMAIN}` };

describe('the authentication stage', () => {
  let service: TestService;
  let authenticate: Authenticator;
  let signed: Buffer;

  beforeAll(async () => {
    service = await startTestService();
    authenticate = service.core.mail.stages.authenticator;
    const senderGrant = await createMailbox(service, SENDER);
    const receiverGrant = await createMailbox(service, RECEIVER);

    // The sender domain's DKIM key, made and published as an administrator would (domain info → TXT record).
    const domains = await request(service.url, 'GET', '/v3/admin/domains', { key: service.apiKey });
    const domainId = (domains.body.data as { id: string; domain_address: string }[]).find(
      (domain) => domain.domain_address === SENDER_DOMAIN,
    )!.id;
    const info = await request(service.url, 'POST', `/v3/admin/domains/${domainId}/info`, {
      key: service.apiKey,
      body: { type: 'dkim' },
    });
    const record = info.body.data.attempt.options as { host: string; value: string };
    service.dns.txt.set(record.host, [[record.value]]);

    await service.nylas.messages.send({
      identifier: senderGrant,
      requestBody: { to: [{ email: RECEIVER }], subject: 'Signed on the way out', body: 'The body that DKIM covers.' },
    });
    signed = await eventually(async () => {
      const listed = await service.nylas.messages.list({
        identifier: receiverGrant,
        queryParams: { fields: MessageFields.RAW_MIME },
      });
      const raw = listed.data[0]?.rawMime;
      return raw ? Buffer.from(raw, 'base64url') : undefined;
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('passes DKIM of mail signed by the outbound path with the domain key, and fails a byte-tampered copy', async () => {
    expect(signed.toString()).toMatch(/^DKIM-Signature: [^]*?\bd=sender\.agentpost\.localhost;/);
    const verdict = await authenticate({ raw: signed, mailFrom: SENDER, client: CLIENT });
    expect(verdict.dkim).toEqual([{ result: 'pass', domain: SENDER_DOMAIN, selector: 'agentpost' }]);
    expect(verdict.header).toMatch(
      /^Authentication-Results: [^;\r\n]+;\r\n dkim=pass header\.i=@sender\.agentpost\.localhost header\.s=agentpost /,
    );
    expect(verdict.header.startsWith(`Authentication-Results: ${service.config.mxHost};`)).toBe(true);
    expect(verdict.header).not.toMatch(/\r\n$/);

    const at = signed.indexOf('The body that DKIM covers.');
    expect(at).toBeGreaterThan(0);
    const tampered = Buffer.from(signed);
    tampered[at + 4] = 'B'.charCodeAt(0);
    const failed = await authenticate({ raw: tampered, mailFrom: SENDER, client: CLIENT });
    expect(failed.dkim).toEqual([{ result: 'fail', domain: SENDER_DOMAIN, selector: 'agentpost' }]);
    expect(failed.header).toContain('dkim=fail');
  });

  it('checks SPF of the client IP against the MAIL FROM domain', async () => {
    service.dns.txt.set(SENDER_DOMAIN, [['v=spf1 ip4:203.0.113.7 -all']]);
    const pass = await authenticate({ raw: signed, mailFrom: SENDER, client: CLIENT });
    expect(pass.spf).toEqual({ result: 'pass', domain: SENDER_DOMAIN });
    expect(pass.header).toContain('spf=pass');

    const fail = await authenticate({
      raw: signed,
      mailFrom: SENDER,
      client: { address: '198.51.100.9', helo: 'elsewhere.example.net' },
    });
    expect(fail.spf).toEqual({ result: 'fail', domain: SENDER_DOMAIN });
    expect(fail.header).toContain('spf=fail');

    // A bounce (empty MAIL FROM) is checked against the HELO name.
    service.dns.txt.set(CLIENT.helo, [['v=spf1 ip4:203.0.113.7 -all']]);
    const bounce = await authenticate({ raw: signed, mailFrom: '', client: CLIENT });
    expect(bounce.spf).toEqual({ result: 'pass', domain: CLIENT.helo });
  });

  it('evaluates DMARC of the From domain: aligned DKIM passes, a tampered copy from a foreign IP fails under the policy', async () => {
    service.dns.txt.set(`_dmarc.${SENDER_DOMAIN}`, [['v=DMARC1; p=reject']]);
    const pass = await authenticate({ raw: signed, mailFrom: SENDER, client: CLIENT });
    // The verdict names the organizational domain (RFC 7489 3.2), as mailauth reports it.
    expect(pass.dmarc).toEqual({ result: 'pass', domain: 'agentpost.localhost', policy: 'reject' });
    expect(pass.arc).toEqual({ result: 'none' });
    expect(pass.header).toContain('dmarc=pass');

    const tampered = Buffer.from(signed.toString().replace('The body that DKIM covers.', 'The body that DKIM covers!'));
    const fail = await authenticate({
      raw: tampered,
      mailFrom: SENDER,
      client: { address: '198.51.100.9', helo: 'elsewhere.example.net' },
    });
    expect(fail.dmarc).toEqual({ result: 'fail', domain: 'agentpost.localhost', policy: 'reject' });
    expect(fail.header).toContain('dmarc=fail');
  });

  it('reports DNS failures as temperror instead of rejecting', async () => {
    const failing = createAuthenticator({ dns: service.dns, authservId: 'mx.test.example' });
    service.dns.failing.add(`agentpost._domainkey.${SENDER_DOMAIN}`);
    service.dns.failing.add(SENDER_DOMAIN);
    try {
      const verdict = await failing({ raw: signed, mailFrom: SENDER, client: CLIENT });
      expect(verdict.dkim![0]!.result).toBe('temperror');
      expect(verdict.spf!.result).toBe('temperror');
      expect(verdict.header.startsWith('Authentication-Results: mx.test.example;')).toBe(true);
    } finally {
      service.dns.failing.clear();
    }
  });

  it('gives none for unsigned mail delivered locally (no SMTP client, no SPF)', async () => {
    const raw = Buffer.from(
      'From: someone@example.org\r\nTo: agent@receiver.agentpost.localhost\r\nSubject: plain\r\n\r\nhello\r\n',
    );
    const verdict = await authenticate({ raw, mailFrom: 'someone@example.org', client: undefined });
    expect(verdict.spf).toEqual({ result: 'none' });
    expect(verdict.dkim).toEqual([{ result: 'none' }]);
    expect(verdict.dmarc).toEqual({ result: 'none', domain: 'example.org' });
  });
});
