/**
 * @module agentpost
 * The core library: `createCore(deps)` wires every service; transports (HTTP, MCP, AI SDK) only translate.
 */
import { createApplicationService } from './applications/application-service.js';
import type { CoreDeps } from './deps.js';
import { createDomainService } from './domains/domain-service.js';
import { createFolderService, type FolderCounter } from './grants/folder-service.js';
import { createGrantService } from './grants/grant-service.js';

/** No mail store yet: every folder is empty. */
const noMessages: FolderCounter = async () => new Map();

/** Builds the core from its dependencies. */
export function createCore(deps: CoreDeps) {
  const applications = createApplicationService(deps);
  const domains = createDomainService(deps);
  const grants = createGrantService(deps);
  const folders = createFolderService(deps, grants, noMessages);
  return { deps, applications, domains, grants, folders };
}

/** The core's type, as transports see it. */
export type Core = ReturnType<typeof createCore>;

export { loadConfig, ConfigError, type Config } from './config.js';
export { AppError, type ErrorCode } from './errors.js';
export { systemClock, randomId, createLogger, unixSeconds, type Clock, type CoreDeps, type DnsResolver, type IdGenerator, type Logger, type RandomBytes } from './deps.js';
export type { Principal, Plan } from './applications/application-service.js';
export { operations, runOperation, defineOperation, type AnyOperation, type Operation, type OperationContext, type OperationHints } from './operations/index.js';
export { canonicalJson, signingString } from './applications/credentials.js';
