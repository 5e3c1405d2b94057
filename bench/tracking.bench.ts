/**
 * Tracking URLs under load (issue 18): requests per second of the pixel (`GET /t/o/{token}`, 200 image/gif) and of
 * the redirect (`GET /t/l/{token}`, 302), valid tokens, against Hono's hello-world on `@hono/node-server`, all in the
 * same run, in alternating rounds, with medians. The goal: pixel and redirect at 50% or more of hello-world.
 *
 * Ours runs twice: with the service's default log level (`info`: one access-log line per request, to stderr, here
 * discarded) and with `AGENTPOST_LOG_LEVEL=warn` (no access log). Every hit is recorded (in batches, after the
 * answer), so the figures include that work too. Every server is a child process pinned to CPU 0 and the load
 * generator to CPU 1 (taskset, when there are two CPUs).
 *
 * Load generator: `wrk` (Debian: `apt-get install wrk`) with one thread and BENCH_CONNECTIONS connections; without
 * it, a keep-alive node:http loop with the same fixed concurrency (in this process). Settings: BENCH_ROUNDS (default
 * 3), BENCH_SECONDS per run (default 5), BENCH_CONNECTIONS (default 32).
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinned, PINNING, startBenchServer, which } from './load-tools.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const here = dirname(fileURLToPath(import.meta.url));
/** A mail reader's user agent: hits are those of people, not scanners. */
const USER_AGENT =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

interface Server {
  url: string;
  pixel?: string;
  link?: string;
  stop(): Promise<void>;
}

/** A server child (bench/tracking-server.ts), pinned to CPU 0; resolves once it listens. */
function startServer(mode: string, argument?: string): Promise<Server> {
  return startBenchServer(join(here, 'tracking-server.ts'), mode, argument, 'ignore');
}

interface Load {
  rps: number;
  /** Answers that were neither 2xx nor 3xx, and socket errors. */
  errors: number;
}

function wrk(binary: string, url: string, seconds: number): Promise<Load> {
  const [command, args] = pinned(1, binary, [
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    '-H',
    `User-Agent: ${USER_AGENT}`,
    url,
  ]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
      if (!rps) return reject(new Error(`wrk output not understood: ${output.slice(0, 400)}`));
      const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
      const socketErrors = socket ? socket.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0;
      resolve({ rps: Number(rps[1]), errors: Number(non2xx?.[1] ?? 0) + socketErrors });
    });
  });
}

/** Without wrk: CONNECTIONS keep-alive connections, each sending its next request as soon as the last was answered. */
async function httpLoop(url: string, seconds: number): Promise<Load> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const call = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          headers: { 'user-agent': USER_AGENT },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            if ((response.statusCode ?? 0) >= 400) errors++;
            resolve();
          });
        },
      );
      call.on('error', () => {
        errors++;
        resolve();
      });
      call.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await one();
        done++;
      }
    }),
  );
  agent.destroy();
  return { rps: done / ((performance.now() - started) / 1000), errors };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function run(): Promise<Record<string, number | string>> {
  const binary = which('wrk');
  const load = (url: string, seconds = SECONDS) => (binary ? wrk(binary, url, seconds) : httpLoop(url, seconds));
  const hello = await startServer('hello');
  const info = await startServer('ours', 'info');
  const warn = await startServer('ours', 'warn');
  const out: Record<string, number | string> = {
    'load generator': binary ? `wrk -t1 -c${CONNECTIONS}` : `node:http keep-alive loop, ${CONNECTIONS} connections`,
    'pinned (server CPU 0, load CPU 1)': PINNING ? 'yes' : 'no',
  };
  try {
    for (const server of [info, warn]) {
      if (!server.pixel || !server.link) throw new Error('the tracked message carries no pixel or link');
      const pixel = await fetch(`${server.url}${server.pixel}`, { headers: { 'user-agent': USER_AGENT } });
      const link = await fetch(`${server.url}${server.link}`, {
        redirect: 'manual',
        headers: { 'user-agent': USER_AGENT },
      });
      if (pixel.status !== 200 || link.status !== 302)
        throw new Error(`tracking URLs answer ${pixel.status} and ${link.status}`);
    }
    const targets: Record<string, string> = {
      hello: `${hello.url}/`,
      'pixel (info)': `${info.url}${info.pixel}`,
      'redirect (info)': `${info.url}${info.link}`,
      'pixel (warn)': `${warn.url}${warn.pixel}`,
      'redirect (warn)': `${warn.url}${warn.link}`,
    };
    // Warm-up: V8 optimises every server's hot path before anything is measured.
    for (const url of Object.values(targets)) await load(url, 2);
    const results: Record<string, Load[]> = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
    const names = Object.keys(targets);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order, so that none always follows another.
      const order = names.map((_, index) => names[(index + round) % names.length]!);
      for (const name of order) results[name]!.push(await load(targets[name]!));
    }
    const helloRps = median(results.hello!.map((result) => result.rps));
    out['hello-world req/s (median)'] = Math.round(helloRps);
    for (const name of names.slice(1)) {
      const rps = median(results[name]!.map((result) => result.rps));
      out[`${name} req/s (median; rounds)`] =
        `${Math.round(rps)} (${results[name]!.map((result) => Math.round(result.rps)).join(' / ')})`;
      out[`${name} / hello-world`] = `${Math.round((rps / helloRps) * 100)}% (goal 50%)`;
      const errors = results[name]!.reduce((sum, result) => sum + result.errors, 0);
      if (errors > 0) out[`${name} errors`] = errors;
    }
    out['hello-world rounds'] = results.hello!.map((result) => Math.round(result.rps)).join(' / ');
  } finally {
    await Promise.all([hello.stop(), info.stop(), warn.stop()]);
  }
  return out;
}
