/**
 * @module operations/agent
 * What an operation says about itself to agents: the `agent` block of `defineOperation`. The MCP server and the
 * AI SDK tools (tools/) read it to gate sends, compact lists, render bodies and name what a write did; they keep no
 * table of tool names. The block is data and small kinds; the code that acts on them stays in tools/.
 */
import { z } from 'zod';

/** The input an agent gave a tool, or a result as the faces read it (a send's `data` unwrapped). */
export type AgentFields = Record<string, unknown>;

/**
 * A field of an agent's input or of a result as text for a line an agent reads: an object or a list as its JSON
 * (never `[object Object]`), anything else as String() gives it.
 */
export function fieldText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** How an operation appears to agents (the MCP and AI SDK faces). Every field is optional; most operations set none. */
export interface AgentBlock {
  /**
   * The operation sends mail: with `requireApproval` a person approves each call (but a dry run) first.
   * - `message`: its input composes the message (to, subject, …). The person is asked `Send "<subject>" to <to> from
   *   <mailbox>?`; where no one can be asked (an MCP client without elicitation) the input is saved as a draft
   *   (create_draft) for a person to send, and nothing is sent.
   * - `draft`: its input's `draft_id` names the draft it sends. The person is asked `Send draft <id> from <mailbox>?`;
   *   where no one can be asked nothing is done.
   *
   * The first line of its result says what was sent or scheduled (or, for a dry run, what would be).
   */
  sends?: 'message' | 'draft';
  /**
   * A list whose items reach agents compacted, with the compact item as the tool's output schema, and read as text
   * lines: `messages` (messages and drafts: addresses, subject, snippet, flags, attachment names; no body or headers)
   * or `threads` (participants, subject, snippet, newest date, message count, flags).
   */
  compact?: 'messages' | 'threads';
  /**
   * A read that carries mail bodies: agents get them as text with quoted history collapsed, and the tool takes
   * `include_html` for the HTML too. `message`: one message or draft; `thread`: a conversation, read with its newest
   * messages.
   */
  body?: 'message' | 'thread';
  /** The result is a file with its own size cap (`max_bytes`): passed on whole, not cut to the result budget. */
  file?: true;
  /**
   * The result is one page of a document's text (`text`, `next_cursor`, `metadata`) sized by its own `max_tokens`:
   * passed on whole, not cut to the result budget, and read as a line about the file, the text, and the call for
   * the next page.
   */
  document?: true;
  /**
   * The first line of a write's text result: what the call did, naming the ids it made or changed
   * (`Created draft d_1 in thread t_1`). `result` is the operation's answer (its `data` when it has one), `input` what
   * the agent gave (a delete answers nothing, so its line names the id it was given).
   */
  headline?: (result: AgentFields, input: AgentFields) => string;
  /**
   * Optional input fields the tools do not offer: compatibility and integration fields no agent needs (custom
   * headers, developer metadata, deprecated spellings), left out so `tools/list` stays small (issue 35: at most
   * 24,000 characters). The `/v3` API still takes them. With `body`, it may also name the fields the faces add to a
   * read ({@link BODY_READ_FIELDS}): the tool then reads bodies the default way.
   */
  omit?: readonly string[];
}

/** The tool-only fields the faces add to a read with `body` (tools/compact-items.ts), which `omit` may name too. */
export const BODY_READ_FIELDS: readonly string[] = ['include_html', 'body_format', 'max_tokens'];

const AgentBlockSchema = z.strictObject({
  sends: z.enum(['message', 'draft']).optional(),
  compact: z.enum(['messages', 'threads']).optional(),
  body: z.enum(['message', 'thread']).optional(),
  file: z.literal(true).optional(),
  document: z.literal(true).optional(),
  headline: z
    .custom<NonNullable<AgentBlock['headline']>>((value) => typeof value === 'function', {
      message: 'expected a function (result, input) => string',
    })
    .optional(),
  omit: z.array(z.string()).min(1).optional(),
});

/** The fields an agent block may have. */
export const AGENT_BLOCK_KEYS: readonly string[] = Object.keys(AgentBlockSchema.shape);

/**
 * Checks an operation's agent block when the operation is defined: a key the block does not know, or a value of the
 * wrong kind, throws an Error naming the operation, so a typo fails at load instead of being ignored by the faces.
 */
export function checkAgentBlock(operation: string, block: unknown): void {
  const checked = AgentBlockSchema.safeParse(block);
  if (checked.success) return;
  const problems = checked.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')} (an agent block has ${AGENT_BLOCK_KEYS.join(', ')})`
      : `${['agent', ...issue.path.map(String)].join('.')}: ${issue.message}`,
  );
  throw new Error(`Operation ${operation}: its agent block is invalid: ${problems.join('; ')}`);
}
