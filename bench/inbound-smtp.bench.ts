/**
 * Durable SMTP ingest: 10 KB messages from Postfix's `smtp-source` (one message per connection, 8 and 20
 * concurrent sessions), each parsed and committed by the mail writer thread (synchronous=FULL, group commit)
 * before its 250 (smtp-source sends single-part text mail, which the writer thread parses itself, see
 * src/mail/inbound.ts). Measured in the same run against (a) Postfix itself accepting into its queue and
 * delivering to Maildir on this machine, and (b) our own listener with a handler that discards the data (the
 * smtp-server ceiling), taking turns with ours at each concurrency (see oursAndCeiling). Also printed: the CPU time of
 * this process per message (all its threads, and the event loop alone; smtp-source and Postfix are other
 * processes) and the load average, since other work on the machine moves every figure.
 *
 * Needs `smtp-source` (Debian: `apt-get install postfix`). The Postfix reference needs root: it sets
 * `home_mailbox = Maildir/`, creates the local user `agentpostbench`, and starts Postfix on 127.0.0.1:25 for the
 * run when it is not running (stopping it again afterwards). Set AGENTPOST_BENCH_POSTFIX=0 to skip it,
 * BENCH_MESSAGES to change the count per run (default 3000), BENCH_ROUNDS the runs of ours at each concurrency
 * (default 3).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { count } from 'drizzle-orm';
import { startInboundSmtp, type InboundService } from '../src/index.js';
import { tables } from '../storage/index.js';
import { NO_SMTP_SOURCE, smtpSource, startMailService, which } from './load-tools.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 3000);
/** Runs of ours at each concurrency, each between two runs of the ceiling (BENCH_ROUNDS). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * Messages sent before each measured run (to each of the three servers): enough for V8 to finish optimising the
 * hot paths of the listener, the parser threads and the writer thread (with 200, the first measured run still
 * paid for compilation: about 0.5 ms of CPU per message more).
 */
const WARM_UP = 1000;
const SIZE = 10_240;
const SESSIONS = [8, 20];
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'bench.agentpost.localhost';
const RECIPIENT = `agent@${DOMAIN}`;
const POSTFIX_USER = 'agentpostbench';

/** Runs smtp-source and returns the seconds it took. */
function runSource(binary: string, port: number, messages: number, sessions: number, to: string): Promise<number> {
  return smtpSource(binary, { port, messages, sessions, size: SIZE, from: 'sender@example.com', to });
}

const rate = (messages: number, seconds: number) => Math.round(messages / seconds);

/** CPU time (user + system, in clock ticks) of each thread of this process, by thread id (Linux; empty elsewhere). */
function threadTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(tid, Number(fields[11]) + Number(fields[12]));
    }
  } catch {
    // not Linux
  }
  return ticks;
}

/**
 * Runs smtp-source and also returns the CPU time this process spent per message meanwhile (ms), in all and on the
 * event loop (the main thread; the rest is the mail writer, parser and V8's own threads).
 */
async function measured(
  binary: string,
  port: number,
  sessions: number,
  to: string,
): Promise<{ rate: number; cpuMs: number; eventLoopMs: number | undefined }> {
  const before = process.cpuUsage();
  const ticksBefore = threadTicks();
  const seconds = await runSource(binary, port, MESSAGES, sessions, to);
  const used = process.cpuUsage(before);
  const mainTicks = (threadTicks().get(String(process.pid)) ?? NaN) - (ticksBefore.get(String(process.pid)) ?? NaN);
  const perMessage = (ms: number) => Math.round((ms / MESSAGES) * 100) / 100;
  // Clock ticks are 10 ms on Linux (USER_HZ 100).
  return {
    rate: rate(MESSAGES, seconds),
    cpuMs: perMessage((used.user + used.system) / 1000),
    eventLoopMs: Number.isFinite(mainTicks) ? perMessage(mainTicks * 10) : undefined,
  };
}

type Measure = Awaited<ReturnType<typeof measured>>;

/** (b) the ceiling: our listener (same options, no greeting delay) with an onData that drops the message. */
async function startDiscardListener(binary: string): Promise<{ port: number; close(): Promise<void> }> {
  const inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'> = {
    checkRecipient: async () => ({ ok: true, grant: {} as never }),
    deliverInbound: async () => ({
      deliveries: [{ recipient: RECIPIENT, grantId: 'g', messageId: 'discarded', threadId: 't' }],
      rejected: [],
      parseError: undefined,
    }),
  };
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  // All sessions come from one address: the cap per client (20) would count sessions still closing.
  const listener = await startInboundSmtp({
    inbound,
    logger: silent,
    host: '127.0.0.1',
    port: 0,
    maxConnectionsPerClient: 1_000,
  });
  await runSource(binary, listener.port, WARM_UP, 8, RECIPIENT);
  return listener;
}

/** Ours: the real service (temp database, FULL sync, the writer thread, group commit), with its mailbox, warmed up. */
async function startAgentpost(
  binary: string,
): Promise<{ port: number; stored(): Promise<number>; close(): Promise<void> }> {
  const { service, close } = await startMailService({
    apiKey: API_KEY,
    domain: DOMAIN,
    recipient: RECIPIENT,
    prepare: (started) => runSource(binary, started.smtpPort, WARM_UP, 8, RECIPIENT).then(() => undefined),
  });
  return {
    port: service.smtpPort,
    async stored() {
      const [row] = await service.core.deps.db.orm.select({ n: count() }).from(tables.messages);
      return row!.n;
    },
    close,
  };
}

/** The median of some numbers (the mean of the middle two for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Ours and the ceiling, side by side: at each concurrency the discarding listener and ours take turns (ROUNDS runs of
 * ours, each between two of the ceiling), each run of ours is set against the mean of the ceiling runs right before
 * and after it, and the figures are the medians. The machine's load moves every figure, by 2x within one run at
 * times; alternating makes it weigh on both sides alike, and the median leaves out a round it spoiled.
 */
async function oursAndCeiling(binary: string, out: Record<string, number | string>) {
  const discard = await startDiscardListener(binary);
  try {
    const ours = await startAgentpost(binary);
    try {
      out['agentpost durability'] =
        'writer thread (parses single-part mail itself), group commit, synchronous=FULL before each 250';
      out['rounds (ours between two ceiling runs)'] = ROUNDS;
      let expected = WARM_UP;
      const round2 = (value: number) => Math.round(value * 100) / 100;
      const record = (label: string, sessions: number, results: Measure[]) => {
        out[`${label} CPU, -s ${sessions} (ms/msg, this process)`] = round2(
          median(results.map((result) => result.cpuMs)),
        );
        const eventLoop = results.map((result) => result.eventLoopMs);
        if (eventLoop.every((value) => value !== undefined))
          out[`${label} CPU on the event loop, -s ${sessions} (ms/msg)`] = round2(median(eventLoop));
      };
      for (const sessions of SESSIONS) {
        const ceilings = [await measured(binary, discard.port, sessions, RECIPIENT)];
        const results: Measure[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          results.push(await measured(binary, ours.port, sessions, RECIPIENT));
          expected += MESSAGES;
          ceilings.push(await measured(binary, discard.port, sessions, RECIPIENT));
        }
        const ratios = results.map(
          (result, index) => (100 * result.rate) / ((ceilings[index]!.rate + ceilings[index + 1]!.rate) / 2),
        );
        out[`discard ceiling, -s ${sessions} (msg/s, each run)`] = ceilings.map((ceiling) => ceiling.rate).join(' / ');
        out[`discard ceiling, -s ${sessions} (msg/s)`] = Math.round(median(ceilings.map((ceiling) => ceiling.rate)));
        record('discard', sessions, ceilings);
        out[`agentpost durable ingest, -s ${sessions} (msg/s, each run)`] = results
          .map((result) => result.rate)
          .join(' / ');
        out[`agentpost durable ingest, -s ${sessions} (msg/s)`] = Math.round(
          median(results.map((result) => result.rate)),
        );
        record('agentpost', sessions, results);
        out[`ratio agentpost / discard ceiling, -s ${sessions} (each run / median)`] =
          `${ratios.map((ratio) => `${Math.round(ratio)}%`).join(' / ')} / ${Math.round(median(ratios))}%`;
      }
      out['agentpost messages stored / acknowledged'] = `${await ours.stored()} / ${expected}`;
    } finally {
      await ours.close();
    }
  } finally {
    await discard.close();
  }
}

function maildirCount(dir: string): number {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
}

/** (a) Postfix on this machine: accepted into its queue, and delivered to Maildir. */
async function postfix(binary: string, out: Record<string, number | string>) {
  if (process.env.AGENTPOST_BENCH_POSTFIX === '0') return void (out['postfix'] = 'skipped (AGENTPOST_BENCH_POSTFIX=0)');
  const postconf = which('postconf');
  const postfixBinary = which('postfix');
  if (!postconf || !postfixBinary || process.getuid?.() !== 0)
    return void (out['postfix'] = 'skipped (needs root and postfix installed)');
  const run = (file: string, args: string[]) =>
    execFileSync(file, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  try {
    run('id', [POSTFIX_USER]);
  } catch {
    run('useradd', ['-m', '-s', '/usr/sbin/nologin', POSTFIX_USER]);
  }
  run(postconf, ['-e', 'home_mailbox = Maildir/', 'message_size_limit = 41943040']);
  let startedHere = false;
  try {
    run(postfixBinary, ['status']);
    run(postfixBinary, ['reload']);
  } catch {
    run(postfixBinary, ['start']);
    startedHere = true;
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const home = run('sh', ['-c', `getent passwd ${POSTFIX_USER} | cut -d: -f6`]).trim();
  const maildir = join(home, 'Maildir', 'new');
  const to = `${POSTFIX_USER}@localhost`;
  const clean = () => {
    rmSync(join(home, 'Maildir'), { recursive: true, force: true });
    try {
      run('postsuper', ['-d', 'ALL']);
    } catch {
      // empty queue
    }
  };
  clean();
  await runSource(binary, 25, WARM_UP, 8, to);
  const warmedUp = Date.now() + 120_000;
  while (maildirCount(maildir) < WARM_UP && Date.now() < warmedUp)
    await new Promise((resolve) => setTimeout(resolve, 100));
  for (const sessions of SESSIONS) {
    const deadline = Date.now() + 120_000;
    clean();
    const started = performance.now();
    const accepted = await runSource(binary, 25, MESSAGES, sessions, to);
    out[`postfix accept, -s ${sessions} (msg/s)`] = rate(MESSAGES, accepted);
    while (maildirCount(maildir) < MESSAGES && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const delivered = maildirCount(maildir);
    out[`postfix delivered to Maildir, -s ${sessions} (msg/s)`] =
      delivered >= MESSAGES
        ? rate(MESSAGES, (performance.now() - started) / 1000)
        : `only ${delivered} of ${MESSAGES} in time`;
  }
  clean();
  if (startedHere) run(postfixBinary, ['stop']);
}

/** Runs the benchmark; figures are printed by bench/run.ts. */
export async function run(): Promise<Record<string, number | string>> {
  const binary = which('smtp-source');
  if (!binary) return { skipped: NO_SMTP_SOURCE };
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(' ');
  const out: Record<string, number | string> = {
    messages: MESSAGES,
    'message size (bytes)': SIZE,
    'connections per message': 1,
    'load average at start (1/5/15 min)': load(),
  };
  await oursAndCeiling(binary, out);
  try {
    await postfix(binary, out);
  } catch (error) {
    out['postfix'] = `failed: ${String(error).slice(0, 200)}`;
  }
  out['load average at end (1/5/15 min)'] = load();
  for (const sessions of SESSIONS) {
    const ours = out[`agentpost durable ingest, -s ${sessions} (msg/s)`];
    const accept = out[`postfix accept, -s ${sessions} (msg/s)`];
    const delivered = out[`postfix delivered to Maildir, -s ${sessions} (msg/s)`];
    if (typeof ours === 'number' && typeof accept === 'number')
      out[`ratio agentpost / postfix accept, -s ${sessions}`] = `${Math.round((100 * ours) / accept)}%`;
    if (typeof ours === 'number' && typeof delivered === 'number')
      out[`ratio agentpost / postfix delivered, -s ${sessions}`] = `${Math.round((100 * ours) / delivered)}%`;
  }
  return out;
}
