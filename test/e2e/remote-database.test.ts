/**
 * The whole service on a libSQL server (`AGENTPOST_DATABASE_URL=http://…`): the protocol stand-in of
 * test/helpers/libsql-server.ts serves a real libSQL file, and every query goes through `@libsql/client`'s HTTP
 * code. Mail arrives over SMTP and is read through the nylas SDK, mail goes out through a relay, webhooks are
 * delivered; and ingest is durable: no 250 before the server acknowledged the COMMIT, a 4xx and nothing stored
 * when the COMMIT fails.
 */
import { join } from 'node:path';
import Sqlite from 'libsql';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, rawSmtp, smtpClient, dotStuff, type SmtpReply } from '../helpers/mail.js';
import { startLibsqlServer, type LibsqlServer, type PipelineSeen } from '../helpers/libsql-server.js';
import { startTestService, tempDir, TEST_SECRET_KEY, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually, startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'remote.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;

describe('the service on a libSQL server', () => {
  const dir = tempDir();
  const file = join(dir.path, 'served.db');
  let server: LibsqlServer;
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let grantId: string;
  let direct: Sqlite.Database;
  /** What the stand-in does with the COMMIT of a transaction that stored a message (see `storesMessage`). */
  let onMessageCommit: ((pipeline: PipelineSeen) => void | Promise<void>) | undefined;
  /** Streams that inserted a message (their COMMIT is the one the hook is about). */
  const storing = new Set<number>();
  const storedWithSubject = (subject: string) =>
    Number((direct.prepare('SELECT count(*) FROM messages WHERE subject = ?').raw(true).get(subject) as [number])[0]);

  beforeAll(async () => {
    server = await startLibsqlServer({
      file,
      authToken: 'served-token',
      onPipeline: async (pipeline) => {
        if (pipeline.sql.some((text) => /^insert into "messages"/i.test(text))) storing.add(pipeline.stream);
        if (pipeline.sql.includes('COMMIT') && storing.delete(pipeline.stream)) await onMessageCommit?.(pipeline);
      },
    });
    sink = await startSmtpSink();
    receiver = await startReceiver();
    service = await startTestService({
      databaseUrl: server.url,
      env: {
        AGENTPOST_DATABASE_AUTH_TOKEN: 'served-token',
        AGENTPOST_SECRET_KEY: TEST_SECRET_KEY,
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
      },
    });
    grantId = await createMailbox(service, AGENT);
    direct = new Sqlite(file);
  });
  afterAll(async () => {
    direct?.close();
    await service?.close();
    await receiver?.close();
    await sink?.close();
    await server?.close();
    dir.remove();
  });

  it('runs on the server: migrations applied there, and ready', async () => {
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(
      Number((direct.prepare('SELECT count(*) FROM __drizzle_migrations').raw(true).get() as [number])[0]),
    ).toBeGreaterThan(0);
    expect(
      Number((direct.prepare('SELECT count(*) FROM grants WHERE email = ?').raw(true).get(AGENT) as [number])[0]),
    ).toBe(1);
  });

  it('ingests mail over SMTP, serves it through the nylas SDK, and delivers the message.created webhook', async () => {
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });
    const transport = smtpClient(service.smtpPort);
    try {
      await transport.sendMail({
        from: 'Ann <ann@example.com>',
        to: AGENT,
        subject: 'Over the wire',
        text: 'Stored on a libSQL server.',
      });
      await transport.sendMail({
        from: 'Ann <ann@example.com>',
        to: AGENT,
        subject: 'Re: Over the wire',
        text: 'A reply.',
        inReplyTo: undefined,
      });
    } finally {
      transport.close();
    }
    const { data: messages } = await service.nylas.messages.list({ identifier: grantId });
    expect(messages.map((message) => message.subject).sort()).toEqual(['Over the wire', 'Re: Over the wire']);
    const first = messages.find((message) => message.subject === 'Over the wire')!;
    const { data: message } = await service.nylas.messages.find({ identifier: grantId, messageId: first.id });
    expect(message.body).toContain('Stored on a libSQL server.');
    expect(message.from).toEqual([{ name: 'Ann', email: 'ann@example.com' }]);
    const deliveries = await receiver.waitForDeliveries(2);
    expect(deliveries.map((delivery) => (delivery.json as { type: string }).type)).toEqual([
      'message.created',
      'message.created',
    ]);
    expect(
      deliveries
        .map((delivery) => (delivery.json as { data: { object: { subject: string } } }).data.object.subject)
        .sort(),
    ).toEqual(['Over the wire', 'Re: Over the wire']);
  });

  it('sends mail through the relay and keeps the sent copy', async () => {
    const { data: sent } = await service.nylas.messages.send({
      identifier: grantId,
      requestBody: { to: [{ email: 'bob@elsewhere.example' }], subject: 'Outbound over libSQL', body: 'Hello Bob' },
    });
    expect(sent.folders).toEqual(['sent']);
    await eventually(() =>
      sink.messages.find((message) => message.raw.toString().includes('Subject: Outbound over libSQL')),
    );
    expect(storedWithSubject('Outbound over libSQL')).toBe(1);
  });

  it("deletes a grant with all its mail: ON DELETE CASCADE needs foreign keys on the server's connection", async () => {
    const leaving = 'leaving@' + DOMAIN;
    const leavingId = await createMailbox(service, leaving);
    const transport = smtpClient(service.smtpPort);
    try {
      await transport.sendMail({ from: 'ann@example.com', to: leaving, subject: 'Soon orphaned?', text: 'No.' });
    } finally {
      transport.close();
    }
    const owned = (table: string) =>
      Number(
        (direct.prepare(`SELECT count(*) FROM ${table} WHERE grant_id = ?`).raw(true).get(leavingId) as [number])[0],
      );
    expect(owned('messages')).toBe(1);
    expect(owned('folders')).toBeGreaterThan(0);
    await service.nylas.grants.destroy({ grantId: leavingId });
    expect(owned('messages')).toBe(0);
    expect(owned('folders')).toBe(0);
    expect(owned('threads')).toBe(0);
  });

  /** Sends one message over a raw connection; returns the connection's final reply promise after the dot. */
  async function deliver(subject: string): Promise<{ final: Promise<SmtpReply>; end(): void }> {
    const client = await rawSmtp(service.smtpPort);
    await client.command('EHLO test.example');
    expect((await client.command('MAIL FROM:<ann@example.com>')).code).toBe(250);
    expect((await client.command(`RCPT TO:<${AGENT}>`)).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    await client.write(
      dotStuff(
        Buffer.from(
          `From: ann@example.com\r\nTo: ${AGENT}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.com>\r\n\r\nbody of ${subject}\r\n`,
        ),
      ),
    );
    return { final: client.command('.', 30_000), end: () => client.end() };
  }

  it('answers 250 only after the server acknowledged the COMMIT', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    let commitArrived!: () => void;
    const arrived = new Promise<void>((done) => (commitArrived = done));
    onMessageCommit = async () => {
      commitArrived();
      await held;
    };
    const { final, end } = await deliver('Held commit');
    try {
      let answered: SmtpReply | undefined;
      void final.then((reply) => (answered = reply));
      await arrived;
      // The COMMIT is at the server and not acknowledged: no reply, and nothing committed.
      await new Promise((done) => setTimeout(done, 400));
      expect(answered).toBeUndefined();
      expect(storedWithSubject('Held commit')).toBe(0);
      release();
      const reply = await final;
      expect(reply.code).toBe(250);
      expect(storedWithSubject('Held commit')).toBe(1);
    } finally {
      onMessageCommit = undefined;
      release();
      end();
    }
  });

  it('answers a 4xx when the COMMIT fails, and stores nothing of the message', async () => {
    const eventsBefore = Number((direct.prepare('SELECT count(*) FROM outbox_events').raw(true).get() as [number])[0]);
    onMessageCommit = () => {
      throw new Error('the server went away before the COMMIT');
    };
    const { final, end } = await deliver('Failed commit');
    try {
      const reply = await final;
      // A temporary failure: the sender keeps the message and tries again.
      expect(reply.code).toBe(451);
    } finally {
      onMessageCommit = undefined;
      end();
    }
    expect(storedWithSubject('Failed commit')).toBe(0);
    expect(Number((direct.prepare('SELECT count(*) FROM outbox_events').raw(true).get() as [number])[0])).toBe(
      eventsBefore,
    );
    // The sender retries (a 4xx says so) and the message is stored once.
    const again = await deliver('Failed commit');
    try {
      expect((await again.final).code).toBe(250);
    } finally {
      again.end();
    }
    expect(storedWithSubject('Failed commit')).toBe(1);
    const { data: messages } = await service.nylas.messages.list({
      identifier: grantId,
      queryParams: { subject: 'Failed commit' },
    });
    expect(messages).toHaveLength(1);
  });
});
