/**
 * The SMTP listener under bad input and faults: refused recipients, oversize data, a store that fails, a client
 * that resets during DATA, slow-drip and idle clients, thousands of idle sockets. Each time the server stays up,
 * nothing is half-stored, and a well-behaved client still gets 250.
 */
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailWriter, type MailWriter } from '../../storage/index.js';
import { startInboundSmtp, type InboundService, type InboundSmtpServer } from '../../src/index.js';
import { createInboundService, INGEST_PREPARE_MODULE } from '../../src/mail/inbound.js';
import { createMailStore } from '../../src/messages/mail-store.js';
import { fullCollection, liveBytes } from '../helpers/heap.js';
import { createMailbox, eventually, rawSmtp, sendRaw, smtpClient } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { storedCounts, writeLockProbe } from '../helpers/store.js';

const DOMAIN = 'faults.agentpost.localhost';
const MB = 1024 * 1024;

function message(to: string, subject: string, body = 'hello'): string {
  return `From: sender@example.com\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\n${body}\r\n`;
}

describe('SMTP listener: bad input and faults', () => {
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

  it('refuses non-hosted addresses, relay tricks (5.7.1) and unknown mailboxes (5.1.1); nothing is queued', async () => {
    const before = await storedCounts(service.core.deps.db);
    const client = await rawSmtp(service.smtpPort);
    const ehlo = await client.command('EHLO client.example');
    expect(ehlo.code).toBe(250);
    expect(ehlo.text).toContain(`SIZE ${40 * MB}`);
    expect(ehlo.text).not.toContain('STARTTLS');
    expect((await client.command('MAIL FROM:<sender@example.com>')).code).toBe(250);
    for (const address of [
      'someone@gmail.com',
      `user%gmail.com@${DOMAIN}`,
      `gmail.com!user@${DOMAIN}`,
      'postmaster@[127.0.0.1]',
    ]) {
      const reply = await client.command(`RCPT TO:<${address}>`);
      expect(reply.code, address).toBe(550);
      expect(reply.text, address).toMatch(/^550 5\.7\.1 /);
    }
    const unknown = await client.command(`RCPT TO:<nobody@${DOMAIN}>`);
    expect(unknown.text).toMatch(/^550 5\.1\.1 /);
    // No accepted recipient: DATA is refused, so nothing can be queued.
    expect((await client.command('DATA')).code).toBe(503);
    expect((await client.command('QUIT')).code).toBe(221);
    expect(await storedCounts(service.core.deps.db)).toEqual(before);

    // The same envelope with one good recipient delivers to it only.
    const mixed = await rawSmtp(service.smtpPort);
    await mixed.command('EHLO client.example');
    await mixed.command('MAIL FROM:<sender@example.com>');
    expect((await mixed.command('RCPT TO:<someone@gmail.com>')).code).toBe(550);
    expect((await mixed.command(`RCPT TO:<${email.toUpperCase()}>`)).code).toBe(250);
    expect((await mixed.command('DATA')).code).toBe(354);
    await mixed.write(message(email, 'Only for the hosted mailbox'));
    expect((await mixed.command('.')).code).toBe(250);
    mixed.end();
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { subject: 'Only for the hosted' } }))
        .data,
    ).toHaveLength(1);
  });

  /** Sends `total` bytes of DATA in 1 MB chunks of one reused buffer; returns the reply and the peak memory growth. */
  async function oversizeData(port: number, total: number) {
    const client = await rawSmtp(port);
    await client.command('EHLO client.example');
    expect((await client.command('MAIL FROM:<big@example.com>')).code).toBe(250);
    expect((await client.command(`RCPT TO:<${email}>`)).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    const line = Buffer.from(`${'A'.repeat(1022)}\r\n`);
    const chunk = Buffer.concat(Array.from({ length: 1024 }, () => line));
    // What the listener holds: the live heap and buffers (a full collection every 50 ms), not garbage awaiting one.
    const collect = fullCollection();
    const baseline = liveBytes(collect);
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, liveBytes(collect) - baseline);
    }, 50);
    await client.write(`Subject: too big\r\n\r\n`);
    for (let sent = 0; sent < total; sent += chunk.length) await client.write(chunk);
    const reply = await client.command('.', 60_000);
    clearInterval(sampler);
    console.log(`inbound-smtp-faults: ${total / MB} MB sent, live growth at most ${(peak / MB).toFixed(1)} MB`);
    return { client, reply, peak };
  }

  it('answers 552 at once to MAIL FROM with SIZE over the limit, and after the final dot to DATA twice the limit, storing nothing', async () => {
    const client = await rawSmtp(service.smtpPort);
    await client.command('EHLO client.example');
    const declared = await client.command(`MAIL FROM:<big@example.com> SIZE=${40 * MB + 1}`);
    expect(declared.code).toBe(552);
    client.end();

    const before = await storedCounts(service.core.deps.db);
    const { client: sender, reply, peak } = await oversizeData(service.smtpPort, 80 * MB);
    expect(reply.code).toBe(552);
    expect(reply.text).toMatch(/^552 5\.3\.4 /);
    // 80 MB went through; it was never all held (at most the 40 MB limit).
    expect(peak).toBeLessThan(60 * MB);
    expect(await storedCounts(service.core.deps.db)).toEqual(before);

    // The session goes on: the next message on the same connection is accepted.
    expect((await sender.command('MAIL FROM:<small@example.com>')).code).toBe(250);
    expect((await sender.command(`RCPT TO:<${email}>`)).code).toBe(250);
    expect((await sender.command('DATA')).code).toBe(354);
    await sender.write(message(email, 'Small after big'));
    expect((await sender.command('.')).code).toBe(250);
    sender.end();
  });

  it('holds at most about the size limit in memory whatever the client sends (2 MB limit, 80 MB sent)', async () => {
    const listener = await startInboundSmtp({
      inbound: service.core.mail.inbound,
      logger: service.core.deps.logger,
      host: '127.0.0.1',
      port: 0,
      maxMessageBytes: 2 * MB,
    });
    try {
      const before = await storedCounts(service.core.deps.db);
      const { client, reply, peak } = await oversizeData(listener.port, 80 * MB);
      client.end();
      expect(reply.code).toBe(552);
      // Holding the data would be 80 MB or more. Held: 0-4 MB here, 8 MB once on a loaded machine (this process is the
      // client too, and its writes in flight count).
      expect(peak).toBeLessThan(20 * MB);
      expect(await storedCounts(service.core.deps.db)).toEqual(before);
    } finally {
      await listener.close();
    }
  });

  it('survives a client that resets the connection in the middle of DATA; the half message is not stored', async () => {
    const before = await storedCounts(service.core.deps.db);
    for (let attempt = 0; attempt < 3; attempt++) {
      const client = await rawSmtp(service.smtpPort);
      await client.command('EHLO client.example');
      await client.command('MAIL FROM:<reset@example.com>');
      await client.command(`RCPT TO:<${email}>`);
      expect((await client.command('DATA')).code).toBe(354);
      await client.write(`Subject: cut off\r\n\r\n${'partial line\r\n'.repeat(5000)}`);
      client.socket.resetAndDestroy();
      await client.closed;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await storedCounts(service.core.deps.db)).toEqual(before);
    const reply = await sendRaw(service.smtpPort, 'good@example.com', [email], message(email, 'After the resets'));
    expect(reply.code).toBe(250);
  });

  it('keeps serving with 2,000 idle connections open', async () => {
    const sockets: Socket[] = [];
    try {
      // From 100 loopback addresses, 20 each: the default cap per client (AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT).
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from(
            { length: 200 },
            (_, index) =>
              new Promise<void>((resolve, reject) => {
                const localAddress = `127.0.1.${1 + batch * 10 + (index % 10)}`;
                const socket = connect({ host: '127.0.0.1', port: service.smtpPort, localAddress }, () => resolve());
                socket.on('error', reject);
                sockets.push(socket);
              }),
          ),
        );
      }
      expect(sockets.filter((socket) => !socket.destroyed)).toHaveLength(2000);
      const transport = smtpClient(service.smtpPort, { maxConnections: 1 });
      const info = await transport.sendMail({
        from: 'good@example.com',
        to: email,
        subject: 'Through the crowd',
        text: 'still here',
      });
      transport.close();
      expect(info.response).toMatch(/^250 /);
      // None of them was turned away meanwhile.
      expect(sockets.filter((socket) => !socket.destroyed)).toHaveLength(2000);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('times out slow-drip and idle clients while a good client still gets 250', async () => {
    const listener = await startInboundSmtp({
      inbound: service.core.mail.inbound,
      logger: service.core.deps.logger,
      host: '127.0.0.1',
      port: 0,
      lineTimeoutMs: 1_500,
      idleTimeoutMs: 2_000,
    });
    try {
      // One byte at a time, never completing a line: the idle timeout alone would never fire.
      const drip = await rawSmtp(listener.port);
      let dripClosedAt = 0;
      const dripStarted = Date.now();
      void drip.closed.then(() => {
        dripClosedAt = Date.now();
      });
      const bytes = 'EHLO a-very-slow-client.example';
      let index = 0;
      const dripping = setInterval(() => {
        if (!drip.socket.destroyed) drip.socket.write(bytes[index++ % bytes.length]!);
      }, 300);
      const idle = await rawSmtp(listener.port);
      let idleReply = '';
      idle.socket.on('data', (chunk: string) => {
        idleReply += chunk;
      });

      const good = await sendRaw(listener.port, 'good@example.com', [email], message(email, 'While others drip'));
      expect(good.code).toBe(250);

      await Promise.race([
        Promise.all([drip.closed, idle.closed]),
        new Promise((_, reject) => setTimeout(() => reject(new Error('slow clients were not cut off')), 8_000)),
      ]);
      clearInterval(dripping);
      expect(dripClosedAt - dripStarted).toBeGreaterThanOrEqual(1_000);
      expect(idleReply).toMatch(/^421 /);
      await eventually(async () => (listener.connectionCount() === 0 ? true : undefined));
    } finally {
      await listener.close();
    }
  });
});

describe('SMTP listener: a store that fails', () => {
  let service: TestService;
  let grantId: string;
  const email = `fragile@${DOMAIN}`;

  /** While `store_faults.remaining` > 0, the database refuses a message's write half-way (its outbox event), as a full disk or an I/O error would. */
  const failStores = (on: boolean) =>
    service.core.deps.db.write((tx) => tx.run(sql`UPDATE store_faults SET remaining = ${on ? 1 : 0}`));

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, email);
    await service.core.deps.db.write(async (tx) => {
      await tx.run(sql.raw('CREATE TABLE store_faults (remaining INTEGER NOT NULL)'));
      await tx.run(sql.raw('INSERT INTO store_faults VALUES (0)'));
      await tx.run(
        sql.raw(
          `CREATE TRIGGER store_fault BEFORE INSERT ON outbox_events WHEN (SELECT remaining FROM store_faults) > 0 BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected)'); END`,
        ),
      );
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers 451 so the sender retries, stores nothing half-way, and the retry is stored once', async () => {
    const before = await storedCounts(service.core.deps.db);
    await failStores(true);
    const transport = smtpClient(service.smtpPort, { maxConnections: 1 });
    const mail = {
      from: 'sender@example.com',
      to: email,
      subject: 'Must not be lost',
      text: 'important',
      attachments: [{ filename: 'x.txt', content: 'payload' }],
    };
    const error = (await transport.sendMail(mail).catch((thrown: unknown) => thrown)) as {
      responseCode?: number;
      response?: string;
    };
    expect(error.responseCode).toBe(451);
    expect(error.response).toMatch(/^451 4\.3\.0 /);
    expect(await storedCounts(service.core.deps.db)).toEqual(before);

    // The sender retries (as every MTA does on 4xx) and the message is stored exactly once.
    await failStores(false);
    const info = await transport.sendMail(mail);
    transport.close();
    expect(info.response).toMatch(/^250 /);
    const stored = (await service.nylas.messages.list({ identifier: grantId })).data;
    expect(stored.map((entry) => entry.subject)).toEqual(['Must not be lost']);
    expect(stored[0]!.attachments).toHaveLength(1);
    // Events: its message.created, and contact.created for the sender, new to the mailbox.
    expect(await storedCounts(service.core.deps.db)).toEqual({
      ...before,
      messages: before.messages + 1,
      threads: before.threads + 1,
      attachments: before.attachments + 1,
      blobs: before.blobs + 1,
      raws: before.raws + 1,
      references: before.references + 1,
      folders: before.folders + 1,
      events: before.events + 2,
      fts: before.fts + 1,
    });
  });
});

describe('SMTP listener: the mail writer thread dies mid-batch', () => {
  let service: TestService;
  let writer: MailWriter;
  let inbound: InboundService;
  let listener: InboundSmtpServer;
  const email = `writer@${DOMAIN}`;

  beforeAll(async () => {
    service = await startTestService();
    await createMailbox(service, email);
    const { deps } = service.core;
    // A listener whose writer thread the test can stop (preparing simple messages itself, as the service's does).
    writer = createMailWriter(deps.db, { prepareModule: INGEST_PREPARE_MODULE });
    inbound = createInboundService(deps, createMailStore(deps), { writer });
    listener = await startInboundSmtp({ inbound, logger: deps.logger, host: '127.0.0.1', port: 0 });
    // A message whose outbox insert (its last statement, after blobs, thread and message row) takes most of a second.
    await deps.db.write(async (tx) => {
      await tx.run(sql.raw('CREATE TABLE slow_rows (x INTEGER)'));
      await tx.run(
        sql.raw(
          'INSERT INTO slow_rows WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) SELECT i FROM n',
        ),
      );
      await tx.run(
        sql.raw(
          `CREATE TRIGGER slow_store BEFORE INSERT ON outbox_events WHEN NEW.payload LIKE '%slow to store%' BEGIN SELECT count(*) FROM slow_rows a, slow_rows b, slow_rows c WHERE a.x + b.x + c.x > 0; END`,
        ),
      );
    });
  });
  afterAll(async () => {
    await listener?.close();
    await inbound?.close();
    await service?.close();
  });

  it('answers 451, leaves nothing half-written and no lock held, and the next message is stored', async () => {
    const { db } = service.core.deps;
    const before = await storedCounts(db);
    const reply = sendRaw(
      listener.port,
      'sender@example.com',
      [email],
      message(email, 'slow to store', 'this one is cut off'),
    );

    // Another connection sees the write lock taken: the writer thread is inside the message's transaction.
    const lock = writeLockProbe(db.file!);
    await lock.untilHeld();
    await writer.terminate();

    const cut = await reply;
    expect(cut.code).toBe(451);
    expect(cut.text).toMatch(/^451 4\.3\.0 /);
    expect(lock.held()).toBe(false);
    lock.close();
    expect(await storedCounts(db)).toEqual(before);

    // A new writer thread takes over.
    const next = await sendRaw(listener.port, 'sender@example.com', [email], message(email, 'after the crash'));
    expect(next.code).toBe(250);
    expect(await storedCounts(db)).toEqual({
      ...before,
      messages: before.messages + 1,
      threads: before.threads + 1,
      raws: before.raws + 1,
      folders: before.folders + 1,
      events: before.events + 1,
      fts: before.fts + 1,
    });
  });
});
