/**
 * @module tools/compact-items
 * What an agent reads of each item (./compact.ts): the budgets, the compact list items (no bodies) and their output
 * schemas, message bodies as text with quoted history collapsed, and the operations' `agent` blocks by tool name.
 */
import { fieldText, readStoredBody } from '../src/operations/index.js';
import { z } from 'zod';
import { operations, type AnyOperation } from '../src/index.js';
import type { BodyFormat } from '../src/reading/index.js';
import { BodyFormatSchema, MaxTokensSchema } from '../src/schemas/common.js';
import { trustWarnings } from './compact-trust.js';
import { fenceFields, SIZING_FENCE } from './fence.js';

/**
 * Characters one tool result may take (its structured JSON; the text rendering is shorter). About 5,000 tokens:
 * a page of 50 compact messages fits, one long body does not crowd out the rest of a model's context.
 */
export const RESULT_BUDGET = 20_000;

/** Characters of one message body (as text, or as HTML with `include_html`) inside a result. */
export const BODY_BUDGET = 12_000;

/**
 * Tokens a read takes when the caller sets no `max_tokens`: a 50-item list, a 15-message thread or one long message
 * each fit in about this many (counted with src/tokens, as the result's JSON).
 */
export const DEFAULT_MAX_TOKENS = 5_000;

/**
 * Characters of a page's JSON, fence included, per token of its budget at most: 15,000 at the default 5,000 tokens,
 * the size issue 35 sets for a list of 50 (its snippets are shortened to fit). The fence's digits take about three
 * characters a token and a list has two fenced strings an item, so a page that fits its tokens may not fit this.
 */
export const PAGE_CHARACTERS_PER_TOKEN = 3;

/**
 * The character sizes one read is shaped to: what its token budget allows (readForAgent measures and adjusts).
 * Characters are counted as the agent reads them, fence included ({@link size}).
 */
export interface Limits {
  /** Characters of the whole result (its JSON). */
  result: number;
  /** Characters of one message body. */
  body: number;
  /** Characters of a page (a list's result): at most {@link PAGE_CHARACTERS_PER_TOKEN} per token of its budget. */
  page: number;
}
export const DEFAULT_LIMITS: Limits = {
  result: RESULT_BUDGET,
  body: BODY_BUDGET,
  page: DEFAULT_MAX_TOKENS * PAGE_CHARACTERS_PER_TOKEN,
};
/** Limits for a token budget at `charactersPerToken` (a body takes at most 60% of the result, as 12,000 of 20,000). */
export const limitsFor = (maxTokens: number, charactersPerToken: number): Limits => {
  const result = Math.max(1_000, Math.floor(maxTokens * charactersPerToken));
  // A page has no floor: a small budget holds fewer items (its next page continues right after them).
  const page = Math.floor(maxTokens * Math.min(charactersPerToken, PAGE_CHARACTERS_PER_TOKEN));
  return { result, body: Math.floor(result * 0.6), page };
};

/**
 * Characters of a list item's snippet at most. A page over its budget has its snippets shortened further, all alike,
 * before it loses items ({@link fitSnippets}): at the default budget a page of 50 messages keeps all 50.
 */
export const SNIPPET_LENGTH = 100;
/** Fewer characters than this and a snippet says nothing: a page that cannot give its snippets that many has none. */
export const SNIPPET_MINIMUM = 20;
/** Addresses a list item names (its sender, a draft's recipients, a thread's participants); the rest are counted. */
const ADDRESSES_SHOWN = 3;

export type Json = Record<string, unknown>;
export type Participant = { name?: string; email: string };
/** What an operation says about itself to agents (src/operations/agent.ts). */
export type AgentBlock = NonNullable<AnyOperation['agent']>;

const AttachmentNoteSchema = z.object({ id: z.string(), filename: z.string(), size: z.number() });
/** Addresses as a list item has them (`a@x, b@y +2 more`), or the participants themselves when `select` names them. */
const AddressesSchema = z.union([z.string(), z.array(z.object({ name: z.string().optional(), email: z.string() }))]);
const ToolCallSchema = z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) });
const TruncationSchema = z
  .object({
    omitted: z.number().int().describe('Items or characters left out'),
    hint: z.string().describe('What was cut and the call that returns the rest'),
    call: ToolCallSchema.optional().describe('That call: a tool and its arguments'),
  })
  .optional()
  .describe('Present when the result was cut to its size budget');

/** A tool call an agent can make as it is: the continuation of a cut result. */
export interface ToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * What a cut result says about the cut: how much was left out, a sentence naming the call that returns it, and
 * that call. A result is never cut without one.
 */
export interface Truncation {
  omitted: number;
  hint: string;
  call?: ToolCall;
}

/**
 * A message or draft as a list tool returns it: who, what, when and what is special about it, in few tokens. No
 * body, no display names (the address is what identifies a sender; a spoofed name shows in `trust`), no flag that is
 * false; `select` or get_message give the rest (with `select`, the items are as selected, the fields as /v3 has them).
 */
export const CompactMessageSchema = z.object({
  id: z.string(),
  thread_id: z.string().optional(),
  date: z.number().optional().describe('Unix seconds'),
  from: AddressesSchema.optional().describe('Sender addresses'),
  to: AddressesSchema.optional().describe('Recipient addresses, on drafts and sent messages only'),
  subject: z.string().optional(),
  snippet: z.string().optional().describe('The start of the text, shortened to fit the page'),
  unread: z.boolean().optional().describe('Present when true (or selected)'),
  starred: z.boolean().optional().describe('Present when true (or selected)'),
  folders: z.array(z.string()).optional().describe('Absent when the message is in the inbox only'),
  attachments: z.array(AttachmentNoteSchema).optional(),
  automated: z
    .string()
    .optional()
    .describe(
      'Present when a machine wrote it: auto_reply, bounce, list, bulk, no_reply, …; a reply to it is refused unless the send says allow_automated_reply',
    ),
  trust: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Trust warnings only; absent when all clear (get_message has the whole block)'),
});

/** A thread as list_threads returns it (as a message: addresses, no false flags). */
export const CompactThreadSchema = z.object({
  id: z.string(),
  date: z.number().optional().describe('Unix seconds of the newest message'),
  participants: AddressesSchema.optional().describe('Participant addresses'),
  subject: z.string().optional(),
  snippet: z.string().optional().describe('The start of the newest text, shortened to fit the page'),
  message_count: z.number().int().optional(),
  draft_ids: z.array(z.string()).optional(),
  unread: z.boolean().optional().describe('Present when true (or selected)'),
  starred: z.boolean().optional().describe('Present when true (or selected)'),
  has_attachments: z.boolean().optional().describe('Present when true (or selected)'),
  folders: z.array(z.string()).optional().describe('Absent when the thread is in the inbox only'),
  claim: z.object({ by: z.string(), until: z.number() }).optional().describe("Another agent's claim_thread"),
});

const page = (item: z.ZodType) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().optional().describe('Pass as page_token for the next page'),
    truncated: TruncationSchema.describe(
      'Present when fewer items than asked fitted the size budget: the rest start the next page',
    ),
  });

/** The compact item of each kind of list an operation's `agent.compact` names. */
const COMPACT_ITEM_SCHEMAS: Record<NonNullable<AgentBlock['compact']>, z.ZodObject> = {
  messages: CompactMessageSchema,
  threads: CompactThreadSchema,
};

/** The output schema of a list tool whose items are compacted (`agent.compact`); the other tools keep their operation's. */
export const compactOutputSchema = (kind: NonNullable<AgentBlock['compact']>): z.ZodObject =>
  page(COMPACT_ITEM_SCHEMAS[kind]);

/** The tool-only input fields that ask for more than the compact default: tools whose operation has `agent.body` take them. */
export const INCLUDE_HTML_FIELD = {
  include_html: z.boolean().optional().describe('Also the HTML (hidden parts removed)'),
};

export const operationsByName = new Map(operations.map((operation) => [operation.name, operation]));
/** The agent block of a tool's operation (empty for a tool that sets none, or a name that is no operation). */
export const agentOf = (tool: string): AgentBlock => operationsByName.get(tool)?.agent ?? {};

/**
 * The fields every read tool takes (its operation has `agent.body` or `agent.compact`): `body_format` and
 * `max_tokens`, the schemas of get_message's /v3 extensions (one definition, src/schemas/common.ts).
 */
export const READ_FIELDS = { body_format: BodyFormatSchema, max_tokens: MaxTokensSchema };

export const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);
/** A call as an agent reads it in a hint: `get_message {"message_id":"…"}`. */
export const callText = (call: ToolCall) => `${call.tool} ${JSON.stringify(call.arguments)}`;
/** The agent's own `grant_id`, for a continuation call (absent when the tools are bound to one mailbox). */
export const grantOf = (input: Json): Json => (typeof input.grant_id === 'string' ? { grant_id: input.grant_id } : {});
export const readMessageCall = (input: Json, id: unknown): ToolCall => ({
  tool: 'get_message',
  arguments: { ...grantOf(input), message_id: String(id) },
});
export const definedOnly = (value: Json): Json =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));

/** `true` when `value` is, else nothing: a list item states only the flags that are set. */
const whenSet = (value: unknown): true | undefined => (value === true ? true : undefined);

/** Folders worth stating: all of them, unless the item is in the inbox only. */
function foldersOf(folders: unknown): string[] | undefined {
  if (!Array.isArray(folders) || folders.length === 0) return undefined;
  return folders.length === 1 && folders[0] === 'inbox' ? undefined : (folders as string[]);
}

/** The addresses of a list of participants, the first {@link ADDRESSES_SHOWN}, then how many more. */
function addresses(people: unknown): string | undefined {
  if (!Array.isArray(people)) return undefined;
  const emails = (people as Participant[]).map((person) => person?.email).filter((email) => typeof email === 'string');
  if (emails.length === 0) return undefined;
  const more = emails.length - ADDRESSES_SHOWN;
  return `${emails.slice(0, ADDRESSES_SHOWN).join(', ')}${more > 0 ? ` +${more} more` : ''}`;
}

/** A draft or a sent message: its recipients are what tells it apart, not its sender (the mailbox itself). */
const isOutgoing = (message: Json): boolean =>
  message.object === 'draft' || (Array.isArray(message.folders) && message.folders.includes('sent'));

/** A message or draft as a list item ({@link CompactMessageSchema}). */
export function compactMessage(message: Json): Json {
  const attachments = (message.attachments as Json[] | undefined)
    ?.filter((attachment) => attachment.is_inline !== true)
    .map((attachment) => ({ id: attachment.id, filename: attachment.filename, size: attachment.size }));
  return definedOnly({
    id: message.id,
    thread_id: message.thread_id,
    date: message.date ?? message.updated_at,
    from: isOutgoing(message) ? undefined : addresses(message.from),
    to: isOutgoing(message) ? addresses(message.to) : undefined,
    subject: message.subject,
    snippet: typeof message.snippet === 'string' ? cut(message.snippet, SNIPPET_LENGTH) : undefined,
    unread: whenSet(message.unread),
    starred: whenSet(message.starred),
    folders: foldersOf(message.folders),
    attachments: attachments?.length ? attachments : undefined,
    automated: (message.automated as Json | undefined)?.kind,
    trust: trustWarnings(message.trust),
  });
}

/**
 * A thread's newest message or draft (`latest_draft_or_message`) as a thread read carries it: as a list item, but in
 * the thread's own schema (participants, flags and attachments as the message has them).
 */
export function compactLatest(latest: Json): Json {
  const attachments = (latest.attachments as Json[] | undefined)?.filter((attachment) => attachment.is_inline !== true);
  return definedOnly({
    ...compactMessage(latest),
    from: latest.from,
    to: latest.to,
    automated: latest.automated,
    unread: latest.unread,
    starred: latest.starred,
    folders: latest.folders,
    attachments: attachments?.length ? attachments : undefined,
    grant_id: latest.grant_id,
    object: latest.object,
  });
}

function compactThread(thread: Json): Json {
  const drafts = thread.draft_ids as string[] | undefined;
  return definedOnly({
    id: thread.id,
    date: thread.latest_message_received_date ?? thread.latest_message_sent_date ?? thread.earliest_message_date,
    participants: addresses(thread.participants),
    subject: thread.subject,
    snippet: typeof thread.snippet === 'string' ? cut(thread.snippet, SNIPPET_LENGTH) : undefined,
    message_count: (thread.message_ids as unknown[] | undefined)?.length,
    draft_ids: drafts?.length ? drafts : undefined,
    unread: whenSet(thread.unread),
    starred: whenSet(thread.starred),
    has_attachments: whenSet(thread.has_attachments),
    folders: foldersOf(thread.folders),
    claim: claimOf(thread.claim),
  });
}

/** A thread's claim as a list item shows it: who (the key's name) and until when. */
function claimOf(claim: unknown): Json | undefined {
  if (claim === null || typeof claim !== 'object') return undefined;
  const { claimed_by: by, expires_at: until } = claim as { claimed_by?: { name?: string }; expires_at?: number };
  return { by: by?.name ?? '', until: until ?? 0 };
}

/**
 * A page of compact items within `budget` characters by their snippets alone, if it can be: every snippet cut to
 * the longest length that fits (all alike, at least {@link SNIPPET_MINIMUM}); with less room, the first items (the
 * newest) keep snippets of that least length and the others have none. What is still over the budget then loses
 * items from its end ({@link withinBudget}).
 */
export function fitSnippets(page: Json, budget: number): Json {
  const items = page.data as Json[];
  if (size(page) <= budget || !items.some((item) => typeof item.snippet === 'string')) return page;
  /** The page with the snippets of its first `kept` items cut to `length` characters, the others' left out. */
  const withSnippets = (length: number, kept = items.length): Json => ({
    ...page,
    data: items.map((item, index) => {
      const snippet = item.snippet;
      if (typeof snippet !== 'string') return item;
      if (index >= kept) return Object.fromEntries(Object.entries(item).filter(([key]) => key !== 'snippet'));
      return { ...item, snippet: cut(snippet, length) };
    }),
  });
  const longest = Math.max(...items.map((item) => (typeof item.snippet === 'string' ? item.snippet.length : 0)));
  if (size(withSnippets(SNIPPET_MINIMUM)) <= budget) {
    const length = largestFitting(SNIPPET_MINIMUM, longest, (length) => size(withSnippets(length)) <= budget);
    return withSnippets(length);
  }
  const kept = largestFitting(0, items.length, (kept) => size(withSnippets(SNIPPET_MINIMUM, kept)) <= budget);
  return withSnippets(SNIPPET_MINIMUM, kept);
}

/** The largest number from `low` to `high` for which `fits` holds, `fits(low)` being true and `fits` monotone. */
function largestFitting(low: number, high: number, fits: (value: number) => boolean): number {
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** How an item of each kind of compacted list (`agent.compact`) is compacted (./compact-text.ts: how it reads as text). */
export const COMPACT_ITEMS: Record<NonNullable<AgentBlock['compact']>, (item: Json) => Json> = {
  messages: compactMessage,
  threads: compactThread,
};

/** A body as plain text for a model (src/reading's text format), with how many lines of quoted history it collapsed. */
export function bodyAsText(html: string): { text: string; quoted_lines: number; hidden_text_removed: number } {
  const read = readStoredBody(html, 'text');
  return { text: read.body, quoted_lines: read.quotedCollapsed, hidden_text_removed: read.hiddenTextRemoved };
}

/**
 * A full message for get_message / get_thread: body as text (HTML only with include_html), bounded by `budget`. A
 * body cut here says how much was left out and where the rest is: with `whole` (a thread read that gave this message
 * less than {@link BODY_BUDGET}), the call that reads it alone; otherwise the /v3 route that returns it all.
 */
export function readableMessage(
  message: Json,
  includeHtml: boolean,
  tool: string,
  budget = BODY_BUDGET,
  whole?: ToolCall,
  format: BodyFormat = 'markdown',
): Json {
  const { body, headers: _headers, raw_mime: rawMime, ...rest } = message;
  const route = `GET /v3/grants/${fieldText(message.grant_id ?? '{grant_id}')}/messages/${String(message.id)}`;
  if (typeof rawMime === 'string') {
    const shaped: Json = { ...rest, raw_mime: cut(rawMime, budget) };
    if (rawMime.length > budget)
      shaped.raw_mime_truncated = {
        omitted: rawMime.length - budget + 1,
        hint: `${rawMime.length - budget + 1} characters of raw_mime were cut; ${route}?fields=raw_mime returns it whole`,
      };
    return shaped;
  }
  if (typeof body !== 'string') return rest;
  // A thread read carries each message's trust warnings only (as list items do); get_message the whole block.
  if (whole !== undefined && rest.trust !== undefined) {
    const warnings = trustWarnings(rest.trust);
    if (warnings) rest.trust = warnings;
    else delete rest.trust;
  }
  const read = readStoredBody(body, format);
  const text = read.body;
  const shaped: Json = {
    ...rest,
    body_text: cut(text, budget),
    ...(read.format !== 'markdown' ? { body_format: read.format } : {}),
    ...(read.quotedCollapsed ? { quoted_lines_collapsed: read.quotedCollapsed } : {}),
    ...(read.inlineAnswers ? { inline_answers: read.inlineAnswers } : {}),
    ...(read.hiddenTextRemoved ? { hidden_text_removed: read.hiddenTextRemoved } : {}),
  };
  if (text.length > budget) {
    const omitted = text.length - budget + 1;
    shaped.body_truncated = whole
      ? {
          omitted,
          hint: `${omitted} characters of this body were cut to fit the thread; ${callText(whole)} reads the message alone`,
          call: whole,
        }
      : {
          omitted,
          hint: `${omitted} characters of the body were cut; call ${tool} again with a larger max_tokens (up to 100000) for more; ${route} returns the whole message`,
        };
  }
  if (includeHtml && format !== 'html') {
    const html = readStoredBody(body, 'html');
    shaped.body = cut(html.body, budget);
    if (html.body.length > budget)
      shaped.html_truncated = {
        omitted: html.body.length - budget + 1,
        hint: `${html.body.length - budget + 1} characters of HTML were cut; the full HTML is at ${route}`,
      };
  }
  return shaped;
}

/**
 * Characters of a value as JSON, each string from outside fenced as the agent reads it: what the budgets count. Every
 * boundary has the same length (tools/fence.ts), so this is the size with the real one.
 */
export const size = (value: unknown): number => JSON.stringify(fenceFields(value, SIZING_FENCE)).length;

/** The operation of that name, which a face calls itself (a thread read lists its messages; an unapproved send becomes a draft). */
export const operationNamed = (name: string): AnyOperation => {
  const found = operationsByName.get(name);
  if (!found) throw new Error(`No operation ${name}`);
  return found;
};
