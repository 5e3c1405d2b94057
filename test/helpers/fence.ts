/**
 * Tests of what a tool reads that predate the data fence (issue 35) assert on the text inside it: `unfence` takes
 * the markers and the line naming them away, so those assertions read the text as before. test/tools/fence-reads.test.ts
 * asserts the fence itself. `unfence` is the examples' own (examples/support/fence.ts).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfence } from '../../examples/support/fence.js';

/** The client with its tool results and resources read unfenced. */
export function unfencedClient(client: Client): Client {
  const callTool = client.callTool.bind(client);
  const readResource = client.readResource.bind(client);
  client.callTool = async (...args: Parameters<Client['callTool']>) => unfence(await callTool(...args));
  client.readResource = async (...args: Parameters<Client['readResource']>) => unfence(await readResource(...args));
  return client;
}

/** AI SDK tools whose results are read unfenced. */
export function unfencedTools<T extends Record<string, { execute?: (...args: never[]) => unknown }>>(tools: T): T {
  for (const tool of Object.values(tools)) {
    const execute = tool.execute;
    if (!execute) continue;
    (tool as { execute: unknown }).execute = async (...args: never[]) => unfence(await execute(...args));
  }
  return tools;
}
