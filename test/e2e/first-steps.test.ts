/**
 * The first five minutes (issue 39): `agentpost --version`, and what `agentpost serve` prints once it runs: the
 * dashboard URL, a curl line that creates a mailbox (after one that adds a local `.localhost` domain when none is
 * configured), and an MCP host's configuration. The printed curl lines are run as printed and make the mailbox.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import manifest from '../../package.json' with { type: 'json' };
import { BIN, startServe, type ServeProcess } from '../helpers/process.js';
import { tempDir, TEST_API_KEY } from '../helpers/service.js';

const run = promisify(execFile);
const dir = tempDir('agentpost-first-steps-');
let served: ServeProcess | undefined;
afterAll(async () => {
  await served?.stop();
  dir.remove();
});

describe('the first five minutes', () => {
  it('agentpost --version prints the installed version', async () => {
    const { stdout } = await run(process.execPath, [BIN, '--version']);
    expect(stdout).toBe(`agentpost ${manifest.version}\n`);
  });

  it('serve prints the next steps, and the printed curl lines create a mailbox', async () => {
    served = await startServe({
      AGENTPOST_DATABASE_URL: `file:${join(dir.path, 'agentpost.db')}`,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: TEST_API_KEY,
      AGENTPOST_RATE_LIMIT_APPLICATION: '0',
    });
    const url = served.url!;
    let output = served.output();
    for (let attempt = 0; attempt < 200 && !output.includes('Examples:'); attempt++) {
      await new Promise((done) => setTimeout(done, 20));
      output = served.output();
    }
    expect(output).toContain(`Dashboard: ${url}/dashboard`);
    const mcp = JSON.parse(/^\s+(\{"mcpServers".*)$/m.exec(output)![1]!) as {
      mcpServers: { agentpost: { command: string; args: string[]; env: Record<string, string> } };
    };
    expect(mcp.mcpServers.agentpost).toEqual({
      command: 'node',
      args: [BIN, 'mcp'],
      env: { AGENTPOST_URL: url, AGENTPOST_API_KEY: '$AGENTPOST_API_KEY' },
    });
    const curls = output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('curl '));
    expect(curls).toHaveLength(2);
    for (const line of curls) {
      const { stdout } = await run('sh', ['-c', line], { env: { ...process.env, AGENTPOST_API_KEY: TEST_API_KEY } });
      expect(JSON.parse(stdout)).toHaveProperty('data');
    }
    const grants = await fetch(`${url}/v3/grants`, { headers: { authorization: `Bearer ${TEST_API_KEY}` } });
    const emails = ((await grants.json()) as { data: { email: string }[] }).data.map((grant) => grant.email);
    expect(emails).toContain('agent@demo.agentpost.localhost');
  });
});
