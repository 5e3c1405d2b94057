/** Helpers for tests that run the `agentpost` command as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** The checkout, and the command run from its sources. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/agentpost.js');

/**
 * Ports handed out by {@link freePort}: 36700-36999, inside the tests' range that `.ci/run` keeps the kernel from
 * giving to outgoing connections (a port found free by the kernel's own choice could be taken again before a child
 * process binds it). Each vitest worker has its own slice of 50, so two test files never get the same port.
 */
const FREE_PORTS_FIRST = 36_700;
const FREE_PORTS_PER_WORKER = 50;
let nextFree = 0;

/** Whether nobody listens on `port` right now. */
function unused(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((done) => {
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** A port nobody listens on right now, of this worker's slice (see {@link FREE_PORTS_FIRST}). */
export async function freePort(): Promise<number> {
  const worker = Math.max(0, Number(process.env.VITEST_POOL_ID ?? 1) - 1) % 6;
  const base = FREE_PORTS_FIRST + worker * FREE_PORTS_PER_WORKER;
  for (let tries = 0; tries < FREE_PORTS_PER_WORKER; tries++) {
    const port = base + (nextFree++ % FREE_PORTS_PER_WORKER);
    if (await unused(port)) return port;
  }
  throw new Error(`no free port in ${base}-${base + FREE_PORTS_PER_WORKER - 1}`);
}

/** The environment of a child: ours without any AGENTPOST_ or npm_ variable, plus the given ones. */
export function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('AGENTPOST_') && !key.startsWith('npm_')),
  );
  return { ...clean, ...env };
}

/** An `agentpost serve` child process, started by {@link startServe}. */
export interface ServeProcess {
  child: ChildProcess;
  /** Its HTTP base URL (role `http`). */
  url: string | undefined;
  /** Its inbound SMTP port (role `smtp`). */
  smtpPort: number | undefined;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `agentpost serve` (with `args`, e.g. `['--roles', 'smtp']`) in a child with `env` (see {@link childEnv}), and
 * resolves once it says it runs: the lines `listening on http://…`, `SMTP is listening on …:PORT` and `is running`.
 */
export async function startServe(
  env: Record<string, string>,
  args: string[] = [],
  timeoutMs = 30_000,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`serve did not start within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/Agentpost is running: roles \S+\n/.test(output)) {
        clearTimeout(timer);
        ready();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`serve exited with ${code} before it ran:\n${output}`));
    });
  });
  const smtpPort = /SMTP is listening on \S+:(\d+)/.exec(output)?.[1];
  return {
    child,
    url: /is listening on (http:\/\/\S+)/.exec(output)?.[1],
    smtpPort: smtpPort === undefined ? undefined : Number(smtpPort),
    output: () => output,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
