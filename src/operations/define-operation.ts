/**
 * @module operations/define-operation
 * One operation = name, model-facing description, input and output zod schemas, hints, an optional HTTP
 * binding and the handler. HTTP routes, MCP tools, AI SDK tools and the OpenAPI document are loops over these.
 */
import type { z } from 'zod';
import type { OperationContext } from '../access.js';
import type { Core } from '../core-types.js';
import { currentTestClock, runInTestClock } from '../clock-scope.js';
import { assertJsonDepth } from '../json-depth.js';
import { recorded } from './access-record.js';
import { BODY_READ_FIELDS, checkAgentBlock, type AgentBlock } from './agent.js';
import { authorize } from './authorize.js';
import { assertWritable } from './writable.js';

export type { AgentBlock, AgentFields } from './agent.js';

/** How an operation appears on the `/v3` HTTP API. */
export interface HttpBinding {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Hono path under `/v3`, with `:params` named as the input's fields (e.g. `/grants/:grant_id/folders`). */
  path: string;
  /** Success status (default 200). */
  status?: 200 | 201 | 202;
  /** Success status chosen from the result (e.g. 202 for a scheduled send); overrides `status`. */
  statusOf?: (result: unknown) => 200 | 201 | 202;
  /** Every status `statusOf` may answer, so the OpenAPI document lists each success response (default: `[status]`). */
  statuses?: readonly (200 | 201 | 202)[];
  /**
   * Also accept `multipart/form-data` (as the nylas SDK sends large attachments): the JSON fields come in the
   * form field named here (or `draft`/`message`), and each file part becomes an entry of `attachments`.
   */
  multipart?: 'message';
  /**
   * Response envelope: `data` wraps the result as `{request_id, data}`; `list` spreads it (`{request_id, data,
   * next_cursor}`); `empty` answers `{request_id}` only.
   */
  envelope?: 'data' | 'list' | 'empty';
  /** Admin routes (`/v3/admin/*`) also accept service-account signatures. */
  auth?: 'api_key' | 'api_key_or_service_account';
  /** A DELETE that carries a JSON body (as the nylas SDK removes list items); POST, PUT and PATCH always do. */
  body?: boolean;
  /**
   * The operation also answers as a stream: a request with `Accept: text/event-stream` gets one server-sent event
   * per object its {@link Operation.runStream} yields (`data: <JSON>`), instead of the JSON envelope at the end.
   */
  stream?: boolean;
  /**
   * The operation also answers as an export: a request with `Accept: application/x-ndjson` gets one line of JSON per
   * object its {@link Operation.runStream} yields (every matching object, not one page).
   */
  export?: boolean;
}

/**
 * A deprecation of an operation, announced on every answer of its HTTP route with `Deprecation: @<unix seconds>`
 * (RFC 9745) and, when a removal date is set, `Sunset: <HTTP date>` (RFC 8594); the OpenAPI document says
 * `deprecated: true` with the dates.
 */
export interface Deprecation {
  /** When the operation was deprecated (an ISO 8601 date, `2027-01-31`). */
  since: string;
  /** When it may be removed, at the earliest (ISO 8601); absent, no date is set. */
  sunset?: string;
  /** What to use instead. */
  note?: string;
}

/** The HTTP headers that announce a deprecation. Pure. */
export function deprecationHeaders(deprecation: Deprecation): Record<string, string> {
  const since = Date.parse(deprecation.since);
  if (Number.isNaN(since))
    throw new Error(`deprecation.since: ${JSON.stringify(deprecation.since)} is not an ISO 8601 date`);
  const headers: Record<string, string> = { deprecation: `@${Math.floor(since / 1000)}` };
  if (deprecation.sunset !== undefined) {
    const sunset = Date.parse(deprecation.sunset);
    if (Number.isNaN(sunset))
      throw new Error(`deprecation.sunset: ${JSON.stringify(deprecation.sunset)} is not an ISO 8601 date`);
    headers.sunset = new Date(sunset).toUTCString();
  }
  return headers;
}

/** Whether a route reads its input's fields (other than path parameters) from a JSON body rather than the query. */
export function hasJsonBody(binding: HttpBinding): boolean {
  return binding.method === 'POST' || binding.method === 'PUT' || binding.method === 'PATCH' || binding.body === true;
}

/** Hints for agent hosts (MCP tool annotations). */
export interface OperationHints {
  readOnly: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  /** True when the operation reaches beyond this service (sends mail, calls webhooks). */
  openWorld?: boolean;
}

/** An operation definition. */
export interface Operation<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: Input;
  output: Output;
  hints: OperationHints;
  http?: HttpBinding;
  /** Whether agents get it as an MCP / AI SDK tool (admin operations are HTTP-only). */
  tool: boolean;
  /**
   * `beta`: part of a feature in beta (Agent Accounts, as the specification says): it may still change in ways other
   * `/v3` operations do not. The OpenAPI document marks it `x-beta: true` (README, Versioning).
   */
  stability?: 'beta';
  /** Marks the operation deprecated (README, Versioning): see {@link Deprecation}. */
  deprecation?: Deprecation;
  /** What the operation says about itself to agents (the MCP and AI SDK faces): see {@link AgentBlock}. Checked when defined. */
  agent?: AgentBlock;
  run(core: Core, input: z.output<Input>, context: OperationContext): Promise<z.input<Output>>;
  /**
   * For a `list` envelope: the page as JSON text, for transports that send JSON (HTTP). `data` is the text of the
   * array `run` would return in `data`, byte for byte as `JSON.stringify` writes it; undefined when this input is
   * answered by `run` instead. Lets a list be joined from kept JSON rather than built and serialised per request.
   */
  runJson?(core: Core, input: z.output<Input>, context: OperationContext): Promise<JsonPage | undefined>;
  /**
   * For an `http.stream` binding: the result as a sequence of objects, sent as they come. The promise settles once
   * the answer can start (every check passed), so a refusal still gets its own status; an error thrown by the
   * iterator later ends the stream.
   */
  runStream?(
    core: Core,
    input: z.output<Input>,
    context: OperationContext,
  ): Promise<AsyncIterable<Record<string, unknown>>>;
}

/**
 * A page of a list as JSON: the array of `data` already serialised, as UTF-8 pieces to be written one after the other
 * (`[`, each object, the commas, `]`), and the cursor of the next page.
 */
export interface JsonPage {
  data: readonly Uint8Array[];
  next_cursor?: string;
}

/**
 * Declares an operation; identity function that keeps the input and output types tied together. Throws when its
 * agent block has a key it does not know (or a value of the wrong kind).
 */
export function defineOperation<Input extends z.ZodObject, Output extends z.ZodType>(
  operation: Operation<Input, Output>,
): Operation<Input, Output> {
  if (operation.agent !== undefined) checkAgentBlock(operation.name, operation.agent);
  for (const field of operation.agent?.omit ?? []) {
    if (operation.agent?.body !== undefined && BODY_READ_FIELDS.includes(field)) continue;
    const schema = operation.input.shape[field] as z.ZodType | undefined;
    if (!schema?.safeParse(undefined).success)
      throw new Error(`Operation ${operation.name}: agent.omit names ${field}, which is not an optional input field`);
  }
  return operation;
}

/** Any operation, for registries. */

export type AnyOperation = Operation<z.ZodObject, z.ZodType>;

/**
 * Validates raw input against the operation's schema and runs it. Every face calls this, so validation and
 * behaviour are the same over HTTP, MCP and the AI SDK.
 */
export async function runOperation(
  operation: AnyOperation,
  core: Core,
  rawInput: unknown,
  context: OperationContext,
): Promise<unknown> {
  return inClockOf(core, context, () =>
    recorded(operation, core, rawInput, context, async () => {
      const input = await admit(operation, core, rawInput, context);
      const result = await operation.run(core, input, context);
      // What an agent read that its trust block flags gates its later sends (docs/oversight.md, untrusted-read gate).
      const grantRef = (input as { grant_id?: unknown }).grant_id;
      if (operation.hints?.readOnly === true && typeof grantRef === 'string')
        await core.oversight.gate.noteReads(context.principal, context, grantRef, result);
      return result;
    }),
  );
}

/**
 * As {@link runOperation}, for a transport that sends JSON: the operation's {@link Operation.runJson} page when it
 * has one for this input (`{ json }`), else the result of `run` (`{ result }`). Validation is the same.
 */
export async function runOperationJson(
  operation: AnyOperation,
  core: Core,
  rawInput: unknown,
  context: OperationContext,
): Promise<{ json: JsonPage } | { result: unknown }> {
  return inClockOf(core, context, () =>
    recorded(operation, core, rawInput, context, async () => {
      const input = await admit(operation, core, rawInput, context);
      const json = operation.runJson ? await operation.runJson(core, input, context) : undefined;
      return json ? { json } : { result: await operation.run(core, input, context) };
    }),
  );
}

/** As {@link runOperation}, for a streamed answer ({@link Operation.runStream}); validation is the same. */
export async function runOperationStream(
  operation: AnyOperation,
  core: Core,
  rawInput: unknown,
  context: OperationContext,
): Promise<AsyncIterable<Record<string, unknown>>> {
  if (!operation.runStream) throw new Error(`Operation ${operation.name} has no streamed form.`);
  const runStream = operation.runStream.bind(operation);
  return inClockOf(core, context, () =>
    recorded(operation, core, rawInput, context, async () =>
      runStream(core, await admit(operation, core, rawInput, context), context),
    ),
  );
}

/**
 * Runs `work` on the caller's application's clock: a test-mode application's virtual time (src/clock-scope.ts), read
 * once per call; real time for a production application. A call made inside a test clock's scope (a follow-up the
 * test clock sends) keeps that scope.
 */
async function inClockOf<T>(core: Core, context: OperationContext, work: () => Promise<T>): Promise<T> {
  if (currentTestClock() !== undefined) return work();
  const { applicationId } = context.principal;
  const at = await core.accounts.applications.testClockOf(applicationId);
  return at === undefined ? work() : runInTestClock({ applicationId, at }, work);
}

/** The validated input, once the caller is allowed to run the operation on what it names (./authorize.ts). */
async function admit(operation: AnyOperation, core: Core, rawInput: unknown, context: OperationContext) {
  // Before anything walks the input: loose fields reach JSON columns, whose JSON.stringify recurses per level.
  assertJsonDepth(rawInput, 'input');
  // Before validation, so a refused caller learns nothing from the input's errors either.
  await authorize(core, operation, rawInput, context.principal);
  const input = operation.input.parse(rawInput);
  // A write on a suspended (or, for drafts, calendar and contacts, read-only) grant is refused here, on every face.
  await assertWritable(core, operation.name, input, context.principal);
  return input;
}
