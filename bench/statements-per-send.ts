/**
 * How many SQL statements one `autonomous` send costs (issue 37's bench goal): not a bench of its own (no
 * `.bench.ts`), a counting tool for bench/outbound.bench.ts's sends.
 *   node --import tsx bench/statements-per-send.ts [<reference checkout>]
 * Starts the service of this checkout (and of the reference, when named) as bench/outbound-server.ts does, with the
 * debug preload bench/count-statements.mjs, warms it up, then sends BENCH_SENDS (default 100) messages one at a
 * time to another Agent Account of the service and as many to a relay on loopback, and prints the statements per send
 * of each (every thread of the process, the background workers included), then each statement whose count per send
 * differs between the two builds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { outboundAccounts } from './outbound-accounts.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 100);
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'outbench.agentpost.localhost';
const BODY = `<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(90)}</p>`;
const here = dirname(fileURLToPath(import.meta.url));
const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
/** Statements run per send, and milliseconds spent in the driver per send. */
type Entry = [number, number];
const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

let received = 0;
const relay = new SMTPServer({
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
await new Promise<void>((resolveListen) => relay.listen(0, '127.0.0.1', () => resolveListen()));
const relayPort = (relay.server.address() as { port: number }).port;

async function send(url: string, grantId: string, to: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const response = await fetch(`${url}/v3/grants/${grantId}/messages/send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ to: [{ email: to }], subject: `count ${index}`, body: BODY }),
    });
    if (response.status !== 200) throw new Error(`send answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  }
}

/** The generation (salts) of a WAL file and how many frames of it are current: pages written since its last restart. */
function walFrames(database: string): { salts: string; frames: number } {
  const wal = readFileSync(`${database}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salts = wal.subarray(16, 24).toString('hex');
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.subarray(at + 8, at + 16).toString('hex') !== salts) break;
    frames++;
  }
  return { salts, frames };
}

/** WAL pages written per send: the mean over short runs of `batch` sends that no checkpoint restarted. */
async function pagesPerSend(database: string, sendBatch: () => Promise<void>, batch: number): Promise<number> {
  const samples: number[] = [];
  for (let tries = 0; samples.length < 25 && tries < 100; tries++) {
    const before = walFrames(database);
    await sendBatch();
    await sleep(200);
    const after = walFrames(database);
    if (after.salts === before.salts) samples.push((after.frames - before.frames) / batch);
  }
  return samples.reduce((total, n) => total + n, 0) / samples.length;
}

/** Runs one build; returns the statements by SQL text, per send, of local delivery and of sends to the relay. */
async function measure(root: string): Promise<{ local: Measured; relay: Measured }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-statements-'));
  const file = join(dir, 'counts.json');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(here, 'count-statements.mjs'),
      join(here, 'outbound-server.ts'),
      root,
      join(dir, 'bench.db'),
      String(relayPort),
      API_KEY,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: root, env: { ...process.env, STATEMENT_COUNT_FILE: file } },
  );
  try {
    const line = await new Promise<string>((resolveLine) =>
      createInterface({ input: child.stdout }).once('line', resolveLine),
    );
    const { url } = JSON.parse(line) as { url: string };
    const sender = await outboundAccounts(url, headers, DOMAIN);
    const dump = async (): Promise<{ total: Record<string, Entry>; cpuMs: number }> => {
      rmSync(file, { force: true });
      child.kill('SIGUSR2');
      for (let tries = 0; tries < 100; tries++) {
        await sleep(100);
        try {
          return JSON.parse(readFileSync(file, 'utf8')) as { total: Record<string, Entry>; cpuMs: number };
        } catch {
          // not written yet
        }
      }
      throw new Error('no counts written');
    };
    const perSend = ({ total, cpuMs }: { total: Record<string, Entry>; cpuMs: number }) => ({
      cpuMs: cpuMs / SENDS,
      counts: Object.fromEntries(
        Object.entries(total).map(([sql, [n, ms]]) => [sql, [n / SENDS, ms / SENDS] as Entry]),
      ),
    });
    const before = received;
    await send(url, sender, `reader@${DOMAIN}`, 50);
    await send(url, sender, 'warm-up@example.com', 50);
    while (received - before < 50) await sleep(20);
    await sleep(500);
    await dump();
    await send(url, sender, `reader@${DOMAIN}`, SENDS);
    await sleep(500);
    const local = perSend(await dump());
    const start = received;
    await send(url, sender, 'someone@example.com', SENDS);
    while (received - start < SENDS) await sleep(20);
    await sleep(500);
    const toRelay = perSend(await dump());
    const database = join(dir, 'bench.db');
    const walLocal = await pagesPerSend(database, () => send(url, sender, `reader@${DOMAIN}`, 1), 1);
    const walRelay = await pagesPerSend(
      database,
      async () => {
        const first = received;
        await send(url, sender, 'someone@example.com', 1);
        while (received - first < 1) await sleep(20);
      },
      1,
    );
    return { local: { ...local, walPages: walLocal }, relay: { ...toRelay, walPages: walRelay } };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolveExit) => child.once('exit', resolveExit));
    rmSync(dir, { recursive: true, force: true });
  }
}

type Measured = { cpuMs: number; counts: Record<string, Entry>; walPages: number };
const sum = (counts: Record<string, Entry>, at: 0 | 1) =>
  Object.values(counts).reduce((total, entry) => total + entry[at], 0);
const short = (sql: string) => sql.replace(/\s+/g, ' ').slice(0, 150);
const describe = ({ cpuMs, counts, walPages }: Measured) =>
  `${sum(counts, 0).toFixed(2)} statements (${sum(counts, 1).toFixed(2)} ms in the driver), ${Number.isNaN(walPages) ? 'WAL pages not counted (every sample window crossed a checkpoint: a busy machine)' : `${walPages.toFixed(1)} WAL pages`}, ${cpuMs.toFixed(2)} ms of CPU`;
const builds: [string, string][] = [['this build', resolve(here, '..')]];
if (process.argv[2]) builds.push(['reference', resolve(process.argv[2])]);
const results: { name: string; local: Measured; relay: Measured }[] = [];
for (const [name, root] of builds) results.push({ name, ...(await measure(root)) });
for (const { name, local, relay: toRelay } of results)
  process.stdout.write(`${name}: per send, local delivery ${describe(local)}; to a relay ${describe(toRelay)}\n`);
for (const side of ['local', 'relay'] as const) {
  const names = results.map((result) => result.name).join(' / ');
  process.stdout.write(`\n${side}: per send by text, statements (${names}), then driver ms (${names})\n`);
  const texts = new Set(results.flatMap((result) => Object.keys(result[side].counts)));
  const rows = [...texts].map((sql) => ({
    sql,
    entries: results.map((result): Entry => result[side].counts[sql] ?? [0, 0]),
  }));
  for (const row of rows.sort((a, b) => b.entries[0]![1] - a.entries[0]![1])) {
    const counts = row.entries.map((entry) => entry[0].toFixed(2).padStart(6)).join(' / ');
    const ms = row.entries.map((entry) => entry[1].toFixed(3).padStart(7)).join(' / ');
    if (process.env.STATEMENTS_ALL !== '1' && row.entries.every((entry) => entry[0] === row.entries[0]![0])) continue;
    process.stdout.write(`  ${counts}  ${ms}  ${short(row.sql)}\n`);
  }
}
await new Promise((resolveClose) => relay.close(() => resolveClose(undefined)));
