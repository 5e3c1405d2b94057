/**
 * `agentpost serve --roles` as real processes on one database file.
 *
 * 1. Three processes, two SMTP listeners, two HTTP servers and three workers (A: every role, the default; B:
 *    `--roles smtp,worker`; C: `AGENTPOST_ROLES=http,worker`): mail is ingested over both listeners, sent over both
 *    HTTP servers (to a local mailbox and to an external SMTP sink), and `message.created` goes to a loopback
 *    receiver. Nothing is lost and nothing goes twice: every ingested message is stored once, every notification
 *    arrives once, every outbound message reaches the sink once.
 * 2. One process per role (`smtp`, `http`, `worker`): a process without `http` opens no HTTP port, one without `smtp`
 *    accepts no SMTP, and mail taken by the SMTP-only process, or sent through the HTTP-only one, is notified and
 *    relayed by the worker-only process, which learns of it only by polling the database.
 */
import { connect } from 'node:net';
import { createParser } from 'eventsource-parser';
import { join } from 'node:path';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../storage/index.js';
import { request } from '../helpers/http.js';
import { smtpClient } from '../helpers/mail.js';
import { freePort, startServe, type ServeProcess } from '../helpers/process.js';
import { Nylas, tempDir, TEST_API_KEY } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually, startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

/** Messages ingested through each SMTP listener, and sent through each HTTP server to each destination. */
const INGESTED_PER_LISTENER = 25;
const SENT_PER_SERVER = 8;

/** The environment every process of one database shares. */
function sharedEnv(databaseUrl: string, sink: SmtpSink): Record<string, string> {
  return {
    AGENTPOST_DATABASE_URL: databaseUrl,
    AGENTPOST_API_KEY: TEST_API_KEY,
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
    AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
    AGENTPOST_LOG_LEVEL: 'warn',
    AGENTPOST_WORKER_POLL_MS: '100',
  };
}

/** Rows of a query on the shared database. */
async function rows(databaseUrl: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await createDb({ url: databaseUrl });
  try {
    return (await db.client.execute(sql)).rows;
  } finally {
    void db.close();
  }
}

/** Nothing left to do: every outbox event dispatched and no live job (webhook deliveries, outbound mail) left. */
async function settled(databaseUrl: string): Promise<boolean> {
  const [pending] = await rows(
    databaseUrl,
    'select (select count(*) from outbox_events where dispatched_at is null) as events, (select count(*) from jobs where dead_at is null) as jobs',
  );
  return Number(pending!.events) === 0 && Number(pending!.jobs) === 0;
}

/** How many times each value occurs. */
function tally(values: unknown[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
  return counts;
}

/** Registers the domain of `email` (once) and creates its mailbox through `url`; returns the grant id. */
async function mailbox(url: string, email: string): Promise<string> {
  const domain = email.slice(email.indexOf('@') + 1);
  const registered = await request(url, 'POST', '/v3/admin/domains', {
    key: TEST_API_KEY,
    body: { name: domain, domain_address: domain },
  });
  expect([200, 409]).toContain(registered.status);
  const nylas = new Nylas({ apiKey: TEST_API_KEY, apiUri: url, timeout: 30 });
  return (await nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } as never }))
    .data.id;
}

/** Sends `count` messages over SMTP to `port`, each with the subject `<prefix> <n>`. */
async function ingest(port: number, to: string, prefix: string, count: number): Promise<void> {
  const client = smtpClient(port, { maxConnections: 4 });
  try {
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        client.sendMail({ from: 'someone@example.org', to, subject: `${prefix} ${index}`, text: `body ${index}` }),
      ),
    );
  } finally {
    client.close();
  }
}

/** Sends `count` messages through the HTTP API at `url`, each with the subject `<prefix> <n>`. */
async function send(url: string, grantId: string, to: string, prefix: string, count: number): Promise<void> {
  const nylas = new Nylas({ apiKey: TEST_API_KEY, apiUri: url, timeout: 30 });
  for (let index = 0; index < count; index += 1) {
    await nylas.messages.send({
      identifier: grantId,
      requestBody: { to: [{ email: to }], subject: `${prefix} ${index}`, body: `body ${index}` },
    });
  }
}

/** Whether nothing listens on `port` of 127.0.0.1 (the connection is refused). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * Checks that the messages whose subjects start with each prefix of `expected` were stored `count` times in all and
 * once per mailbox, and that every `message.created` recorded in the outbox reached the receiver exactly once.
 */
async function expectEachOnce(
  databaseUrl: string,
  receiver: WebhookReceiver,
  expected: Record<string, number>,
): Promise<void> {
  const stored = await rows(databaseUrl, 'select id, grant_id, subject from messages');
  for (const [prefix, count] of Object.entries(expected)) {
    const copies = stored
      .filter((row) => String(row.subject).startsWith(`${prefix} `))
      .map((row) => `${String(row.grant_id)} ${String(row.subject)}`);
    expect(copies, prefix).toHaveLength(count);
    expect(new Set(copies).size, prefix).toBe(count);
  }
  const recorded = await rows(databaseUrl, "select id, object_id from outbox_events where type = 'message.created'");
  const created = receiver.deliveries.filter((delivery) => delivery.json?.type === 'message.created');
  // Once each by notification id, and once each by message: no notification twice, no message notified twice.
  expect(
    [...tally(created.map((delivery) => delivery.headers['webhook-id'])).values()].every((times) => times === 1),
  ).toBe(true);
  const notified = tally(created.map((delivery) => delivery.json.data.object.id));
  expect([...notified.values()].every((times) => times === 1)).toBe(true);
  expect([...notified.keys()].sort()).toEqual(recorded.map((row) => String(row.object_id)).sort());
  // Every stored message was notified (the sent copies and the received ones alike).
  for (const row of stored) expect(notified.get(String(row.id)), String(row.subject)).toBe(1);
}

describe('three processes with split roles on one database', { timeout: 120_000 }, () => {
  const dir = tempDir('agentpost-roles-');
  const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
  const processes: ServeProcess[] = [];
  let sink: SmtpSink;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    const env = sharedEnv(databaseUrl, sink);
    // The first start creates the schema and the default application; the other two then start together.
    processes.push(await startServe(env));
    processes.push(
      ...(await Promise.all([
        startServe(env, ['--roles', 'smtp,worker']),
        startServe({ ...env, AGENTPOST_ROLES: 'http,worker' }),
      ])),
    );
  }, 90_000);
  afterAll(async () => {
    const codes = await Promise.all(processes.map((process) => process.stop()));
    expect(codes.every((code) => code === 0)).toBe(true);
    await receiver?.close();
    await sink?.close();
    dir.remove();
  });

  it('each process runs its roles: two SMTP listeners, two HTTP servers', () => {
    const [a, b, c] = processes;
    expect(a!.output()).toContain('Agentpost is running: roles http,smtp,worker');
    expect(b!.output()).toContain('Agentpost is running: roles smtp,worker');
    expect(c!.output()).toContain('Agentpost is running: roles http,worker');
    expect([a!.url, b!.url, c!.url].map((url) => url !== undefined)).toEqual([true, false, true]);
    expect([a!.smtpPort, b!.smtpPort, c!.smtpPort].map((port) => port !== undefined)).toEqual([true, true, false]);
  });

  it('ingests over both listeners and sends over both servers: every message stored once, notified once, relayed once', async () => {
    const [a, b, c] = processes;
    const inbox = 'inbox@roles.agentpost.localhost';
    const inboxId = await mailbox(a!.url!, inbox);
    const senderId = await mailbox(c!.url!, 'sender@roles.agentpost.localhost');
    const nylas = new Nylas({ apiKey: TEST_API_KEY, apiUri: c!.url!, timeout: 30 });
    await nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });

    await Promise.all([
      ingest(a!.smtpPort!, inbox, 'via A', INGESTED_PER_LISTENER),
      ingest(b!.smtpPort!, inbox, 'via B', INGESTED_PER_LISTENER),
      send(a!.url!, senderId, inbox, 'local via A', SENT_PER_SERVER),
      send(c!.url!, senderId, inbox, 'local via C', SENT_PER_SERVER),
      send(a!.url!, senderId, 'far@example.com', 'far via A', SENT_PER_SERVER),
      send(c!.url!, senderId, 'far@example.com', 'far via C', SENT_PER_SERVER),
    ]);

    // Everything accepted is done once the outbox is dispatched and no job is left: nothing can arrive later.
    await eventually(() => settled(databaseUrl), 60_000, 'the outbox and the jobs to be done');
    expect(sink.messages).toHaveLength(2 * SENT_PER_SERVER);
    const relayed = tally(
      sink.messages.map((message) => /^Subject: (.*)$/m.exec(message.raw.toString('utf8'))?.[1]?.trim()),
    );
    expect([...relayed.keys()].sort()).toEqual(
      [
        ...['far via A', 'far via C'].flatMap((prefix) =>
          Array.from({ length: SENT_PER_SERVER }, (_, index) => `${prefix} ${index}`),
        ),
      ].sort(),
    );
    expect(sink.messages.every((message) => message.rcptTo.join() === 'far@example.com')).toBe(true);

    await expectEachOnce(databaseUrl, receiver, {
      'via A': INGESTED_PER_LISTENER,
      'via B': INGESTED_PER_LISTENER,
      // The sent copy and the local recipient's copy.
      'local via A': 2 * SENT_PER_SERVER,
      'local via C': 2 * SENT_PER_SERVER,
      'far via A': SENT_PER_SERVER,
      'far via C': SENT_PER_SERVER,
    });
    const inboxCount = (await rows(databaseUrl, `select count(*) as n from messages where grant_id = '${inboxId}'`))[0]!
      .n;
    expect(Number(inboxCount)).toBe(2 * INGESTED_PER_LISTENER + 2 * SENT_PER_SERVER);
  });
});

describe('one process per role on one database', { timeout: 120_000 }, () => {
  const dir = tempDir('agentpost-roles-one-');
  const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let smtpOnly: ServeProcess;
  let httpOnly: ServeProcess;
  let workerOnly: ServeProcess;
  const ports = { smtpOnlyHttp: 0, httpOnlySmtp: 0, workerHttp: 0, workerSmtp: 0 };

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    for (const name of Object.keys(ports) as (keyof typeof ports)[]) ports[name] = await freePort();
    const env = sharedEnv(databaseUrl, sink);
    // The ports of the roles a process does not run are fixed, free ones: nothing may listen there.
    httpOnly = await startServe({ ...env, AGENTPOST_SMTP_PORT: String(ports.httpOnlySmtp) }, ['--roles', 'http']);
    [smtpOnly, workerOnly] = await Promise.all([
      startServe({ ...env, AGENTPOST_HTTP_PORT: String(ports.smtpOnlyHttp) }, ['--roles', 'smtp']),
      startServe(
        { ...env, AGENTPOST_HTTP_PORT: String(ports.workerHttp), AGENTPOST_SMTP_PORT: String(ports.workerSmtp) },
        ['--roles', 'worker'],
      ),
    ]);
  }, 90_000);
  afterAll(async () => {
    const codes = await Promise.all([smtpOnly, httpOnly, workerOnly].filter(Boolean).map((process) => process.stop()));
    expect(codes.every((code) => code === 0)).toBe(true);
    await receiver?.close();
    await sink?.close();
    dir.remove();
  });

  it('opens only the ports of its roles', async () => {
    expect(smtpOnly.url).toBeUndefined();
    expect(smtpOnly.smtpPort).toEqual(expect.any(Number));
    expect(await refuses(ports.smtpOnlyHttp)).toBe(true);
    expect(httpOnly.smtpPort).toBeUndefined();
    expect(await refuses(ports.httpOnlySmtp)).toBe(true);
    expect(workerOnly.url).toBeUndefined();
    expect(workerOnly.smtpPort).toBeUndefined();
    expect(await refuses(ports.workerHttp)).toBe(true);
    expect(await refuses(ports.workerSmtp)).toBe(true);
    // Ready without background loops of its own: another process runs them.
    const ready = await request(httpOnly.url!, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.workers).toBe('not run here (roles: http)');
  });

  it('mail taken by the SMTP-only process and sends through the HTTP-only one are notified and relayed by the worker-only one', async () => {
    const inbox = 'inbox@single.agentpost.localhost';
    const inboxId = await mailbox(httpOnly.url!, inbox);
    const nylas = new Nylas({ apiKey: TEST_API_KEY, apiUri: httpOnly.url!, timeout: 30 });
    await nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });

    await ingest(smtpOnly.smtpPort!, inbox, 'smtp only', 10);
    await send(httpOnly.url!, inboxId, 'far@example.com', 'relayed', 3);
    await eventually(() => settled(databaseUrl), 60_000, 'the outbox and the jobs to be done');
    expect(sink.messages).toHaveLength(3);
    await expectEachOnce(databaseUrl, receiver, { 'smtp only': 10, relayed: 3 });
  });

  it("an event stream on the HTTP-only process gets the mail the SMTP-only process took in, with the webhook's id", async () => {
    const inbox = 'streamed@single.agentpost.localhost';
    const inboxId = await mailbox(httpOnly.url!, inbox);
    const controller = new AbortController();
    const response = await fetch(
      `${httpOnly.url!}/v3/events/stream?grant_id=${inboxId}&trigger_types=message.created`,
      { headers: { authorization: `Bearer ${TEST_API_KEY}` }, signal: controller.signal },
    );
    expect(response.status).toBe(200);
    const events: { id: string; data: { object: { subject: string } } }[] = [];
    const parser = createParser({
      onEvent: (event) => events.push(JSON.parse(event.data) as (typeof events)[number]),
    });
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      } catch {
        // Aborted below.
      }
    })();
    await ingest(smtpOnly.smtpPort!, inbox, 'across processes', 3);
    await eventually(async () => events.length >= 3, 30_000, 'three streamed events');
    controller.abort();
    await reading;
    expect(events.map((event) => event.data.object.subject).sort()).toEqual(
      ['across processes 0', 'across processes 1', 'across processes 2'].sort(),
    );
    const ids = await rows(databaseUrl, "select id from outbox_events where type = 'message.created'");
    const known = new Set(ids.map((row) => row.id));
    expect(events.every((event) => known.has(event.id))).toBe(true);
  });
});
