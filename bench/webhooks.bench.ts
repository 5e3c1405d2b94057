/**
 * Webhook delivery: signed `message.created` deliveries per second drained from a backlog to a bare loopback
 * receiver, beside that receiver's capacity measured in the same run (the ceiling: the same HTTP client that
 * Agentpost delivers with, posting signed payloads of the same size straight to the receiver, as many at once as
 * Agentpost keeps in flight). Rounds alternate ceiling, one subscription, ten subscriptions; medians are printed.
 *
 * A round of ours: a fresh database, `BENCH_WEBHOOK_GRANTS` mailboxes (default 20), the subscriptions, then
 * `BENCH_WEBHOOK_DELIVERIES` messages (default 3000; with ten subscriptions a tenth as many messages, so both make
 * the same number of deliveries) stored through the real inbound path (MIME parse, mail writer) while the
 * background work is stopped: a backlog. Then the background work starts and the clock runs until the receiver has
 * every delivery. The receiver counts duplicates and order breaks per grant and subscription (printed; both must
 * be 0).
 *
 * Lag: with one subscription and the background work running, messages are stored at `BENCH_WEBHOOK_INGEST_RATE`
 * a second (default 500) for `BENCH_WEBHOOK_INGEST_SECONDS` (default 6); the lag is the time from a message's
 * commit (its store call resolved) to the arrival of its notification at the receiver.
 * BENCH_ROUNDS sets the rounds (default 3). BENCH_WEBHOOK_PROFILE=<file>: write a CPU profile (.cpuprofile, V8 format)
 * of the first one-subscription drain, from the start of the background work to the last delivery.
 */
import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createService } from '../server/main.js';
import { loadConfig, nodeHttpRequester, startBackgroundWork, type Core } from '../src/index.js';
import { buildNotificationBody } from '../src/webhooks/delivery.js';
import { signatureHeaders } from '../src/webhooks/signatures.js';
import { asc } from 'drizzle-orm';
import { tables } from '../storage/index.js';

const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 3000);
const GRANTS = Number(process.env.BENCH_WEBHOOK_GRANTS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const INGEST_RATE = Number(process.env.BENCH_WEBHOOK_INGEST_RATE ?? 500);
const INGEST_SECONDS = Number(process.env.BENCH_WEBHOOK_INGEST_SECONDS ?? 6);
/** Requests the ceiling keeps in flight: what Agentpost may keep in flight to one endpoint. */
const CEILING_CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CEILING_CONCURRENCY ?? 16);
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'hookbench.agentpost.localhost';
const TEXT =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. '.repeat(12);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

function rawMessage(to: string, index: number): string {
  return [
    `From: Sender <sender${index % 7}@example.com>`,
    `To: ${to}`,
    `Subject: bench ${index}`,
    `Message-ID: <bench-${index}-${randomBytes(4).toString('hex')}@example.com>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    TEXT,
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    `<p>${TEXT}</p>`,
    '--b--',
    '',
  ].join('\r\n');
}

/** A bare receiver: answers 200 to every POST, counting deliveries, duplicates and per-grant order breaks per path. */
interface Receiver {
  url: string;
  received: number;
  duplicates: number;
  orderBreaks: number;
  /** Arrival time (performance.now()) by message id, for the lag. */
  arrivals: Map<string, number>;
  /** Each message's place in its grant's events (outbox seq order): its notifications must arrive in this order. */
  rank: Map<string, number>;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const seen = new Set<string>();
  const lastIndex = new Map<string, number>();
  const state: Receiver = {
    url: '',
    received: 0,
    duplicates: 0,
    orderBreaks: 0,
    arrivals: new Map(),
    rank: new Map(),
    reset() {
      state.received = 0;
      state.duplicates = 0;
      state.orderBreaks = 0;
      state.arrivals.clear();
      state.rank.clear();
      seen.clear();
      lastIndex.clear();
    },
    close: async () => undefined,
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      state.received += 1;
      // Only Agentpost's deliveries are checked (the ceiling posts to /ceiling).
      if (request.url !== '/ceiling') {
        const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          id: string;
          data: { grant_id: string; object: { id: string } };
        };
        const key = `${request.url} ${envelope.id}`;
        if (seen.has(key)) state.duplicates += 1;
        seen.add(key);
        state.arrivals.set(envelope.data.object.id, performance.now());
        const index = state.rank.get(envelope.data.object.id) ?? -1;
        const stream = `${request.url} ${envelope.data.grant_id}`;
        if ((lastIndex.get(stream) ?? -1) > index) state.orderBreaks += 1;
        lastIndex.set(stream, index);
      }
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}

/** The ceiling: `count` signed POSTs of a notification of the same size, `CEILING_CONCURRENCY` at a time. */
async function ceiling(receiver: Receiver, count: number): Promise<number> {
  const url = new URL(`${receiver.url}/ceiling`);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const object = {
    id: 'm',
    grant_id: 'g',
    object: 'message',
    subject: 'bench 0',
    body: `<p>${TEXT}</p>`,
    snippet: TEXT.slice(0, 100),
    from: [{ email: 'sender@example.com' }],
  };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CEILING_CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        const { json } = buildNotificationBody(
          { id: `n${index}`, type: 'message.created', application_id: 'a', grant_id: 'g', time: 0, object },
          1,
        );
        const body = Buffer.from(json, 'utf8');
        const response = await nodeHttpRequester({
          url,
          address: { address: '127.0.0.1', family: 4 },
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...signatureHeaders(secret, `n${index}`, Math.floor(Date.now() / 1000), body),
          },
          body,
          timeoutMs: 10_000,
          maxResponseBytes: 1024,
        });
        if (response.status !== 200) throw new Error(`the receiver answered ${response.status}`);
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/** A fresh service (not listening) with mailboxes and `subscriptions` webhooks to the receiver. */
async function setUp(receiver: Receiver, subscriptions: number) {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-hookbench-'));
  const service = await createService(
    loadConfig({
      AGENTPOST_DATABASE_URL: `file:${join(dir, 'bench.db')}`,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: API_KEY,
      AGENTPOST_DOMAINS: DOMAIN,
      AGENTPOST_LOG_LEVEL: 'silent',
      AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
      AGENTPOST_WORKER_POLL_MS: '200',
    }),
  );
  const core: Core = service.core;
  const grants: string[] = [];
  for (let index = 0; index < GRANTS; index += 1) {
    const response = await service.app.request('/v3/connect/custom', {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'nylas', settings: { email: `agent${index}@${DOMAIN}` } }),
    });
    if (response.status !== 200 && response.status !== 201)
      throw new Error(`creating a mailbox: ${response.status} ${await response.text()}`);
    grants.push(`agent${index}@${DOMAIN}`);
  }
  const at = Math.floor(Date.now() / 1000);
  for (let index = 0; index < subscriptions; index += 1) {
    await core.deps.db.write((tx) =>
      tx.insert(tables.webhooks).values({
        id: `hook${index}`,
        applicationId: service.applicationId,
        triggerTypes: ['message.created'],
        webhookUrl: `${receiver.url}/hook/${index}`,
        status: 'active',
        // Sealed as the API stores it, so deliveries open it as they do in service.
        secret: core.deps.secrets.seal(`whsec_${randomBytes(32).toString('base64')}`),
        statusUpdatedAt: at,
        createdAt: at,
        updatedAt: at,
      }),
    );
  }
  let stored = 0;
  /** Stores message `index` to mailbox `index % GRANTS`; resolves once committed. */
  const store = async (index: number): Promise<string> => {
    const to = grants[index % GRANTS]!;
    const result = await core.mail.inbound.deliverInbound({
      rawMime: rawMessage(to, index),
      envelope: { mailFrom: 'sender@example.com', rcptTo: [to] },
    });
    stored += 1;
    return result.deliveries[0]!.messageId;
  };
  return {
    core,
    store,
    stored: () => stored,
    async close() {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitFor(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Where to write a profile of the next one-subscription drain (once). */
let profileTo = process.env.BENCH_WEBHOOK_PROFILE;

/** One drain: returns deliveries a second. */
async function drain(receiver: Receiver, subscriptions: number): Promise<number> {
  const profile = subscriptions === 1 && profileTo ? new Session() : undefined;
  const messages = Math.round(DELIVERIES / subscriptions);
  const setup = await setUp(receiver, subscriptions);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < messages) await setup.store(next++);
      }),
    );
    receiver.reset();
    // The order each grant's events were committed in: the order its notifications must arrive in.
    const events = await setup.core.deps.db.orm
      .select({ objectId: tables.outboxEvents.objectId, grantId: tables.outboxEvents.grantId })
      .from(tables.outboxEvents)
      .orderBy(asc(tables.outboxEvents.seq));
    const perGrant = new Map<string, number>();
    for (const event of events) {
      const rank = perGrant.get(event.grantId ?? '') ?? 0;
      perGrant.set(event.grantId ?? '', rank + 1);
      if (event.objectId) receiver.rank.set(event.objectId, rank);
    }
    const total = messages * subscriptions;
    if (profile) {
      profile.connect();
      await profile.post('Profiler.enable');
      await profile.post('Profiler.start');
    }
    const started = performance.now();
    const background = startBackgroundWork(setup.core);
    let seconds: number;
    try {
      await waitFor(
        () => receiver.received >= total,
        600_000,
        () => `${receiver.received} of ${total} deliveries`,
      );
      seconds = (performance.now() - started) / 1000;
    } finally {
      await background.stop();
    }
    if (profile && profileTo) {
      const { profile: data } = await profile.post('Profiler.stop');
      writeFileSync(profileTo, JSON.stringify(data));
      profile.disconnect();
      profileTo = undefined;
    }
    return total / seconds;
  } finally {
    await setup.close();
  }
}

/** Stores messages at `INGEST_RATE` with the background work running; returns lag percentiles in ms. */
async function lagUnderIngest(receiver: Receiver): Promise<{ p50: number; p99: number; max: number; rate: number }> {
  const setup = await setUp(receiver, 1);
  const background = startBackgroundWork(setup.core);
  try {
    receiver.reset();
    const committed = new Map<string, number>();
    const total = INGEST_RATE * INGEST_SECONDS;
    const started = performance.now();
    const stores: Promise<void>[] = [];
    for (let index = 0; index < total; index += 1) {
      const due = started + (index * 1000) / INGEST_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      stores.push(setup.store(index).then((id) => void committed.set(id, performance.now())));
    }
    await Promise.all(stores);
    const rate = total / ((performance.now() - started) / 1000);
    await waitFor(
      () => receiver.received >= total,
      120_000,
      () => `${receiver.received} of ${total} deliveries`,
    );
    const lags = [...committed].map(([id, at]) => (receiver.arrivals.get(id) ?? Number.NaN) - at);
    return { p50: percentile(lags, 50), p99: percentile(lags, 99), max: Math.max(...lags), rate };
  } finally {
    await background.stop();
    await setup.close();
  }
}

/** Runs the bench and returns its figures. */
export async function run(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const receiver = await startReceiver();
  try {
    await ceiling(receiver, 2000); // warm-up
    const ceilings: number[] = [];
    const one: number[] = [];
    const ten: number[] = [];
    let duplicates = 0;
    let orderBreaks = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      ceilings.push(await ceiling(receiver, DELIVERIES));
      one.push(await drain(receiver, 1));
      duplicates += receiver.duplicates;
      orderBreaks += receiver.orderBreaks;
      ten.push(await drain(receiver, 10));
      duplicates += receiver.duplicates;
      orderBreaks += receiver.orderBreaks;
    }
    const ceilingRate = median(ceilings);
    out[`ceiling: signed POSTs to the bare receiver, ${CEILING_CONCURRENCY} in flight (/s)`] = Math.round(ceilingRate);
    out['Agentpost drain, 1 subscription (deliveries/s)'] =
      `${Math.round(median(one))} (${Math.round((100 * median(one)) / ceilingRate)}%; rounds ${one.map(Math.round).join(', ')})`;
    out['Agentpost drain, 10 subscriptions (deliveries/s)'] =
      `${Math.round(median(ten))} (${Math.round((100 * median(ten)) / ceilingRate)}%; rounds ${ten.map(Math.round).join(', ')})`;
    out['duplicates / per-grant order breaks seen'] = `${duplicates} / ${orderBreaks}`;
    out['deliveries a drain, mailboxes'] = `${DELIVERIES}, ${GRANTS}`;
    if (INGEST_SECONDS > 0) {
      const lag = await lagUnderIngest(receiver);
      out[
        `lag commit → delivery at ${INGEST_RATE} msg/s for ${INGEST_SECONDS} s (achieved ${Math.round(lag.rate)} msg/s)`
      ] = `p50 ${Math.round(lag.p50)} ms, p99 ${Math.round(lag.p99)} ms, max ${Math.round(lag.max)} ms`;
    }
  } finally {
    await receiver.close();
  }
  return out;
}
