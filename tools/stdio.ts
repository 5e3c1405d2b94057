/**
 * @module tools/stdio
 * `agentpost mcp`: the MCP server over stdio. With `AGENTPOST_URL` (and `AGENTPOST_API_KEY`) it calls that
 * running service's `/v3` API; without, it runs embedded on the local database as the application whose key
 * is `AGENTPOST_API_KEY` (the default application when unset). `AGENTPOST_GRANT_ID` binds it to one mailbox.
 * Stdout carries the protocol only; logs go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createCore, type Config, type CoreDeps } from '../src/index.js';
import { localExecutor, remoteExecutor, type Executor } from './executor.js';
import { createMcpServer } from './mcp.js';

/** Starts the stdio server; resolves once connected. `createDeps` opens the local database (embedded mode). */
export async function runStdioServer(
  config: Config,
  createDeps: (config: Config) => Promise<CoreDeps>,
): Promise<{ close(): Promise<void> }> {
  let executor: Executor;
  let closeDatabase = async () => {};
  if (config.serviceUrl) {
    if (!config.apiKey)
      throw new Error('AGENTPOST_API_KEY: required with AGENTPOST_URL (the key of the application to act as)');
    executor = remoteExecutor({ url: config.serviceUrl, apiKey: config.apiKey });
  } else {
    const deps = await createDeps(config);
    const core = createCore(deps);
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const principal = config.apiKey
      ? await core.accounts.applications.authenticateApiKey(config.apiKey)
      : { applicationId: application.id, via: 'local' as const };
    executor = localExecutor(core, principal);
    closeDatabase = async () => {
      await core.mail.attachmentText.close();
      await deps.db.close();
    };
  }
  const server = createMcpServer({ executor, grantId: config.grantId, requireApproval: config.requireApproval });
  await server.connect(new StdioServerTransport());
  return {
    async close() {
      await server.close();
      await closeDatabase();
    },
  };
}
