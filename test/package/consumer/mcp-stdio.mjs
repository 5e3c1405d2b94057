// The MCP host set-ups of the README, over stdio, with the MCP client SDK, started from a folder of their own as agent
// hosts do: for an installed package, `npx --prefix <project> --no agentpost mcp`; for a clone,
// `node <clone>/dist/server/cli.js mcp`. Usage: node mcp-stdio.mjs installed PROJECT_FOLDER | clone CLONE_FOLDER.
// Prints one JSON line.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [form, place] = process.argv.slice(2);
assert.ok((form === 'installed' || form === 'clone') && place, 'usage: mcp-stdio.mjs installed PROJECT | clone CLONE');
const folder = mkdtempSync(join(tmpdir(), 'agentpost-mcp-'));
const client = new Client({ name: 'consumer', version: '1.0.0' });
const transport = new StdioClientTransport({
  ...(form === 'installed'
    ? { command: 'npx', args: ['--prefix', place, '--no', 'agentpost', 'mcp'] }
    : { command: 'node', args: [join(place, 'dist', 'server', 'cli.js'), 'mcp'] }),
  cwd: tmpdir(),
  env: {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {}),
    AGENTPOST_DATABASE_URL: `file:${join(folder, 'agentpost.db')}`,
    AGENTPOST_LOG_LEVEL: 'warn',
  },
  stderr: 'pipe',
});
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  assert.ok(names.includes('list_messages') && names.includes('send_message'), names.join(', '));
  const failed = await client.callTool({
    name: 'list_folders',
    arguments: { grant_id: 'nobody@nowhere.agentpost.localhost' },
  });
  assert.equal(failed.isError, true);
  console.log(JSON.stringify({ server: client.getServerVersion(), tools: names.length }));
} finally {
  await client.close();
  rmSync(folder, { recursive: true, force: true });
}
