/** Helpers for tests that run the `agentpost` command as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** The checkout, and the command run from its sources. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/agentpost.js');

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** The environment of a child: ours without any AGENTPOST_ or npm_ variable, plus the given ones. */
export function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AGENTPOST_') && !key.startsWith('npm_')));
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
export async function startServe(env: Record<string, string>, args: string[] = [], timeoutMs = 30_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
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
