/**
 * @module operations
 * THE registry. Every face (HTTP, MCP, AI SDK, OpenAPI) is built from this list.
 */
import type { AnyOperation } from './define-operation.js';
import * as domains from './domains.js';
import * as folders from './folders.js';
import * as grants from './grants.js';

function register(...groups: Record<string, AnyOperation>[]): readonly AnyOperation[] {
  const all = groups.flatMap((group) => Object.values(group));
  const seen = new Set<string>();
  for (const operation of all) {
    if (seen.has(operation.name)) throw new Error(`Duplicate operation name: ${operation.name}`);
    seen.add(operation.name);
  }
  return all;
}

/** Every operation, in a stable order. */
export const operations: readonly AnyOperation[] = register(grants, folders, domains);

export { defineOperation, runOperation, type AnyOperation, type Operation, type OperationContext, type HttpBinding, type OperationHints } from './define-operation.js';
