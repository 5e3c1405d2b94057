/**
 * The event stream (issue 40): how soon a committed event reaches a client, and what an idle stream costs.
 * Three child processes (bench/events-server.ts): the service with every role (A), a second `http`-only process on
 * the same database (B), and a bare Hono SSE endpoint (the reference). Mail goes to A over SMTP at BENCH_RATE
 * messages a second (500) for BENCH_MESSAGES messages (2,500), while three clients read `message.created`: SSE on A,
 * a WebSocket on A (one process: woken by A's own commit) and SSE on B (across processes: B polls the outbox every
 * AGENTPOST_WORKER_POLL_MS, 1,000 by default). The latency of an event is the time from the SMTP 250 of its message
 * (answered once the message is committed) to the client parsing it; p50 and p99. The reference writes events of
 * the same size at the same rate to its SSE clients, each stamped when written, and its latency is from that stamp
 * to the client parsing it. First (before any load, so that the heap is as it started), 500 idle streams are opened
 * to A (SSE, then WebSocket) and to the reference, and the server's resident memory (VmRSS) grows by the figure given
 * per stream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import nodemailer from 'nodemailer';
import WebSocket from 'ws';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2500);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const IDLE_STREAMS = Number(process.env.BENCH_IDLE_STREAMS ?? 500);
const KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'eventsbench.agentpost.localhost';
const INBOX = `inbox@${DOMAIN}`;
const here = dirname(fileURLToPath(import.meta.url));

interface Server {
  child: ChildProcess;
  url: string;
  smtpPort?: number;
}

async function startServer(args: string[]): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'events-server.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`events-server ${args[0]} exited (${code})`)));
  });
  return { child, ...(JSON.parse(line) as { url: string; smtpPort?: number }) };
}

async function stop(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

/** Resident memory of a process in KB (Linux). */
function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An SSE client: calls `onData` with each event's data and its arrival time; `close` stops it. */
async function sse(url: string, onData: (data: string, at: number) => void): Promise<() => void> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  const parser = createParser({ onEvent: (event) => onData(event.data, now()) });
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // closed
    }
  })();
  return () => controller.abort();
}

async function websocket(url: string, onData: (data: string, at: number) => void): Promise<() => void> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers: { authorization: `Bearer ${KEY}` } });
  socket.on('message', (data: Buffer) => onData(data.toString('utf8'), now()));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return () => socket.close();
}

/** Sends `count` messages to A at `rate` a second; the time of each 250 by subject. */
async function sendPaced(port: number, count: number, rate: number, prefix: string): Promise<Map<string, number>> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    pool: true,
    maxConnections: 8,
  });
  const accepted = new Map<string, number>();
  const started = performance.now();
  const sends: Promise<void>[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const due = started + (index * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const subject = `${prefix} ${index}`;
      sends.push(
        transport
          .sendMail({ from: 'sender@example.com', to: INBOX, subject, text: `Event bench message ${index}.` })
          .then(() => {
            accepted.set(subject, now());
          }),
      );
    }
    await Promise.all(sends);
  } finally {
    transport.close();
  }
  return accepted;
}

/** Latencies (ms) of the events received, from the 250 of their message; events whose message was not sent are left out. */
function latencies(received: Map<string, number>, accepted: Map<string, number>): number[] {
  const values: number[] = [];
  for (const [subject, at] of received) {
    const sent = accepted.get(subject);
    if (sent !== undefined) values.push(at - sent);
  }
  return values;
}

const subjectOf = (data: string) =>
  (JSON.parse(data) as { data?: { object?: { subject?: string } } }).data?.object?.subject ?? '';

/** Opens `count` idle streams with `open` and returns the server's memory growth per stream (KB). */
async function idleCost(pid: number, count: number, open: () => Promise<() => void>): Promise<number> {
  const before = rssKb(pid);
  const closers: (() => void)[] = [];
  for (let index = 0; index < count; index++) closers.push(await open());
  await sleep(2000);
  const after = rssKb(pid);
  for (const close of closers) close();
  await sleep(500);
  return (after - before) / count;
}

/** Runs the bench and returns its figures. */
export async function run(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-eventsbench-'));
  const database = join(dir, 'events.db');
  let a: Server | undefined;
  let b: Server | undefined;
  let bare: Server | undefined;
  try {
    a = await startServer(['ours', database, 'http,smtp,worker']);
    b = await startServer(['ours', database, 'http']);
    bare = await startServer(['bare']);
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const domain = await fetch(`${a.url}/v3/admin/domains`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Events', domain_address: DOMAIN }),
    });
    if (domain.status !== 200) throw new Error(`the domain was not registered: ${await domain.text()}`);
    const created = await fetch(`${a.url}/v3/connect/custom`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ provider: 'nylas', settings: { email: INBOX } }),
    });
    const answer = (await created.json()) as { data?: { id: string } };
    if (!answer.data) throw new Error(`the mailbox was not created: ${JSON.stringify(answer)}`);
    const grantId = answer.data.id;
    const path = `/v3/events/stream?grant_id=${grantId}&trigger_types=message.created`;

    // Memory of idle streams, first, while each server's heap is still as it started (after a load phase the
    // heap shrinks as it is collected, and resident memory falls while streams open).
    const idlePath = `/v3/events/stream?trigger_types=calendar.deleted`;
    out['idle SSE stream: server memory (KB each)'] = Math.round(
      await idleCost(a.child.pid!, IDLE_STREAMS, () => sse(`${a!.url}${idlePath}`, () => undefined)),
    );
    out['idle WebSocket stream: server memory (KB each)'] = Math.round(
      await idleCost(a.child.pid!, IDLE_STREAMS, () => websocket(`${a!.url}${idlePath}`, () => undefined)),
    );
    out['reference, idle bare Hono SSE stream (KB each)'] = Math.round(
      await idleCost(bare.child.pid!, IDLE_STREAMS, () => sse(`${bare!.url}/stream`, () => undefined)),
    );
    // Warm-up: every path once (V8, the caches, the tail of each process).
    await sendPaced(a.smtpPort!, 200, RATE, 'warm');
    await sleep(1500);

    const received = {
      sseA: new Map<string, number>(),
      wsA: new Map<string, number>(),
      sseB: new Map<string, number>(),
    };
    const sizes: number[] = [];
    const closers = [
      await sse(`${a.url}${path}`, (data, at) => {
        received.sseA.set(subjectOf(data), at);
        if (sizes.length < 100) sizes.push(Buffer.byteLength(data));
      }),
      await websocket(`${a.url}${path}`, (data, at) => received.wsA.set(subjectOf(data), at)),
      await sse(`${b.url}${path}`, (data, at) => received.sseB.set(subjectOf(data), at)),
    ];
    const accepted = await sendPaced(a.smtpPort!, MESSAGES, RATE, 'bench');
    await sleep(3000);
    for (const close of closers) close();
    for (const [name, map] of Object.entries(received)) {
      const values = latencies(map, accepted);
      const label =
        name === 'sseA' ? 'SSE, one process' : name === 'wsA' ? 'WebSocket, one process' : 'SSE, across processes';
      out[`${label}: events received`] = `${values.length} of ${MESSAGES}`;
      out[`${label}: latency p50 / p99 (ms)`] =
        `${percentile(values, 0.5).toFixed(1)} / ${percentile(values, 0.99).toFixed(1)}`;
    }

    // The reference: events of the same size at the same rate, from a bare Hono SSE endpoint.
    const size = Math.round(percentile(sizes, 0.5));
    const bareLatency: number[] = [];
    const closeBare = await sse(`${bare.url}/stream`, (data, at) =>
      bareLatency.push(at - (JSON.parse(data) as { sent_at: number }).sent_at),
    );
    const started = performance.now();
    for (let index = 0; index < MESSAGES; index++) {
      const wait = started + (index * 1000) / RATE - performance.now();
      if (wait > 1) await sleep(wait);
      await fetch(`${bare.url}/emit?size=${Math.max(0, size - 40)}`, { method: 'POST' });
    }
    await sleep(1000);
    closeBare();
    out['reference, bare Hono SSE: events received'] = `${bareLatency.length} of ${MESSAGES}`;
    out['reference, bare Hono SSE: latency p50 / p99 (ms)'] =
      `${percentile(bareLatency, 0.5).toFixed(1)} / ${percentile(bareLatency, 0.99).toFixed(1)}`;
    out['payload bytes (median)'] = size;

    out['messages, rate (msg/s)'] = `${MESSAGES}, ${RATE}`;
  } finally {
    await Promise.all([stop(a), stop(b), stop(bare)]);
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
