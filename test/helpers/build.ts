/** The build (dist/) for tests that run it: `npm start`, the packed package. */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './process.js';

const run = promisify(execFile);

/**
 * Builds dist/ unless it is newer than every source (scripts/build-if-stale.mjs), under a lock of this checkout, so
 * that two test files never build at once (a build first removes dist/, which a running test may be using).
 */
export async function ensureBuild(): Promise<void> {
  const lock = join(tmpdir(), `agentpost-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  await run('flock', [lock, process.execPath, join(ROOT, 'scripts', 'build-if-stale.mjs')], {
    cwd: ROOT,
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
}
