/**
 * @module tools/compact
 * Tool results sized for a model. The `/v3` API returns full objects; agents get, from the same operations:
 * compact list items (no bodies), message bodies as text with quoted history collapsed (HTML on request), and a
 * character budget on every result. A result over its budget says what was cut and which call returns the rest.
 * MCP and the AI SDK both shape their results here, so both faces read the same. What each tool gets is what its
 * operation's `agent` block says (compact items, bodies, a file, its first line), not a list of tool names here.
 *
 * The parts: the items, bodies and budgets (./compact-items.ts), a thread read (./compact-threads.ts), the size
 * budget and its explicit cuts (./compact-budget.ts), the text rendering (./compact-text.ts).
 */
import type { AnyOperation } from '../src/index.js';
import type { BodyFormat } from '../src/reading/index.js';
import { countTokens } from '../src/tokens/index.js';
import {
  agentOf,
  DEFAULT_LIMITS,
  DEFAULT_MAX_TOKENS,
  limitsFor,
  PAGE_CHARACTERS_PER_TOKEN,
  type Limits,
  callText,
  COMPACT_ITEMS,
  compactLatest,
  fitSnippets,
  operationNamed,
  readableMessage,
  size,
  type Json,
  type ToolCall,
  type Truncation,
} from './compact-items.js';
import { fitThread, THREAD_MESSAGES, threadForAgent } from './compact-threads.js';
import { withinBudget } from './compact-budget.js';
import { fenceFields, SIZING_FENCE } from './fence.js';

export {
  BODY_BUDGET,
  bodyAsText,
  callText,
  CompactMessageSchema,
  compactOutputSchema,
  CompactThreadSchema,
  DEFAULT_MAX_TOKENS,
  INCLUDE_HTML_FIELD,
  operationNamed,
  READ_FIELDS,
  RESULT_BUDGET,
  type ToolCall,
  type Truncation,
} from './compact-items.js';
export { THREAD_MESSAGES, threadForAgent, type ThreadReadOptions } from './compact-threads.js';
export { withinBudget } from './compact-budget.js';
export { renderForAgent } from './compact-text.js';

/**
 * Shapes one operation's output for an agent: compact list items, readable bodies, then the size budget.
 * `input` is what the agent asked (limit, page_token, include_html). A `get_thread` output may carry its
 * `messages` (oldest first), as {@link readForAgent} reads them.
 */
export function shapeForAgent(tool: string, output: Json, input: Json, limits: Limits = DEFAULT_LIMITS): Json {
  const agent = agentOf(tool);
  // A file has its own cap (get_attachment's max_bytes), a document page its max_tokens: passed on whole, not cut here.
  if (agent.file || agent.document) return output;
  const includeHtml = input.include_html === true;
  const format = formatOf(input);
  const pageLimit = Math.min(limits.result, limits.page);
  let shaped = output;
  // With `select` the agent chose its fields itself: the items stay as selected (id, grant_id and object always kept).
  const selected = typeof input.select === 'string' && input.select.trim() !== '';
  if (Array.isArray(output.data) && !selected) {
    const items = output.data as Json[];
    // Compact items, their snippets shortened (all alike) before the page would lose an item to the budget.
    if (agent.compact) shaped = fitSnippets({ ...output, data: items.map(COMPACT_ITEMS[agent.compact]) }, pageLimit);
  } else if (agent.body === 'message') {
    shaped = readableMessage(output, includeHtml, tool, limits.body, undefined, format);
    const bodyCut = shaped.body_truncated as Truncation | undefined;
    // The continuation of a long body: the same call with a larger budget.
    if (bodyCut && !bodyCut.call)
      shaped.body_truncated = { ...bodyCut, call: { tool, arguments: { ...input, max_tokens: 100_000 } } };
  } else if (agent.body === 'thread' && Array.isArray(output.messages)) {
    const { messages, ...thread } = output;
    return threadForAgent(thread, [...(messages as Json[])].reverse(), { includeHtml, input, limits, format });
  } else if (
    agent.body === 'thread' &&
    output.latest_draft_or_message &&
    typeof output.latest_draft_or_message === 'object'
  ) {
    const latest = output.latest_draft_or_message as Json;
    shaped = {
      ...output,
      latest_draft_or_message: compactLatest(latest),
    };
  }
  return withinBudget(tool, shaped, input, Array.isArray(shaped.data) ? pageLimit : limits.result);
}

/** The body format an agent asked for (`body_format`), Markdown when it asked for none. */
const formatOf = (input: Json): BodyFormat =>
  input.body_format === 'text' || input.body_format === 'html' ? input.body_format : 'markdown';

/** The token budget of a read: the caller's `max_tokens`, else {@link DEFAULT_MAX_TOKENS}. */
const maxTokensOf = (input: Json): number =>
  typeof input.max_tokens === 'number' && input.max_tokens > 0 ? input.max_tokens : DEFAULT_MAX_TOKENS;

/** Reads shaped at most for one result (each measured in tokens). */
const READ_ATTEMPTS = 6;
/** Characters per token of a result's JSON first assumed; measured and corrected on each read. */
const CHARACTERS_PER_TOKEN = 4;
/**
 * What a shaped result takes of its token budget: the tokens of its JSON as a model reads it, each string from outside
 * fenced (for a page, its characters over {@link PAGE_CHARACTERS_PER_TOKEN} if that is more; a page is shaped to
 * `Limits.page`, so it fits them). Measured with {@link SIZING_FENCE}: the markers cost the same whatever the boundary
 * (tools/fence.ts), so this is the count of the result with the random boundary it is then given, to the token.
 */
async function resultTokens(shaped: Json): Promise<number> {
  const json = JSON.stringify(fenceFields(shaped, SIZING_FENCE));
  const tokens = await countTokens(json);
  return Array.isArray(shaped.data) ? Math.max(tokens, Math.ceil(json.length / PAGE_CHARACTERS_PER_TOKEN)) : tokens;
}

/**
 * Runs a tool's operation for an agent and shapes its output ({@link shapeForAgent}): the result as the faces
 * return it. `get_thread` also reads the thread's messages (the newest {@link THREAD_MESSAGES}, through
 * list_messages, as the thread resources do), so the conversation comes back as readable text in one call; with
 * `select`, the thread alone, as selected. A page that does not fit the budget is asked again with the limit that
 * fits, so that its next_cursor continues right after the last item returned.
 */
export async function readForAgent(
  executor: (operation: AnyOperation, input: Record<string, unknown>) => Promise<unknown>,
  operation: AnyOperation,
  prepared: Record<string, unknown>,
  asked: Json,
  options: { uriOf?: (messageId: string) => string; reserve?: number } = {},
): Promise<Json> {
  // `reserve`: tokens the caller adds around the result (a resource's wrapping), kept out of the budget.
  const maxTokens = maxTokensOf(asked) - (options.reserve ?? 0);
  // The same call answers the same within one read: shaping again to a smaller size asks the service nothing new.
  const answers = new Map<string, Promise<unknown>>();
  const once = (called: AnyOperation, input: Record<string, unknown>) => {
    const key = `${called.name} ${JSON.stringify(input)}`;
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = executor(called, input)));
    return answer;
  };
  // Shaped in characters, measured in tokens (src/tokens), shaped again smaller while over the budget. Once a size
  // that fits and one that does not are known, the sizes between are tried: the largest that fits is kept (a
  // read shaped much smaller than its budget allows may have cut what a little more room keeps whole).
  let charactersPerToken = CHARACTERS_PER_TOKEN;
  let fits: { shaped: Json; charactersPerToken: number } | undefined;
  let over = Infinity;
  let shaped: Json = {};
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt += 1) {
    shaped = await readWithin(once, operation, prepared, asked, limitsFor(maxTokens, charactersPerToken), options);
    if (operation.agent?.file) return shaped;
    // The sizing fence costs what every boundary costs: a result is shaped the same whatever boundary it draws.
    const tokens = await resultTokens(shaped);
    if (tokens <= maxTokens) {
      // Fitting at once, or close to the smallest size found over the budget: done.
      if (over === Infinity || over - charactersPerToken <= over * 0.05) return shaped;
      fits = { shaped, charactersPerToken };
    } else over = Math.min(over, charactersPerToken);
    // Between a size that fits and one that does not, the middle; else aimed at the budget from this result's own
    // characters per token (a page is held by its own limit, so its size, not the result's limit, is what shrinks).
    charactersPerToken = fits
      ? (fits.charactersPerToken + over) / 2
      : Math.min(charactersPerToken * (maxTokens / tokens), size(shaped) / tokens) * 0.95;
  }
  return fits?.shaped ?? shaped;
}

/**
 * One read shaped to `limits` characters ({@link readForAgent} measures it in tokens).
 */
async function readWithin(
  executor: (operation: AnyOperation, input: Record<string, unknown>) => Promise<unknown>,
  operation: AnyOperation,
  prepared: Record<string, unknown>,
  asked: Json,
  limits: Limits,
  options: { uriOf?: (messageId: string) => string },
): Promise<Json> {
  const tool = operation.name;
  const output = (await executor(operation, prepared)) as Json;
  const selected = typeof asked.select === 'string' && asked.select.trim() !== '';
  if (operation.agent?.body === 'thread' && !selected && typeof output.id === 'string') {
    const page = (await executor(operationNamed('list_messages'), {
      grant_id: prepared.grant_id,
      thread_id: output.id,
      limit: THREAD_MESSAGES,
    })) as { data: Json[]; next_cursor?: string | null };
    // Lists are newest first, which is the order a thread read keeps messages in.
    const read = (compact: number, count: number, cursor: string | undefined) =>
      threadForAgent(output, page.data.slice(0, count), {
        includeHtml: asked.include_html === true,
        input: asked,
        olderCursor: cursor,
        limits,
        format: formatOf(asked),
        compact,
        ...(options.uriOf ? { uriOf: options.uriOf } : {}),
      });
    // Fewer messages named in a small budget: the list of the thread after the first `count` lists the others.
    const cursorAfter = async (count: number) =>
      count === page.data.length && page.next_cursor
        ? page.next_cursor
        : ((
            (await executor(operationNamed('list_messages'), {
              grant_id: prepared.grant_id,
              thread_id: output.id,
              limit: count,
            })) as { next_cursor?: string | null }
          ).next_cursor ?? undefined);
    return await fitThread(read, page.data.length, page.next_cursor ?? undefined, limits.result, cursorAfter);
  }
  const shaped = shapeForAgent(tool, output, asked, limits);
  if (
    !Array.isArray(output.data) ||
    !Array.isArray(shaped.data) ||
    shaped.data.length >= output.data.length ||
    !('limit' in operation.input.shape)
  )
    return shaped;
  return await fittedPage(executor, operation, prepared, asked, output.data.length, shaped, limits);
}

/**
 * A page that fits the budget, asked again of the operation with the limit that fits (its items and next_cursor come
 * from one answer, so the cursor continues right after the last item returned); the page's `truncated` says how many
 * of those asked for are left for the next page and gives the call that reads them. Falls back to `cut` (items cut
 * from the end, the call with a smaller limit in its hint) if the list keeps changing under it.
 */
async function fittedPage(
  executor: (operation: AnyOperation, input: Record<string, unknown>) => Promise<unknown>,
  operation: AnyOperation,
  prepared: Record<string, unknown>,
  asked: Json,
  first: number,
  cut: Json,
  limits: Limits,
): Promise<Json> {
  const tool = operation.name;
  let fit = (cut.data as unknown[]).length;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const again = (await executor(operation, { ...prepared, limit: fit })) as Json;
    const items = (again.data as unknown[] | undefined) ?? [];
    const shaped = shapeForAgent(tool, again, { ...asked, limit: fit }, limits);
    const kept = (shaped.data as unknown[]).length;
    if (kept < items.length) {
      fit = kept;
      continue;
    }
    // No next page: the list changed meanwhile and nothing is left beyond these.
    if (typeof again.next_cursor !== 'string' || again.next_cursor === '') return shaped;
    const left = Math.max(0, first - items.length);
    const call: ToolCall = { tool, arguments: { ...asked, page_token: again.next_cursor } };
    const itemCut = (shaped.truncated as Truncation | undefined)?.hint;
    const hint = [
      `${left} of the ${first} items of this page did not fit the size budget; they start the next page: ${callText(call)}`,
      ...(itemCut ? [itemCut] : []),
    ].join('; ');
    return { ...shaped, truncated: { omitted: left, hint, call } };
  }
  return cut;
}
