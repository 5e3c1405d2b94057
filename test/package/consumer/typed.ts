// A TypeScript consumer of the installed package, compiled with `strict`, `exactOptionalPropertyTypes` and
// `skipLibCheck: false` under node16 and bundler resolution (test/package/consumer.test.ts writes the tsconfigs).
// It is type-checked only: every entry point, and the options a consumer passes, values from the environment included.
import { randomBytes } from 'node:crypto';
import {
  AppError,
  createAgentpost,
  createCore,
  createLogger,
  createSecretBox,
  loadConfig,
  openSecretBox,
  operations,
  runOperation,
  systemClock,
  systemDns,
  timeOrderedIds,
  type Config,
  type Core,
  type CoreDeps,
  type Principal,
} from 'agentpost';
import { createAgentpostTools } from 'agentpost/ai';
import { createMcpServer, localExecutor, remoteExecutor, type Executor } from 'agentpost/mcp';
import { createApp } from 'agentpost/server';
import { createDb, migrate, tables, type Database } from 'agentpost/storage';

export async function embed(
  env: Record<string, string | undefined>,
  overrides: { smtp?: CoreDeps['smtp']; notifier?: CoreDeps['notifier'] } = {},
): Promise<{ core: Core; fetch: (request: Request) => Response | Promise<Response>; close(): Promise<void> }> {
  const config: Config = loadConfig(env);
  const busy = env.BUSY_TIMEOUT_MS;
  const db: Database = await createDb({
    url: config.databaseUrl,
    authToken: env.AGENTPOST_DATABASE_AUTH_TOKEN,
    busyTimeoutMs: busy ? Number(busy) : undefined,
  });
  await migrate(db);
  const logger = createLogger(config.logLevel);
  // The installation's key (AGENTPOST_SECRET_KEY, else the key file), checked against the database; or a box of one's own.
  const secrets = env.FIXED_SECRET_KEY
    ? createSecretBox(env.FIXED_SECRET_KEY, config.secrets.previousKeys)
    : await openSecretBox({ db, config, logger, clock: systemClock });
  const deps: CoreDeps = {
    db,
    config,
    clock: systemClock,
    newId: timeOrderedIds(systemClock),
    randomBytes,
    dns: systemDns(),
    logger,
    secrets,
    smtp: overrides.smtp,
    notifier: overrides.notifier,
  };
  const core = createCore(deps);
  const app = createApp({ core });
  return { core, fetch: (request) => app.fetch(request), close: () => db.close() };
}

export function agentTools(core: Core, principal: Principal, env: Record<string, string | undefined>) {
  const local = createAgentpostTools({
    core,
    principal,
    grantId: env.AGENTPOST_GRANT_ID,
    requireApproval: env.AGENTPOST_REQUIRE_APPROVAL === 'true',
  });
  const customFetch: typeof fetch | undefined = env.NO_PROXY ? fetch : undefined;
  const remote = createAgentpostTools({
    url: env.AGENTPOST_URL ?? 'http://127.0.0.1:3000',
    apiKey: env.AGENTPOST_API_KEY ?? '',
    grantId: env.AGENTPOST_GRANT_ID,
    fetch: customFetch,
  });
  const executor: Executor = env.AGENTPOST_URL
    ? remoteExecutor({ url: env.AGENTPOST_URL, apiKey: env.AGENTPOST_API_KEY ?? '' })
    : localExecutor(core, principal);
  const server = createMcpServer({ executor, grantId: env.AGENTPOST_GRANT_ID });
  return { local, remote, server };
}

export async function firstOperation(core: Core, principal: Principal, request: Request): Promise<string> {
  const operation = operations[0];
  if (!operation) throw new AppError('internal', 'no operations');
  try {
    await runOperation(
      operation,
      core,
      {},
      {
        principal,
        requestId: request.headers.get('x-request-id') ?? undefined,
        idempotencyKey: request.headers.get('idempotency-key') ?? undefined,
      },
    );
  } catch (error) {
    if (error instanceof AppError) return error.code;
  }
  return operation.name;
}

export const messageTable: string = tables.messages._.name;

/** The embedding API, as an agent's own code uses it: settings by their environment names, tools, an MCP server. */
export async function embedded(env: Record<string, string | undefined>) {
  const agentpost = await createAgentpost({
    AGENTPOST_DATABASE_URL: env.AGENTPOST_DATABASE_URL,
    AGENTPOST_HTTP_PORT: 0,
    AGENTPOST_SMTP_PORT: 0,
    AGENTPOST_LOG_LEVEL: 'warn',
  });
  const tools = agentpost.tools({ grantId: env.AGENTPOST_GRANT_ID });
  const server = agentpost.createMcpServer({ grantId: env.AGENTPOST_GRANT_ID });
  const response: Response = await agentpost.fetch(new Request('http://agentpost.local/readyz'));
  const { url, smtpPort } = await agentpost.start();
  await agentpost.close();
  return { tools: Object.keys(tools), server, status: response.status, url, smtpPort, key: agentpost.apiKey };
}
