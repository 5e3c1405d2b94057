/**
 * Limits of the SMTP listener against mailbox enumeration and connection floods: a session that tries more than
 * AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS unknown mailboxes is refused (421) and closed, a client (an address) that
 * tried AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT in an hour is refused in every session, and a client holds at
 * most AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT connections at once. Real listener, raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKey, startInboundSmtp } from '../../src/mail/inbound-smtp.js';
import { createMailbox, eventually, rawSmtp, sendRaw, type RawSmtp } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'limits.agentpost.localhost';

function message(to: string, subject: string): string {
  return `From: sender@example.com\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nhello\r\n`;
}

/** Resolves true when the server closes the connection within `timeoutMs`. */
async function closedWithin(client: RawSmtp, timeoutMs = 3_000): Promise<boolean> {
  return Promise.race([
    client.closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs)),
  ]);
}

describe('SMTP listener: unknown recipients (mailbox enumeration)', () => {
  let service: TestService;
  let grantId: string;
  const email = `inbox@${DOMAIN}`;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, email);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers 550 to the first 3 unknown mailboxes, then 421 to any recipient, known ones too, and closes the session', async () => {
    const client = await rawSmtp(service.smtpPort);
    await client.command('EHLO prober.example');
    expect((await client.command('MAIL FROM:<prober@example.com>')).code).toBe(250);
    for (const name of ['alice', 'bob', 'carol']) {
      expect((await client.command(`RCPT TO:<${name}@${DOMAIN}>`)).text).toMatch(/^550 5\.1\.1 /);
    }
    // The known mailbox is not checked: a 250 here would still tell that it exists.
    const refused = await client.command(`RCPT TO:<${email}>`);
    expect(refused.code).toBe(421);
    expect(refused.text).toMatch(/^421 4\.7\.0 Too many unknown recipients/);
    expect(await closedWithin(client)).toBe(true);

    // A fresh session delivers to the known mailbox.
    expect(
      (await sendRaw(service.smtpPort, 'sender@example.com', [email], message(email, 'After the prober'))).code,
    ).toBe(250);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { subject: 'After the prober' } })).data,
    ).toHaveLength(1);
  });

  it('counts across the transactions of a session (RSET does not reset it)', async () => {
    const client = await rawSmtp(service.smtpPort);
    await client.command('EHLO prober.example');
    await client.command('MAIL FROM:<prober@example.com>');
    expect((await client.command(`RCPT TO:<dave@${DOMAIN}>`)).code).toBe(550);
    expect((await client.command(`RCPT TO:<erin@${DOMAIN}>`)).code).toBe(550);
    expect((await client.command('RSET')).code).toBe(250);
    await client.command('MAIL FROM:<prober@example.com>');
    expect((await client.command(`RCPT TO:<frank@${DOMAIN}>`)).code).toBe(550);
    expect((await client.command(`RCPT TO:<grace@${DOMAIN}>`)).code).toBe(421);
    expect(await closedWithin(client)).toBe(true);
  });

  it('does not count relay refusals (they tell nothing about mailboxes); a known recipient after them is accepted', async () => {
    const client = await rawSmtp(service.smtpPort);
    await client.command('EHLO sender.example');
    await client.command('MAIL FROM:<sender@example.com>');
    for (const address of ['a@gmail.com', 'b@example.org', 'c@example.net', 'd@example.com', `x%gmail.com@${DOMAIN}`]) {
      expect((await client.command(`RCPT TO:<${address}>`)).text).toMatch(/^550 5\.7\.1 /);
    }
    expect((await client.command(`RCPT TO:<nobody@${DOMAIN}>`)).text).toMatch(/^550 5\.1\.1 /);
    expect((await client.command(`RCPT TO:<${email}>`)).code).toBe(250);
    client.end();
  });

  it('AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS sets the limit', async () => {
    const strict = await startTestService({ env: { AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS: '1' } });
    try {
      await createMailbox(strict, email);
      const client = await rawSmtp(strict.smtpPort);
      await client.command('EHLO prober.example');
      await client.command('MAIL FROM:<prober@example.com>');
      expect((await client.command(`RCPT TO:<nobody@${DOMAIN}>`)).code).toBe(550);
      expect((await client.command(`RCPT TO:<nobody-else@${DOMAIN}>`)).code).toBe(421);
      expect(await closedWithin(client)).toBe(true);
    } finally {
      await strict.close();
    }
  });
});

describe('SMTP listener: unknown recipients per client, over all its sessions', () => {
  let service: TestService;
  const email = `inbox@${DOMAIN}`;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT: '5' } });
    await createMailbox(service, email);
  });
  afterAll(async () => {
    await service?.close();
  });

  /** One session from `localAddress`: RCPT TO each address in turn, until one is answered 421. */
  async function probe(localAddress: string, addresses: string[], port = service.smtpPort) {
    const client = await rawSmtp(port, { localAddress });
    await client.command('EHLO prober.example');
    await client.command('MAIL FROM:<prober@example.com>');
    const replies: string[] = [];
    for (const address of addresses) {
      const reply = await client.command(`RCPT TO:<${address}>`);
      replies.push(reply.text);
      if (reply.code === 421) {
        expect(await closedWithin(client)).toBe(true);
        return replies;
      }
    }
    client.end();
    return replies;
  }

  it('reconnecting does not reset the count: past AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT the client gets 421 in every session; other clients are served', async () => {
    const unknown = (count: number, prefix: string) =>
      Array.from({ length: count }, (_, index) => `${prefix}${index}@${DOMAIN}`);
    // Session 1: 3 unknown (the per-session limit), then 421.
    const first = await probe('127.0.3.1', [...unknown(3, 'a'), email]);
    expect(first.at(-1)).toMatch(/^421 4\.7\.0 Too many unknown recipients in this session/);
    // Session 2: 2 more reach the client's 5; the next recipient, even a known one, gets 421.
    const second = await probe('127.0.3.1', [...unknown(2, 'b'), email]);
    expect(second.slice(0, 2).every((text) => text.startsWith('550 5.1.1'))).toBe(true);
    expect(second.at(-1)).toMatch(
      /^421 4\.7\.0 Too many unknown recipients from your address \(at most 5 in 60 minutes\)/,
    );
    // Session 3: the client is refused from its first recipient.
    expect(await probe('127.0.3.1', [email])).toEqual([
      expect.stringMatching(/^421 4\.7\.0 Too many unknown recipients from your address/),
    ]);
    // Another client delivers.
    expect((await probe('127.0.3.2', [email]))[0]).toMatch(/^250 /);
  });

  it('forgets a client once its window is over', async () => {
    const listener = await startInboundSmtp({
      inbound: service.core.mail.inbound,
      logger: service.core.deps.logger,
      host: '127.0.0.1',
      port: 0,
      maxUnknownRecipientsPerClient: 2,
      unknownRecipientsWindowMs: 500,
    });
    try {
      expect((await probe('127.0.3.3', [`x@${DOMAIN}`, `y@${DOMAIN}`, email], listener.port)).at(-1)).toMatch(
        /^421 4\.7\.0 Too many unknown recipients from your address/,
      );
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await probe('127.0.3.3', [email], listener.port))[0]).toMatch(/^250 /);
    } finally {
      await listener.close();
    }
  });
});

describe('SMTP listener: connections per client', () => {
  let service: TestService;
  const email = `inbox@${DOMAIN}`;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '3' } });
    await createMailbox(service, email);
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Connects from `localAddress` and returns the client with its greeting. */
  async function connectFrom(localAddress: string) {
    const client = await rawSmtp(service.smtpPort, { greeting: false, localAddress });
    return { client, greeting: await client.reply() };
  }

  it('answers 421 at the greeting beyond the cap and closes; other addresses are not affected; a freed slot is usable again', async () => {
    const held = await Promise.all(['127.0.2.1', '127.0.2.1', '127.0.2.1'].map(connectFrom));
    expect(held.map(({ greeting }) => greeting.code)).toEqual([220, 220, 220]);

    const extra = await connectFrom('127.0.2.1');
    expect(extra.greeting.code).toBe(421);
    expect(extra.greeting.text).toContain('Too many connections from your address (at most 3)');
    expect(await closedWithin(extra.client)).toBe(true);

    // Another client is served meanwhile, and delivers.
    const other = await connectFrom('127.0.2.2');
    expect(other.greeting.code).toBe(220);
    other.client.end();
    expect(
      (await sendRaw(service.smtpPort, 'sender@example.com', [email], message(email, 'Beside the crowd'))).code,
    ).toBe(250);

    // The held connections still work.
    expect((await held[0]!.client.command('EHLO held.example')).code).toBe(250);

    // Once one of them leaves, the client may connect again.
    held[0]!.client.end();
    await held[0]!.client.closed;
    const again = await eventually(async () => {
      const attempt = await connectFrom('127.0.2.1');
      if (attempt.greeting.code === 220) return attempt;
      attempt.client.end();
      return undefined;
    });
    expect((await again.client.command('EHLO again.example')).code).toBe(250);
    again.client.end();
    for (const { client } of held.slice(1)) client.end();
  });
});

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:DB8:1:3::1', '2001:db8:1:3::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s → %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});
