// Builds dist/ unless it is newer than every source it is built from (tests that run the build: `npm start`, the
// packed package). Run under `flock` by test/helpers/build.ts, so that two test files never build at once and the
// second finds the first one's build fresh.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

/** Newest modification time of the files under `path`. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry))));
}

const built = join(ROOT, 'dist', 'server', 'cli.js');
const sources = ['src', 'storage', 'server', 'tools', 'package.json', 'tsconfig.json', 'tsconfig.build.json'].map(
  (path) => newest(join(ROOT, path)),
);
if (!existsSync(built) || statSync(built).mtimeMs < Math.max(...sources)) {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}
