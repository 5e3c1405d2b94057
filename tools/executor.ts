/**
 * @module tools/executor
 * How a tool call reaches an operation: in-process (a core and a principal) or remote (the `/v3` HTTP API of
 * a running service, with its API key). MCP and AI SDK tools take either, so both faces behave the same.
 */
import { randomUUID } from 'node:crypto';
import {
  AppError,
  HTTP_ERRORS,
  errorCodeOfStatus,
  runOperation,
  type AnyOperation,
  type Core,
  type OperationContext,
  type Principal,
} from '../src/index.js';
import { fieldText } from '../src/operations/index.js';

/**
 * Who makes a tool call and through what, for the access log and the provenance of sends: the face, the tool, the
 * MCP client and session, and (over Streamable HTTP) the HTTP request's id and the client's address.
 */
export type ToolCall = Pick<OperationContext, 'tool' | 'client' | 'requestId' | 'address'> & {
  /** The agent face (the tool names none for a resource read). */
  face: 'mcp' | 'ai-sdk';
};

/** Runs one operation with already-shaped input and returns its output object; `call` says who calls through what. */
export type Executor = (
  operation: AnyOperation,
  input: Record<string, unknown>,
  call?: ToolCall,
) => Promise<Record<string, unknown>>;

/** The executor with `call` given to every call it makes (one tool call may run several operations). */
export function withCall(executor: Executor, call: ToolCall): Executor {
  return (operation, input) => executor(operation, input, call);
}

/** Runs operations on a core in this process, as `principal`. */
export function localExecutor(core: Core, principal: Principal): Executor {
  return async (operation, input, call) => {
    // The call's own context; each call its own request id when the face has none (stdio, the AI SDK in-process).
    const context: OperationContext = call
      ? { ...call, principal, requestId: call.requestId ?? randomUUID() }
      : { principal };
    return (await runOperation(operation, core, input, context)) as Record<string, unknown>;
  };
}

/**
 * The headers that tell `/v3` which face, client and tool a remote call relays (descriptive only: the service
 * records them in the access log and a send's provenance, and grants nothing on them).
 */
export function relayHeaders(call: ToolCall | undefined): Record<string, string> {
  if (!call) return {};
  const headers: Record<string, string> = { 'x-agentpost-face': call.face };
  if (call.tool) headers['x-agentpost-tool'] = call.tool;
  const name = call.client?.name;
  if (name) headers['x-agentpost-client'] = call.client?.version ? `${name}/${call.client.version}` : name;
  if (call.client?.session) headers['x-agentpost-session'] = call.client.session;
  // Header values are Latin-1 text: anything else is left out rather than failing the call.
  for (const [key, value] of Object.entries(headers)) if (!/^[\x20-\x7e]*$/.test(value)) delete headers[key];
  return headers;
}

/** Calls a running Agentpost over `/v3`, translating each operation's HTTP binding. */
export function remoteExecutor(options: { url: string; apiKey: string; fetch?: typeof fetch | undefined }): Executor {
  const send = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '');
  return async (operation, rawInput, call) => {
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
        ...relayHeaders(call),
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
