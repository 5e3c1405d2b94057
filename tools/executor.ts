/**
 * @module tools/executor
 * How a tool call reaches an operation: in-process (a core and a principal) or remote (the `/v3` HTTP API of
 * a running service, with its API key). MCP and AI SDK tools take either, so both faces behave the same.
 */
import {
  AppError,
  HTTP_ERRORS,
  errorCodeOfStatus,
  runOperation,
  type AnyOperation,
  type Core,
  type Principal,
} from '../src/index.js';
import { fieldText } from '../src/operations/index.js';

/** Runs one operation with already-shaped input and returns its output object. */
export type Executor = (operation: AnyOperation, input: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** Runs operations on a core in this process, as `principal`. */
export function localExecutor(core: Core, principal: Principal): Executor {
  return async (operation, input) =>
    (await runOperation(operation, core, input, { principal })) as Record<string, unknown>;
}

/** Calls a running Agentpost over `/v3`, translating each operation's HTTP binding. */
export function remoteExecutor(options: { url: string; apiKey: string; fetch?: typeof fetch | undefined }): Executor {
  const send = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '');
  return async (operation, rawInput) => {
    const binding = operation.http;
    if (!binding) throw new AppError('invalid_request', `${operation.name} is not available over HTTP.`);
    const input = operation.input.parse(rawInput);
    const rest: Record<string, unknown> = { ...input };
    const path = binding.path.replace(/:([a-z_]+)/g, (_match, name: string) => {
      const value = rest[name];
      delete rest[name];
      return encodeURIComponent(fieldText(value ?? ''));
    });
    const url = new URL(`${base}/v3${path}`);
    const hasBody = binding.method === 'POST' || binding.method === 'PUT' || binding.method === 'PATCH';
    if (!hasBody) {
      for (const [key, value] of Object.entries(rest)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value])
          url.searchParams.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
      }
    }
    const response = await send(url, {
      method: binding.method,
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        accept: 'application/json',
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
      },
      ...(hasBody ? { body: JSON.stringify(rest) } : {}),
    });
    const json = (await response.json().catch(() => ({}))) as {
      data?: unknown;
      error?: { message?: string; type?: string };
      request_id?: string;
    };
    if (!response.ok) {
      const code = errorCodeOfStatus(response.status) ?? 'upstream_error';
      // A type of the error's own (sending_paused) travels on; the usual type of the status is the code's anyway.
      const type =
        json.error?.type !== undefined && json.error.type !== HTTP_ERRORS[code].type ? json.error.type : undefined;
      throw new AppError(code, json.error?.message ?? `HTTP ${response.status} from ${url.pathname}`, undefined, {
        type,
      });
    }
    const { request_id: _requestId, ...envelope } = json;
    switch (binding.envelope ?? 'data') {
      case 'empty':
        return {};
      case 'list':
        return envelope;
      default:
        return (json.data ?? {}) as Record<string, unknown>;
    }
  };
}
