/**
 * What the benchmarks share to find and drive outside load generators (not a bench itself: run.ts loads only
 * `*.bench.ts`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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
export function smtpSource(binary: string, options: { port: number; messages: number; sessions: number; size: number; from: string; to: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const args = ['-s', String(options.sessions), '-l', String(options.size), '-m', String(options.messages), '-f', options.from, '-t', options.to, `127.0.0.1:${options.port}`];
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
