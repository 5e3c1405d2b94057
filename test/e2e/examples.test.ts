import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const examples = readdirSync(join(root, 'examples')).filter((file) => file.endsWith('.ts'));

describe('examples run as self-checking scripts', () => {
  it.each(examples)(
    '%s exits 0',
    async (file) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', join('examples', file)], {
        cwd: root,
        timeout: 60_000,
        env: { ...process.env, AGENTPOST_URL: '', AGENTPOST_API_KEY: '' },
      });
      expect(stdout).toContain('ok');
    },
    90_000,
  );
});
