/**
 * @module tools/stdio
 * `agentpost mcp`: the MCP server over stdio. With `AGENTPOST_URL` (and `AGENTPOST_API_KEY`) it calls that
 * running service's `/v3` API; without, it runs embedded on the local database as the application whose key
 * is `AGENTPOST_API_KEY` (the default application when unset). `AGENTPOST_GRANT_ID` binds it to one mailbox.
 * Stdout carries the protocol only; logs go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { AppError, createCore, operations, type Config, type CoreDeps, type Permission } from '../src/index.js';
import { localExecutor, remoteExecutor, type Executor } from './executor.js';
import { createMcpServer } from './mcp.js';
import { localEventFeed, remoteEventFeed, type EventFeed } from './event-feed.js';

/** Starts the stdio server; resolves once connected. `createDeps` opens the local database (embedded mode). */
export async function runStdioServer(
  config: Config,
  createDeps: (config: Config) => Promise<CoreDeps>,
): Promise<{ close(): Promise<void> }> {
  let executor: Executor;
  let events: EventFeed;
  let permissions: ReadonlySet<Permission> | undefined;
  let closeDatabase = async () => {};
  if (config.serviceUrl) {
    if (!config.apiKey)
      throw new Error('AGENTPOST_API_KEY: required with AGENTPOST_URL (the key of the application to act as)');
    executor = remoteExecutor({ url: config.serviceUrl, apiKey: config.apiKey });
    events = remoteEventFeed({ url: config.serviceUrl, apiKey: config.apiKey });
    permissions = await remotePermissions(executor);
  } else {
    const deps = await createDeps(config);
    const core = createCore(deps);
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const principal = config.apiKey
      ? await core.accounts.applications.authenticateApiKey(config.apiKey)
      : { applicationId: application.id, via: 'local' as const };
    executor = localExecutor(core, principal);
    events = localEventFeed(core, principal);
    permissions = principal.permissions;
    closeDatabase = async () => {
      await core.mail.attachmentText.close();
      await deps.db.close();
    };
  }
  const server = createMcpServer({
    executor,
    grantId: config.grantId,
    requireApproval: config.requireApproval,
    permissions,
    events,
  });
  await server.connect(new StdioServerTransport());
  return {
    async close() {
      await server.close();
      await closeDatabase();
    },
  };
}

/**
 * The permissions of the key a remote stdio server calls with (`GET /v3/api-keys/current`), so `tools/list` offers
 * only what it may call; undefined (every tool) when the service is older and does not know the route.
 */
async function remotePermissions(executor: Executor): Promise<ReadonlySet<Permission> | undefined> {
  const current = operations.find((operation) => operation.name === 'get_current_api_key')!;
  try {
    const key = (await executor(current, {})) as { permissions?: Permission[] };
    return key.permissions ? new Set(key.permissions) : undefined;
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return undefined;
    throw error;
  }
}
