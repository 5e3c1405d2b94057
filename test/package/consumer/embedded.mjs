// A plain ESM JavaScript consumer of the installed package, run with plain `node` (no TypeScript loader): imports every
// export, starts the service embedded in this process from the public exports, and lets an AI SDK agent (a scripted
// mock model) make one tool call through the real HTTP stack. Prints one JSON line of what it saw.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import * as agentpost from 'agentpost';
import * as agentpostAi from 'agentpost/ai';
import * as agentpostMcp from 'agentpost/mcp';
import * as agentpostServer from 'agentpost/server';
import * as agentpostStorage from 'agentpost/storage';

const manifest = createRequire(import.meta.url)('agentpost/package.json');
const exported = {
  '.': agentpost,
  './ai': agentpostAi,
  './mcp': agentpostMcp,
  './server': agentpostServer,
  './storage': agentpostStorage,
};
for (const [entry, module] of Object.entries(exported))
  assert.ok(Object.keys(module).length > 0, `agentpost${entry.slice(1)} exports nothing`);
for (const name of ['createAgentpost', 'createCore', 'loadConfig', 'operations', 'runOperation', 'AppError'])
  assert.ok(name in agentpost, `agentpost.${name}`);
assert.equal(typeof agentpostAi.createAgentpostTools, 'function');
assert.equal(typeof agentpostMcp.createMcpServer, 'function');
assert.equal(typeof agentpostServer.createApp, 'function');
assert.equal(typeof agentpostStorage.createDb, 'function');

// The whole service embedded in this process: createAgentpost, on a temporary database, through its fetch handler.
const folder = mkdtempSync(join(tmpdir(), 'agentpost-consumer-'));
const apiKey = 'agp_consumer_test_key_0123456789';
const embedded = await agentpost.createAgentpost({
  AGENTPOST_DATABASE_URL: `file:${join(folder, 'agentpost.db')}`,
  AGENTPOST_API_KEY: apiKey,
  AGENTPOST_LOG_LEVEL: 'warn',
});
const url = 'http://agentpost.embedded';
const fetchApp = (input, init) => embedded.fetch(new Request(input, init));

try {
  const call = async (method, path, body) => {
    const response = await fetchApp(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
    return (await response.json()).data;
  };
  await call('POST', '/v3/admin/domains', { name: 'Consumer', domain_address: 'consumer.agentpost.localhost' });
  const grant = await call('POST', '/v3/connect/custom', {
    provider: 'nylas',
    settings: { email: 'agent@consumer.agentpost.localhost' },
  });

  const tools = agentpostAi.createAgentpostTools({ url, apiKey, grantId: grant.id, fetch: fetchApp });
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  let step = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () =>
      step++ === 0
        ? {
            content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'list_folders', input: '{}' }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: 'text', text: 'done' }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          },
  });
  const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'List my folders.' });
  const output = result.steps[0].toolResults[0]?.output;
  assert.ok(output, `no tool result: ${JSON.stringify(result.steps[0].content)}`);
  const folders = output.data.map((entry) => entry.id);
  assert.ok(folders.includes('inbox'), `folders: ${folders}`);
  console.log(
    JSON.stringify({
      version: manifest.version,
      entries: Object.keys(exported),
      tools: Object.keys(tools).length,
      folders,
      text: result.text,
    }),
  );
} finally {
  await embedded.close();
  rmSync(folder, { recursive: true, force: true });
}
