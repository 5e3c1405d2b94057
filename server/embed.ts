/**
 * @module agentpost
 * The package's main entry: `createAgentpost(settings)` runs the whole service inside your own process (an agent,
 * its tests): the core, AI SDK tools, MCP servers, the HTTP API as a `fetch` handler, and on `start()` the real
 * HTTP and SMTP listeners and the background workers.
 *
 * ```ts
 * import { createAgentpost } from 'agentpost';
 * const agentpost = await createAgentpost({ AGENTPOST_DATABASE_URL: 'file:./data/agent.db', AGENTPOST_HTTP_PORT: 0 });
 * const tools = agentpost.tools({ grantId: 'assistant@demo.agentpost.localhost' });
 * ```
 *
 * Every name this module exports is the package root's public API, listed one by one (docs/embedding.md, "Public
 * API"; test/package/public-api.test.ts holds the list): nothing is re-exported wholesale. The core's other names
 * (src/index.ts) are internal.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Tool } from 'ai';
import type { Hono } from 'hono';
import type { Principal } from '../src/access.js';
import { loadConfig, unknownSettingMessage, unknownSettings, type Config, type SettingName } from '../src/config.js';
import type { Core } from '../src/core.js';
import type { CoreDeps } from '../src/ports/index.js';
import { createAgentpostTools } from '../tools/ai-sdk.js';
import { localExecutor } from '../tools/executor.js';
import { createMcpServer, localEventFeed } from '../tools/mcp.js';
import type { ToolSetOptions } from '../tools/registry.js';
import { createService, type Listening } from './main.js';
import type { ServiceMetrics } from './metrics.js';
import type { AppEnv } from './types.js';

// Settings and their errors.
/** Parses and validates settings (by their environment variable names, as strings) into a {@link Config}; throws a {@link ConfigError}. */
export { loadConfig };
/** What {@link loadConfig} throws: each invalid setting named in the message (`AGENTPOST_HTTP_PORT: must be a whole number`). */
export { ConfigError } from '../src/config.js';
/** Every `AGENTPOST_*` setting name {@link loadConfig} knows. */
export { SETTING_NAMES } from '../src/config.js';
/** The `AGENTPOST_*` names of an environment that are no setting, each with the closest known name. */
export { unknownSettings };
/** The parsed settings; one `AGENTPOST_*` setting's name. */
export type { Config, SettingName };

// Errors.
/** The error every core operation throws: a stable `code` (an {@link ErrorCode}), a message for the caller, optional `details`. */
export { AppError } from '../src/errors.js';
/** The codes of {@link AppError} (`not_found`, `invalid_request`, `forbidden`, …). */
export type { ErrorCode } from '../src/errors.js';

// The core, built yourself, and what it needs.
/** Wires every service of the core from its dependencies (`createCore(deps)`); {@link createAgentpost} does it for you. */
export { createCore } from '../src/core.js';
/** The core services (`core.mail.messages`, `core.calendar.events`, …); the dependencies {@link createCore} takes; whom a call acts for. */
export type { Core, CoreDeps, Principal };
/** The dependencies' interfaces an embedder may implement: time, logs, counters, Smart Compose's model, secrets at rest. */
export type { Clock, Logger, Metrics, TextGenerator, SecretBox } from '../src/ports/index.js';
/** The system clock (`deps.clock`). */
export { systemClock } from '../src/system/clock.js';
/** Time-ordered ids from a clock (`deps.newId`). */
export { timeOrderedIds } from '../src/system/ids.js';
/** The system's DNS resolver, or the servers given (`deps.dns`). */
export { systemDns } from '../src/system/dns.js';
/** A JSON-lines logger at a level (`deps.logger`). */
export { createLogger } from '../src/system/logger.js';
/** The installation's secret box (`deps.secrets`): the key from `AGENTPOST_SECRET_KEY` or its file, checked against the database. */
export { openSecretBox } from '../src/secrets/index.js';
/** A secret box on a key of your own (`deps.secrets`), with earlier keys to read what they sealed. */
export { createSecretBox } from '../src/secrets/index.js';
/** Smart Compose's model: an AI SDK language model of your own as the core's TextGenerator (`deps.text`). */
export { textGeneratorOf } from './ai-text-generator.js';

// The operations.
/** Every operation of the registry (what `/v3`, the MCP server and the AI SDK tools are built from). */
export { operations } from '../src/operations/index.js';
/** Validates an input against an operation's schema, authorizes the principal and runs the operation on a core. */
export { runOperation } from '../src/operations/index.js';
/** One operation of the registry (its name, schemas, HTTP binding, hints); {@link AnyOperation} is any of them. */
export type { Operation, AnyOperation } from '../src/operations/index.js';
/** What {@link runOperation} is told about the call: the principal, the request id, the idempotency key. */
export type { OperationContext } from '../src/access.js';

// Webhooks.
/** Checks a webhook delivery's signature (Nylas `x-nylas-signature` or Standard Webhooks) against the endpoint's secret. */
export { verifyWebhookSignature } from '../src/webhooks/index.js';
/** The options of {@link verifyWebhookSignature}, and its answer. */
export type { VerifyWebhookOptions, WebhookVerification } from '../src/webhooks/index.js';

/** What {@link Agentpost.start} resolves: the roles, the HTTP URL, the SMTP port and the background work it started. */
export type { Listening };

/**
 * The settings of {@link createAgentpost}: the environment variables of docs/configuration.md, by the
 * same names, as an object. Numbers and booleans may be given as such (`AGENTPOST_HTTP_PORT: 0`). Only what is
 * given counts: `process.env` is not read (pass `{ ...process.env }` to use it).
 */
export type AgentpostSettings = { [Name in SettingName]?: string | number | boolean | undefined };

/** Options of {@link createAgentpost} besides the settings. */
export interface AgentpostOptions {
  /** Replaces dependencies of the core (clock, DNS resolver, SMTP client, …); tests use it. */
  deps?: Partial<CoreDeps>;
}

/** Whom tools and MCP servers act for, and how they are bound. */
export interface AgentToolOptions extends ToolSetOptions {
  /** The application to act as (default: the default application). */
  principal?: Principal;
}

/** An embedded Agentpost. */
export interface Agentpost {
  /** The parsed settings. */
  readonly config: Config;
  /** The core services (`core.mail.messages`, `core.calendar.events`, …), for direct calls. */
  readonly core: Core;
  /** The default application's id. */
  readonly applicationId: string;
  /**
   * The default application's API key when it is known: `AGENTPOST_API_KEY` when given, else the key generated by
   * this call on a fresh database (later starts on the same database cannot show it again: only its hash is kept).
   */
  readonly apiKey: string | undefined;
  /** The principal of the default application (what tools and MCP servers act as unless told otherwise). */
  readonly principal: Principal;
  /** The HTTP API (`/v3`, `/mcp`, `/livez`, `/readyz`, `/metrics`) as a fetch handler; works without `start()`. */
  fetch(request: Request): Promise<Response>;
  /** The Hono application behind {@link Agentpost.fetch}. */
  readonly app: Hono<AppEnv>;
  /** This instance's Prometheus registry (`metrics.registry`). */
  readonly metrics: ServiceMetrics;
  /** Vercel AI SDK tools (`ai` v6) that call the core in-process; same names and schemas as the MCP tools. */
  tools(options?: AgentToolOptions): Record<string, Tool>;
  /** A new MCP server on the core (connect it to any transport: stdio, in-memory, Streamable HTTP). */
  createMcpServer(options?: AgentToolOptions): McpServer;
  /**
   * Listens (HTTP on `AGENTPOST_HTTP_PORT`, SMTP on `AGENTPOST_SMTP_PORT`; 0 picks free ports) and starts the workers;
   * with `AGENTPOST_ROLES`, only the parts it names (the others are `undefined` in the answer).
   */
  start(): Promise<Listening>;
  /** Graceful stop (in-flight work finishes within `AGENTPOST_SHUTDOWN_TIMEOUT`), then the database closes. */
  close(): Promise<void>;
}

/**
 * Opens (and migrates) the database, makes the default application when missing, registers `AGENTPOST_DOMAINS`,
 * and returns the embedded service, not yet listening. Validation is `loadConfig`'s: a bad value throws a
 * `ConfigError` naming the setting; an unknown `AGENTPOST_*` name is warned about in the log, with the closest one.
 */
export async function createAgentpost(
  settings: AgentpostSettings = {},
  options: AgentpostOptions = {},
): Promise<Agentpost> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined || value === null) continue;
    env[name] = typeof value === 'string' ? value : String(value);
  }
  const config = loadConfig(env);
  const service = await createService(config, options.deps ?? {});
  const { logger } = service.core.deps;
  for (const unknown of unknownSettings(env)) logger.warn(unknownSettingMessage(unknown), { variable: unknown.name });
  const principal: Principal = { applicationId: service.applicationId, via: 'local' };
  const executorFor = (toolOptions: AgentToolOptions) =>
    localExecutor(service.core, toolOptions.principal ?? principal);
  return {
    config,
    core: service.core,
    applicationId: service.applicationId,
    apiKey: config.apiKey ?? service.generatedKey,
    principal,
    app: service.app,
    metrics: service.metrics,
    fetch: async (request) => service.app.fetch(request),
    tools: (toolOptions = {}) =>
      createAgentpostTools({
        core: service.core,
        principal: toolOptions.principal ?? principal,
        grantId: toolOptions.grantId,
        requireApproval: toolOptions.requireApproval,
      }),
    createMcpServer: (toolOptions = {}) =>
      createMcpServer({
        executor: executorFor(toolOptions),
        grantId: toolOptions.grantId,
        requireApproval: toolOptions.requireApproval,
        events: localEventFeed(service.core, toolOptions.principal ?? principal),
      }),
    start: () => service.start(),
    close: () => service.close(),
  };
}
