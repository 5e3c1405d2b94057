/**
 * Outbound mail: sends per second accepted by `POST /v3/grants/{id}/messages/send` (5 KB HTML body, 16
 * concurrent HTTP clients) on the real service (temp database, HTTP on loopback, the service a child process):
 * (a) to another Agent Account of the same service (composed, stored in sent, delivered locally through the
 *     inbound path before the answer), and
 * (b) to a relay on loopback (a smtp-server sink): accepted, then the time until the sink has them all
 *     (pooled SMTP connections of the queue workers).
 * Each side also gives the latency of one send (median and 95th percentile of every send of the side's rounds).
 * BENCH_SENDS changes the count (default 1000). BENCH_REFERENCE=<checkout> measures a second build (a worktree of an
 * older commit, with node_modules) alternating with this one, round by round (BENCH_ROUNDS, default 3 with a reference,
 * 1 without), each on a database of its own; the figures are medians of the rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { outboundAccounts } from './outbound-accounts.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 1000);
const REFERENCE = process.env.BENCH_REFERENCE;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (REFERENCE ? 3 : 1));
const CONCURRENCY = 16;
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'outbench.agentpost.localhost';
const BODY = `<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(90)}</p>`;
const here = dirname(fileURLToPath(import.meta.url));

async function sink(): Promise<{ port: number; received(): number; close(): Promise<void> }> {
  let received = 0;
  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    received: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends `count` messages with `CONCURRENCY` clients; returns the seconds it took and each send's milliseconds. */
async function blast(
  url: string,
  grantId: string,
  to: string,
  count: number,
): Promise<{ seconds: number; ms: number[] }> {
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        const sent = performance.now();
        const response = await fetch(`${url}/v3/grants/${grantId}/messages/send`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ to: [{ email: to }], subject: `bench ${index}`, body: BODY }),
        });
        if (response.status !== 200) throw new Error(`send answered ${response.status}: ${await response.text()}`);
        await response.arrayBuffer();
        ms.push(performance.now() - sent);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, ms };
}

interface Side {
  readonly name: string;
  readonly url: string;
  readonly sender: string;
  readonly child: ChildProcess;
  readonly figures: Record<string, number[]>;
  readonly latencies: { local: number[]; relay: number[] };
}

/** Starts the service of checkout `root` as a child process on a database of its own and makes its two mailboxes. */
async function startSide(name: string, root: string, dir: string, relayPort: number): Promise<Side> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'outbound-server.ts'), root, join(dir, `${name}.db`), String(relayPort), API_KEY],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: root },
  );
  const line = await new Promise<string>((resolveLine, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolveLine);
    child.once('exit', (code) => reject(new Error(`the ${name} server exited (${code}) before listening`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const sender = await outboundAccounts(url, headers, DOMAIN);
  await blast(url, sender, `reader@${DOMAIN}`, 50);
  await blast(url, sender, 'warm-up@example.com', 50);
  return { name, url, sender, child, figures: {}, latencies: { local: [], relay: [] } };
}

function record(side: Side, name: string, value: number): void {
  (side.figures[name] ??= []).push(value);
}

/** One round of one side: local delivery, then a relay's sends accepted and handed over. */
async function round(side: Side, relay: { received(): number }): Promise<void> {
  const local = await blast(side.url, side.sender, `reader@${DOMAIN}`, SENDS);
  record(side, 'local delivery: sends accepted and delivered (msg/s)', SENDS / local.seconds);
  side.latencies.local.push(...local.ms);
  const before = relay.received();
  const started = performance.now();
  const accepted = await blast(side.url, side.sender, 'someone@example.com', SENDS);
  record(side, 'to a relay: sends accepted (msg/s)', SENDS / accepted.seconds);
  side.latencies.relay.push(...accepted.ms);
  while (relay.received() - before < SENDS) {
    if (performance.now() - started > 300_000)
      throw new Error(`the relay got ${relay.received() - before} of ${SENDS} in 5 minutes`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  }
  record(side, 'to a relay: accepted and handed to the relay (msg/s)', SENDS / ((performance.now() - started) / 1000));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

/** Runs the bench and returns its figures. */
export async function run(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const relay = await sink();
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-outbench-'));
  const sides: Side[] = [];
  try {
    sides.push(await startSide('this-build', resolve(here, '..'), dir, relay.port));
    if (REFERENCE) sides.push(await startSide('reference', resolve(REFERENCE), dir, relay.port));
    for (let index = 0; index < ROUNDS; index += 1) {
      // Alternate which side goes first, so that neither always runs on a machine the other has just warmed.
      const order = index % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) await round(side, relay);
    }
    for (const side of sides) {
      const prefix = sides.length > 1 ? `${side.name}: ` : '';
      for (const [name, values] of Object.entries(side.figures)) {
        out[prefix + name] = Math.round(median(values));
        if (values.length > 1) out[`${prefix}${name}, rounds`] = values.map((value) => Math.round(value)).join(', ');
      }
      out[`${prefix}local delivery: latency p50 / p95 (ms)`] =
        `${median(side.latencies.local).toFixed(1)} / ${percentile(side.latencies.local, 0.95).toFixed(1)}`;
      out[`${prefix}to a relay: latency p50 / p95 (ms)`] =
        `${median(side.latencies.relay).toFixed(1)} / ${percentile(side.latencies.relay, 0.95).toFixed(1)}`;
    }
    out['rounds'] = ROUNDS;
    out['concurrent HTTP clients'] = CONCURRENCY;
  } finally {
    for (const side of sides) {
      if (side.child.exitCode !== null) continue;
      const exited = new Promise((resolveExit) => side.child.once('exit', resolveExit));
      side.child.kill('SIGTERM');
      await exited;
    }
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
