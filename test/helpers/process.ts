/** Helpers for tests that run the `agentpost` command as a child process. */
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
