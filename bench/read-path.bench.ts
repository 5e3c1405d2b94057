/**
 * The read path (issue 21, point 1): `GET /v3/grants/{id}/messages?limit=50` set against Hono serializing the same
 * payload, measured in the same run, in alternating rounds, with medians:
 *   - Hono's hello-world route (what the machine gives at all right now);
 *   - the ceiling: Hono answering the same JSON with `c.json` (the objects already built) and ours, on a list of 50
 *     10 KB messages (about 562 KB of JSON) and on a list of 50 short messages;
 *   - the flat curve: the same list on mailboxes of 200, 20,000 and 100,000 messages, one server at a time;
 *   - SMTP ingest (Postfix's `smtp-source`, 10 KB, 20 sessions, one message per connection) unloaded, and while the
 *     list is under full load, both into the same running service.
 * Every server is a child process pinned to CPU 0 and the load generators (wrk, smtp-source) to CPU 1 (with taskset,
 * when there are two CPUs or more), as the figures of issue 21 were measured.
 *
 * Needs `wrk` (Debian: `apt-get install wrk`); the ingest part needs `smtp-source` (`apt-get install postfix`) and is
 * skipped without it. The databases are seeded once and cached (bench/read-path-seed.ts). Settings: BENCH_ROUNDS
 * (default 3), BENCH_SECONDS per wrk run (default 5), BENCH_CONNECTIONS (default 20), BENCH_READS_SIZES (mailbox
 * sizes of the flat curve, default 200,20000,100000), BENCH_INGEST_SECONDS per ingest window (default 8).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'libsql';
import {
  BENCH_API_KEY,
  cacheDir,
  LARGE_MAILBOX,
  scalar,
  scratchCopy,
  seededDatabases,
  SHORT_MAILBOX,
} from './read-path-seed.js';
import { NO_SMTP_SOURCE, pinned, PINNING, startBenchServer, type BenchServer, which } from './load-tools.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SIZES = (process.env.BENCH_READS_SIZES ?? '200,20000,100000').split(',').map(Number);
const INGEST_SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? 8);
/** Which parts run (BENCH_READS_PARTS, default all): lists (ours against the ceiling), flat (the curve), ingest. */
const PARTS = new Set((process.env.BENCH_READS_PARTS ?? 'lists,flat,ingest').split(','));
const here = dirname(fileURLToPath(import.meta.url));
const AUTH = `Authorization: Bearer ${BENCH_API_KEY}`;

/** The command pinned to one CPU (0: servers, 1: load generators) when the machine allows it. */

/** A server child (bench/read-path-server.ts), pinned to CPU 0; resolves once it listens. */
/** A server child (bench/read-path-server.ts), pinned to CPU 0; resolves once it listens. */
function startServer(mode: string, argument?: string): Promise<BenchServer<{ url: string; smtpPort?: number }>> {
  return startBenchServer(join(here, 'read-path-server.ts'), mode, argument, 'inherit');
}

/** A duration as wrk prints it (`812.34us`, `1.23ms`, `2.01s`, `1.5m`) → milliseconds. */
function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us'
    ? value / 1000
    : match[2] === 'ms'
      ? value
      : match[2] === 's'
        ? value * 1000
        : value * 60_000;
}

interface Load {
  rps: number;
  p99: number;
  errors: number;
}

function runWrk(
  url: string,
  seconds: number,
  connections = CONNECTIONS,
  auth = AUTH,
): { done: Promise<Load>; child: ChildProcess } {
  const wrk = which('wrk')!;
  const [command, args] = pinned(1, wrk, ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', auth, url]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<Load>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
      const p99 = /\s99%\s+(\S+)/.exec(output);
      if (!rps || !p99) return reject(new Error(`wrk output not understood: ${output.slice(0, 400)}`));
      const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
      const socketErrors = /Socket errors:.*?timeout (\d+)/.exec(output);
      resolve({
        rps: Number(rps[1]),
        p99: milliseconds(p99[1]!),
        errors: Number(non2xx?.[1] ?? 0) + Number(socketErrors?.[1] ?? 0),
      });
    });
  });
  return { done, child };
}

const wrk = (url: string, seconds = SECONDS, auth = AUTH) => runWrk(url, seconds, CONNECTIONS, auth).done;

/** A key scoped to one grant with `mail.read` only (issue 36), made on the server under test; its Authorization header. */
async function scopedAuth(url: string, grant: string): Promise<string> {
  const response = await fetch(`${url}/v3/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench scoped', scope: { grant_ids: [grant] }, permissions: ['mail.read'] }),
  });
  const body = (await response.json()) as { data?: { key?: string } };
  if (!body.data?.key) throw new Error(`making a scoped key: ${response.status} ${JSON.stringify(body)}`);
  return `Authorization: Bearer ${body.data.key}`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const each = (loads: Load[], pick: (load: Load) => number) => loads.map((load) => round1(pick(load))).join(' / ');

async function grantIds(url: string): Promise<{ large: string; short: string }> {
  const response = await fetch(`${url}/v3/grants?limit=10`, { headers: { authorization: `Bearer ${BENCH_API_KEY}` } });
  const body = (await response.json()) as { data: { id: string; email: string }[] };
  const id = (email: string) => body.data.find((grant) => grant.email === email)?.id ?? '';
  return { large: id(LARGE_MAILBOX), short: id(SHORT_MAILBOX) };
}

/** Runs `work` against ours on `file`. */
async function withServer<T>(file: string, work: (url: string) => Promise<T>): Promise<T> {
  const server = await startServer('ours', file);
  try {
    return await work(server.url);
  } finally {
    await server.stop();
  }
}

/** Ours against the ceiling on both lists, and the hello-world route, alternating, ROUNDS times. */
async function listsAgainstCeiling(
  file: string,
  out: Record<string, number | string>,
): Promise<{ large: string; short: string }> {
  const ours = await startServer('ours', file);
  try {
    const grants = await grantIds(ours.url);
    const listUrl = (base: string, grant: string) => `${base}/v3/grants/${grant}/messages?limit=50`;
    const payloads: Record<string, unknown> = {};
    for (const grant of [grants.large, grants.short]) {
      const response = await fetch(listUrl(ours.url, grant), { headers: { authorization: `Bearer ${BENCH_API_KEY}` } });
      const text = await response.text();
      payloads[grant] = JSON.parse(text);
      out[`${grant === grants.large ? '10 KB' : 'short'} list: JSON bytes`] = Buffer.byteLength(text);
    }
    const payloadFile = join(cacheDir(), 'payloads.json');
    writeFileSync(payloadFile, JSON.stringify(payloads));
    const hello = await startServer('hello');
    const ceiling = await startServer('ceiling', payloadFile);
    const scoped = await scopedAuth(ours.url, grants.short);
    try {
      // Warm-up: V8 optimises the hot paths of every server before anything is measured.
      for (const url of [
        `${hello.url}/`,
        listUrl(ceiling.url, grants.large),
        listUrl(ours.url, grants.large),
        listUrl(ceiling.url, grants.short),
        listUrl(ours.url, grants.short),
      ])
        await wrk(url, 2);
      await wrk(listUrl(ours.url, grants.short), 2, scoped);
      const results: Record<string, Load[]> = {
        hello: [],
        ceilingLarge: [],
        oursLarge: [],
        ceilingShort: [],
        oursShort: [],
        scopedShort: [],
      };
      for (let round = 0; round < ROUNDS; round++) {
        results.hello!.push(await wrk(`${hello.url}/`));
        for (const [kind, grant] of [
          ['Large', grants.large],
          ['Short', grants.short],
        ] as const) {
          // Alternate which goes first, so that neither always follows the other.
          const order = round % 2 === 0 ? (['ceiling', 'ours'] as const) : (['ours', 'ceiling'] as const);
          for (const who of order)
            results[`${who}${kind}`]!.push(await wrk(listUrl(who === 'ours' ? ours.url : ceiling.url, grant)));
        }
        // The short list with a key scoped to its grant (mail.read only) beside the application key, alternating.
        const keys = round % 2 === 0 ? (['scoped', 'ours'] as const) : (['ours', 'scoped'] as const);
        for (const who of keys) {
          const load = await wrk(listUrl(ours.url, grants.short), SECONDS, who === 'scoped' ? scoped : AUTH);
          (who === 'scoped' ? results.scopedShort! : results.oursShort!).push(load);
        }
      }
      const appKey = median(results.oursShort!.map((load) => load.rps));
      const scopedKey = median(results.scopedShort!.map((load) => load.rps));
      out['short list of 50: scoped key req/s, each round'] = each(results.scopedShort!, (load) => load.rps);
      out['short list of 50: scoped key / application key (req/s, medians)'] =
        `${Math.round(scopedKey)} / ${Math.round(appKey)} = ${Math.round((100 * scopedKey) / appKey)}%`;
      out['hono hello-world (req/s, each round)'] = each(results.hello!, (load) => load.rps);
      out['hono hello-world (req/s) / p99 (ms)'] =
        `${Math.round(median(results.hello!.map((load) => load.rps)))} / ${round1(median(results.hello!.map((load) => load.p99)))}`;
      for (const [kind, label] of [
        ['Large', '10 KB list of 50'],
        ['Short', 'short list of 50'],
      ] as const) {
        const ceilings = results[`ceiling${kind}`]!;
        const ourLoads = results[`ours${kind}`]!;
        const ceilingRps = median(ceilings.map((load) => load.rps));
        const oursRps = median(ourLoads.map((load) => load.rps));
        const ceilingP99 = median(ceilings.map((load) => load.p99));
        const oursP99 = median(ourLoads.map((load) => load.p99));
        out[`${label}: ceiling req/s, each round`] = each(ceilings, (load) => load.rps);
        out[`${label}: ours req/s, each round`] = each(ourLoads, (load) => load.rps);
        out[`${label}: ceiling (hono c.json) req/s / p99 ms`] = `${Math.round(ceilingRps)} / ${round1(ceilingP99)}`;
        out[`${label}: agentpost req/s / p99 ms`] = `${Math.round(oursRps)} / ${round1(oursP99)}`;
        out[`${label}: agentpost / ceiling (req/s; p99 ×)`] =
          `${Math.round((100 * oursRps) / ceilingRps)}%; ${round1(oursP99 / ceilingP99)}×`;
        const errors = [...ceilings, ...ourLoads].reduce((sum, load) => sum + load.errors, 0);
        if (errors > 0) out[`${label}: errors (non-2xx, timeouts)`] = errors;
      }
    } finally {
      await hello.stop();
      await ceiling.stop();
    }
    return grants;
  } finally {
    await ours.stop();
  }
}

/**
 * The 10 KB list on mailboxes of each size, alternating sizes round after round. One server runs at a time (started
 * for its run, warmed for 2 s, stopped after): servers side by side on one core took each other's time, which showed
 * as a slope that was not the mailboxes'.
 */
async function flatCurve(
  files: Map<number, string>,
  grant: string,
  out: Record<string, number | string>,
): Promise<void> {
  const results = new Map<number, Load[]>([...files.keys()].map((size) => [size, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const sizes = [...files.keys()];
    for (const size of round % 2 === 0 ? sizes : sizes.reverse()) {
      const server = await startServer('ours', files.get(size));
      try {
        const url = `${server.url}/v3/grants/${grant}/messages?limit=50`;
        await wrk(url, 2);
        results.get(size)!.push(await wrk(url));
      } finally {
        await server.stop();
      }
    }
  }
  for (const [size, loads] of results) {
    out[`flat curve: mailbox of ${size.toLocaleString('en-US')} (req/s / p99 ms)`] =
      `${Math.round(median(loads.map((load) => load.rps)))} / ${round1(median(loads.map((load) => load.p99)))}  (each: ${each(loads, (load) => load.rps)})`;
  }
}

/** Messages smtp-source gets stored in `seconds` (it is stopped then), counted in the database. */
async function ingestWindow(binary: string, port: number, file: string, seconds: number): Promise<number> {
  const db = new Sqlite(file, { readonly: true });
  const count = () => scalar(db, 'SELECT count(*) FROM messages') as number;
  try {
    const before = count();
    const [command, args] = pinned(1, binary, [
      '-s',
      '20',
      '-l',
      '10240',
      '-m',
      '1000000',
      '-f',
      'sender@example.com',
      '-t',
      LARGE_MAILBOX,
      `127.0.0.1:${port}`,
    ]);
    const child = spawn(command, args, { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const after = count();
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    return (after - before) / seconds;
  } finally {
    db.close();
  }
}

/** SMTP ingest into one service, unloaded and with the 10 KB list under full load, alternating. */
async function ingestUnderLoad(base: string, grant: string, out: Record<string, number | string>): Promise<void> {
  const binary = which('smtp-source');
  if (!binary) return void (out['ingest under list load'] = `skipped: ${NO_SMTP_SOURCE}`);
  const file = scratchCopy(base, 'ingest');
  const server = await startServer('ours', file);
  try {
    const list = `${server.url}/v3/grants/${grant}/messages?limit=50`;
    await ingestWindow(binary, server.smtpPort!, file, 2);
    const unloaded: number[] = [];
    const loaded: number[] = [];
    const listLoads: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      unloaded.push(await ingestWindow(binary, server.smtpPort!, file, INGEST_SECONDS));
      const load = runWrk(list, INGEST_SECONDS + 3);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      loaded.push(await ingestWindow(binary, server.smtpPort!, file, INGEST_SECONDS));
      listLoads.push(await load.done);
    }
    out['ingest unloaded (msg/s, each round)'] = unloaded.map(Math.round).join(' / ');
    out['ingest under 10 KB list load (msg/s, each round)'] = loaded.map(Math.round).join(' / ');
    out['list meanwhile (req/s / p99 ms, each round)'] = listLoads
      .map((load) => `${Math.round(load.rps)} / ${round1(load.p99)}`)
      .join('; ');
    out['ingest under load / unloaded'] =
      `${Math.round(median(loaded))} / ${Math.round(median(unloaded))} msg/s = ${Math.round((100 * median(loaded)) / median(unloaded))}%`;
  } finally {
    await server.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  }
}

/** Runs the benchmark; figures are printed by bench/run.ts. */
export async function run(): Promise<Record<string, number | string>> {
  if (!which('wrk')) return { skipped: 'wrk not found (Debian: apt-get install wrk)' };
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(' ');
  const out: Record<string, number | string> = {
    'load average at start (1/5/15 min)': load(),
    pinning: PINNING ? 'servers on CPU 0, wrk and smtp-source on CPU 1' : 'none (one CPU or no taskset)',
    'wrk connections / seconds a run / rounds': `${CONNECTIONS} / ${SECONDS} / ${ROUNDS}`,
  };
  const seeding = performance.now();
  const files = await seededDatabases(SIZES);
  out['seeding (s; 0 when cached)'] = round1((performance.now() - seeding) / 1000);
  const smallest = files.get(Math.min(...SIZES))!;
  // The lists run on a scratch copy: they make a scoped key, which must not stay in the cached database.
  const grants = PARTS.has('lists')
    ? await listsAgainstCeiling(scratchCopy(smallest, 'lists'), out)
    : await withServer(smallest, grantIds);
  if (PARTS.has('flat')) await flatCurve(files, grants.large, out);
  if (PARTS.has('ingest')) await ingestUnderLoad(smallest, grants.large, out);
  out['load average at end (1/5/15 min)'] = load();
  return out;
}
