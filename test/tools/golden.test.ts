/**
 * Golden files lock what agents and API clients see: the MCP tool manifest and the OpenAPI document, both
 * derived from the operations registry. After an intended change, refresh them with
 *   UPDATE_GOLDEN=1 npx vitest run test/tools/golden.test.ts
 * and review the diff.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { operations } from '../../src/index.js';
import { buildOpenApiDocument } from '../../server/openapi.js';
import { createMcpServer } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';

const folder = join(import.meta.dirname, '..', 'fixtures', 'golden');

function matchesGolden(name: string, actual: unknown) {
  const path = join(folder, name);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(path)) writeFileSync(path, text);
  expect(JSON.parse(text), `${name} changed: review, then refresh with UPDATE_GOLDEN=1`).toEqual(
    JSON.parse(readFileSync(path, 'utf8')),
  );
}

describe('golden files', () => {
  it('locks the MCP tool manifest', async () => {
    const server = createMcpServer({ executor: async () => ({}) });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'golden', version: '1.0.0' });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
    const { tools } = await client.listTools();
    matchesGolden('tools.json', tools);
  });

  it('gives the AI SDK exactly the MCP tool names', async () => {
    const manifest = JSON.parse(readFileSync(join(folder, 'tools.json'), 'utf8')) as { name: string }[];
    const tools = createAgentpostTools({ url: 'http://127.0.0.1:1', apiKey: 'unused' });
    expect(Object.keys(tools).sort()).toEqual(manifest.map((tool) => tool.name).sort());
  });

  it('locks the OpenAPI document', () => {
    matchesGolden('openapi.json', buildOpenApiDocument(operations, { version: '0.1.0' }));
  });
});
