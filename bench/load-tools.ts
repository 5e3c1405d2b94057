/**
 * What the benchmarks share to find and drive outside load generators (not a bench itself: run.ts loads only
 * `*.bench.ts`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { requireEveryRole, startService, type FullService } from '../server/main.js';
import { loadConfig, type CoreDeps } from '../src/index.js';
import { join } from 'node:path';

/** The path of a system binary (sbin and bin folders), or undefined when it is not installed. */
export function which(binary: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin']) {
    if (existsSync(join(dir, binary))) return join(dir, binary);
  }
  return undefined;
}

/** What bench reports when Postfix's load generator is missing. */
export const NO_SMTP_SOURCE = 'smtp-source not found (Debian: apt-get install postfix)';

/**
 * Runs Postfix's `smtp-source` against a listener on loopback and resolves the seconds it took (it exits once every
 * message got its reply); rejects with its error output when it fails.
 */
export function smtpSource(
  binary: string,
  options: { port: number; messages: number; sessions: number; size: number; from: string; to: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const args = [
      '-s',
      String(options.sessions),
      '-l',
      String(options.size),
      '-m',
      String(options.messages),
      '-f',
      options.from,
      '-t',
      options.to,
      `127.0.0.1:${options.port}`,
    ];
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve((performance.now() - started) / 1000);
      else reject(new Error(`smtp-source exited with ${code}: ${errors.slice(0, 500)}`));
    });
  });
}

const taskset = availableParallelism() >= 2 ? which('taskset') : undefined;

/** Whether servers and load generators run on CPUs of their own (two CPUs or more, and taskset installed). */
export const PINNING = taskset !== undefined;

/** `command args` run on one CPU (taskset, when there are two CPUs or more): servers on 0, load generators on 1. */
export function pinned(cpu: number, command: string, args: string[]): [string, string[]] {
  return taskset ? [taskset, ['-c', String(cpu), command, ...args]] : [command, args];
}

/** A server child of a bench: what it printed on its first stdout line (JSON, with at least `url`), and its stop. */
export type BenchServer<T extends { url: string }> = T & { stop(): Promise<void> };

/**
 * Starts `script` (a bench server module beside the benches, run with tsx) with `mode` and an optional argument,
 * pinned to CPU 0 in production mode; resolves with the JSON line it prints once it listens. `stop` sends SIGTERM
 * and waits for the exit. Its stderr is shown when `stderr` is 'inherit'.
 */
export async function startBenchServer<T extends { url: string }>(
  script: string,
  mode: string,
  argument?: string,
  stderr: 'inherit' | 'ignore' = 'inherit',
): Promise<BenchServer<T>> {
  const [command, args] = pinned(0, process.execPath, [
    '--import',
    'tsx',
    script,
    mode,
    ...(argument ? [argument] : []),
  ]);
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', stderr],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { ...(JSON.parse(line) as T), stop };
}

/** A bench's own Agentpost: the real service on a temporary database, with one mailbox; `close` removes it all. */
export interface BenchMailService {
  service: FullService;
  close(): Promise<void>;
}

/**
 * Starts the real service (temporary `file:` database, durable as in production, silent, no per-client connection
 * cap: smtp-source's sessions all come from one address) with `apiKey`, registers `domain` and makes the mailbox
 * `recipient`, then runs `prepare` (administration, warm-up). Anything failing on the way closes it again.
 */
export async function startMailService(options: {
  apiKey: string;
  domain: string;
  recipient: string;
  deps?: Partial<CoreDeps>;
  prepare?: (service: FullService) => Promise<void>;
}): Promise<BenchMailService> {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-bench-'));
  const service = requireEveryRole(
    await startService(
      loadConfig({
        AGENTPOST_DATABASE_URL: `file:${join(dir, 'bench.db')}`,
        AGENTPOST_HTTP_PORT: '0',
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_API_KEY: options.apiKey,
        AGENTPOST_LOG_LEVEL: 'silent',
        AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
      }),
      options.deps ?? {},
    ),
  );
  const close = async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
    await fetch(`${service.url}/v3/admin/domains`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Bench', domain_address: options.domain }),
    });
    const grant = await fetch(`${service.url}/v3/connect/custom`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ provider: 'nylas', settings: { email: options.recipient } }),
    });
    if (!grant.ok) throw new Error(`creating the mailbox failed: ${grant.status} ${await grant.text()}`);
    await options.prepare?.(service);
  } catch (error) {
    await close();
    throw error;
  }
  return { service, close };
}
