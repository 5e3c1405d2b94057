/**
 * @module tools/compact
 * Tool results sized for a model. The `/v3` API returns full objects; agents get, from the same operations:
 * compact list items (no bodies), message bodies as text with quoted history collapsed (HTML on request), and a
 * character budget on every result. A result over its budget says what was cut and which call returns the rest.
 * MCP and the AI SDK both shape their results here, so both faces read the same. What each tool gets is what its
 * operation's `agent` block says (compact items, bodies, a file, its first line), not a list of tool names here.
 */
import { z } from 'zod';
import { htmlToText, operations, type AnyOperation } from '../src/index.js';
import { fieldText } from '../src/operations/index.js';

/**
 * Characters one tool result may take (its structured JSON; the text rendering is shorter). About 5,000 tokens:
 * a page of 50 compact messages fits, one long body does not crowd out the rest of a model's context.
 */
export const RESULT_BUDGET = 20_000;

/** Characters of one message body (as text, or as HTML with `include_html`) inside a result. */
export const BODY_BUDGET = 12_000;

/** Characters of a list item's snippet. */
const SNIPPET_LENGTH = 160;

type Json = Record<string, unknown>;
type Participant = { name?: string; email: string };
/** What an operation says about itself to agents (src/operations/agent.ts). */
type AgentBlock = NonNullable<AnyOperation['agent']>;

const ParticipantSchema = z.object({ name: z.string().optional(), email: z.string() });
const AttachmentNoteSchema = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number(),
  content_type: z.string().optional(),
});
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

/** A message or draft as a list tool returns it: no body, no headers. */
export const CompactMessageSchema = z.object({
  id: z.string(),
  thread_id: z.string().optional(),
  from: z.array(ParticipantSchema).optional(),
  to: z.array(ParticipantSchema).optional(),
  subject: z.string().optional(),
  snippet: z.string().optional(),
  date: z.number().optional().describe('Unix seconds'),
  unread: z.boolean().optional(),
  starred: z.boolean().optional(),
  folders: z.array(z.string()).optional(),
  attachments: z.array(AttachmentNoteSchema).optional(),
});

/** A thread as list_threads returns it. */
export const CompactThreadSchema = z.object({
  id: z.string(),
  subject: z.string().optional(),
  participants: z.array(ParticipantSchema).optional(),
  snippet: z.string().optional(),
  date: z.number().optional().describe('Unix seconds of the newest message'),
  message_count: z.number().int().optional(),
  draft_ids: z.array(z.string()).optional(),
  unread: z.boolean().optional(),
  starred: z.boolean().optional(),
  folders: z.array(z.string()).optional(),
  has_attachments: z.boolean().optional(),
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
  include_html: z
    .boolean()
    .optional()
    .describe('Also return the HTML body (default: text only, quoted history collapsed)'),
};

const operationsByName = new Map(operations.map((operation) => [operation.name, operation]));
/** The agent block of a tool's operation (empty for a tool that sets none, or a name that is no operation). */
const agentOf = (tool: string): AgentBlock => operationsByName.get(tool)?.agent ?? {};

const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);
/** A call as an agent reads it in a hint: `get_message {"message_id":"…"}`. */
export const callText = (call: ToolCall) => `${call.tool} ${JSON.stringify(call.arguments)}`;
/** The agent's own `grant_id`, for a continuation call (absent when the tools are bound to one mailbox). */
const grantOf = (input: Json): Json => (typeof input.grant_id === 'string' ? { grant_id: input.grant_id } : {});
const readMessageCall = (input: Json, id: unknown): ToolCall => ({
  tool: 'get_message',
  arguments: { ...grantOf(input), message_id: String(id) },
});
const definedOnly = (value: Json): Json =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));

function compactMessage(message: Json): Json {
  const attachments = (message.attachments as Json[] | undefined)
    ?.filter((attachment) => attachment.is_inline !== true)
    .map((attachment) => ({
      id: attachment.id,
      filename: attachment.filename,
      size: attachment.size,
      content_type: attachment.content_type,
    }));
  return definedOnly({
    id: message.id,
    thread_id: message.thread_id,
    from: message.from,
    to: message.to,
    subject: message.subject,
    snippet: typeof message.snippet === 'string' ? cut(message.snippet, SNIPPET_LENGTH) : undefined,
    date: message.date ?? message.updated_at,
    unread: message.unread,
    starred: message.starred,
    folders: message.folders,
    attachments: attachments?.length ? attachments : undefined,
  });
}

function compactThread(thread: Json): Json {
  const drafts = thread.draft_ids as string[] | undefined;
  return definedOnly({
    id: thread.id,
    subject: thread.subject,
    participants: thread.participants,
    snippet: typeof thread.snippet === 'string' ? cut(thread.snippet, SNIPPET_LENGTH) : undefined,
    date: thread.latest_message_received_date ?? thread.latest_message_sent_date ?? thread.earliest_message_date,
    message_count: (thread.message_ids as unknown[] | undefined)?.length,
    draft_ids: drafts?.length ? drafts : undefined,
    unread: thread.unread,
    starred: thread.starred,
    folders: thread.folders,
    has_attachments: thread.has_attachments,
  });
}

/** Each kind of compacted list (`agent.compact`): how an item is compacted, and how it reads as text. */
const COMPACTIONS: Record<
  NonNullable<AgentBlock['compact']>,
  { item: (item: Json) => Json; line: (item: Json) => string }
> = {
  messages: { item: compactMessage, line: messageLine },
  threads: { item: compactThread, line: threadLine },
};

const QUOTE_MARKERS = [
  '<blockquote',
  'class="gmail_quote',
  "class='gmail_quote",
  'id="divrplyfwdmsg',
  'id="appendonsend',
];
const QUOTE_HEADER =
  /^(On .{4,300} wrote:|-{2,} ?Original Message ?-{2,}|-{2,} ?Forwarded message ?-{2,}|From: .+ Sent: .+)$/i;

/**
 * A body as text for a model: the visible text of its HTML, with quoted history (a blockquote, a Gmail or
 * Outlook quote, `>` lines after an "On … wrote:") replaced by one line saying how much was hidden.
 */
export function bodyAsText(html: string): { text: string; quoted_characters: number } {
  const lower = html.toLowerCase();
  const quoteAt = Math.min(
    ...QUOTE_MARKERS.map((marker) => lower.indexOf(marker)).filter((index) => index >= 0),
    html.length,
  );
  const head = htmlToText(html.slice(0, quoteAt), html.length);
  let quoted = quoteAt < html.length ? htmlToText(html.slice(quoteAt), html.length).length : 0;
  const lines = head.split('\n');
  let kept = lines.length;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!.trim();
    const rest = lines.slice(index + 1);
    if (
      QUOTE_HEADER.test(line) ||
      (line.startsWith('>') && rest.every((next) => next.trim() === '' || next.trim().startsWith('>')))
    ) {
      kept = index;
      break;
    }
  }
  quoted += lines.slice(kept).join('\n').length;
  let text = lines.slice(0, kept).join('\n').trim();
  if (quoted > 0) text += `\n[quoted history hidden: ${quoted} characters]`;
  return { text, quoted_characters: quoted };
}

/**
 * A full message for get_message / get_thread: body as text (HTML only with include_html), bounded by `budget`. A
 * body cut here says how much was left out and where the rest is: with `whole` (a thread read that gave this message
 * less than {@link BODY_BUDGET}), the call that reads it alone; otherwise the /v3 route that returns it all.
 */
function readableMessage(
  message: Json,
  includeHtml: boolean,
  tool: string,
  budget = BODY_BUDGET,
  whole?: ToolCall,
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
  const { text, quoted_characters } = bodyAsText(body);
  const shaped: Json = { ...rest, body_text: cut(text, budget), ...(quoted_characters ? { quoted_characters } : {}) };
  if (text.length > budget) {
    const omitted = text.length - budget + 1;
    shaped.body_truncated =
      whole && budget < BODY_BUDGET
        ? {
            omitted,
            hint: `${omitted} characters of this body were cut to fit the thread; ${callText(whole)} reads the message alone`,
            call: whole,
          }
        : {
            omitted,
            hint: `${omitted} characters of the body text were cut; the attachments and full HTML stay available (call ${tool} with include_html: true for the HTML; ${route} returns the whole message)`,
          };
  }
  if (includeHtml) {
    shaped.body = cut(body, budget);
    if (body.length > budget)
      shaped.html_truncated = {
        omitted: body.length - budget + 1,
        hint: `${body.length - budget + 1} characters of HTML were cut; the full HTML is at ${route}`,
      };
  }
  return shaped;
}

/** Messages of a thread `get_thread` and the thread resources read (the newest; older ones are named by the call that lists them). */
export const THREAD_MESSAGES = 20;
/** Least characters of body an earlier message of a thread is shown with (cut, with the call for the rest); with less room it is only named. */
const THREAD_BODY_MINIMUM = 1_000;
/** Characters of the one line naming a message a thread read leaves out. */
const NOTE_LINE = 80;
/** Of a thread's own fields, the ids of its newest messages kept when the list of all of them would crowd out the messages. */
const THREAD_IDS_KEPT = 100;

/** How a thread read for an agent is made. */
export interface ThreadReadOptions {
  /** The HTML bodies too (`include_html`). */
  includeHtml?: boolean;
  /** What the agent asked: continuation calls repeat its `grant_id` (absent when the tools are bound to one mailbox). */
  input?: Json;
  /** `next_cursor` of the thread's message list: there are messages older than those read. */
  olderCursor?: string | undefined;
  /** The resource of a message (thread resources name the messages they leave out by their resource too). */
  uriOf?: (messageId: string) => string;
}

const size = (value: unknown) => JSON.stringify(value).length;

/**
 * A thread with its messages for a model, within {@link RESULT_BUDGET}. The newest message comes whole (its body up
 * to {@link BODY_BUDGET}), then earlier ones, newest first, as many as fit (the last one in may have its body cut,
 * saying so); `messages` reads oldest first. The messages left out are listed in `messages_truncated`, newest first
 * (id, sender, date, one line), with the call that reads each, and the call that lists any older than those read.
 * `newestFirst` is the thread's message list as list_messages answers it.
 */
export function threadForAgent(thread: Json, newestFirst: Json[], options: ThreadReadOptions = {}): Json {
  const input = options.input ?? {};
  const threadId = String(thread.id);
  // The thread's own fields, compact: its latest message as a list item; a very long list of ids cut to the newest.
  let base: Json = { ...thread };
  if (thread.latest_draft_or_message && typeof thread.latest_draft_or_message === 'object') {
    const latest = thread.latest_draft_or_message as Json;
    base.latest_draft_or_message = { ...compactMessage(latest), grant_id: latest.grant_id, object: latest.object };
  }
  const allIds = Array.isArray(thread.message_ids) ? (thread.message_ids as string[]) : undefined;
  if (allIds && allIds.length > THREAD_IDS_KEPT) {
    const omitted = allIds.length - THREAD_IDS_KEPT;
    const call: ToolCall = { tool: 'list_messages', arguments: { ...grantOf(input), thread_id: threadId } };
    base = {
      ...base,
      message_ids: allIds.slice(-THREAD_IDS_KEPT),
      message_ids_truncated: {
        omitted,
        hint: `the ids of the ${omitted} oldest messages were cut from message_ids (the newest ${THREAD_IDS_KEPT} are kept); ${callText(call)} pages through them all`,
        call,
      },
    };
  }
  const total = Math.max(allIds?.length ?? 0, newestFirst.length);
  const notRead = options.olderCursor ? Math.max(1, total - newestFirst.length) : 0;
  const readCall = (id: unknown) => readMessageCall(input, id);
  const readable = (message: Json, budget: number): Json => {
    // The thread and the object are the thread's; the snippet is the start of the body right there.
    const {
      grant_id: _grant,
      object: _object,
      thread_id: _thread,
      snippet: _snippet,
      ...rest
    } = readableMessage(message, options.includeHtml === true, 'get_message', budget, readCall(message.id));
    return rest;
  };
  const note = (message: Json): Json =>
    definedOnly({
      id: message.id,
      from: ((message.from as Participant[] | undefined) ?? []).map((person) => person.email).join(', ') || undefined,
      date: message.date,
      snippet: typeof message.snippet === 'string' ? cut(message.snippet, NOTE_LINE) : undefined,
      uri: options.uriOf ? options.uriOf(String(message.id)) : undefined,
    });
  const olderCall: ToolCall | undefined = options.olderCursor
    ? { tool: 'list_messages', arguments: { ...grantOf(input), thread_id: threadId, page_token: options.olderCursor } }
    : undefined;
  const truncation = (left: Json[]): Json | undefined => {
    const omitted = left.length + notRead;
    if (omitted === 0) return undefined;
    const parts: string[] = [];
    if (left.length > 0) {
      parts.push(
        `${left.length} earlier message(s) did not fit; they are named in messages_truncated.messages, newest first: read each with get_message and its id (the newest of them: ${callText(readCall(left[0]!.id))})`,
      );
    }
    if (olderCall) parts.push(`${notRead} older message(s) were not read: ${callText(olderCall)} lists them`);
    return {
      omitted,
      hint: parts.join('; '),
      ...(left.length > 0 ? { call: readCall(left[0]!.id), messages: left.map(note) } : { call: olderCall }),
      ...(left.length > 0 && olderCall ? { older: { omitted: notRead, call: olderCall } } : {}),
    };
  };
  const shown: Json[] = [];
  const build = (): Json => {
    const truncated = truncation(newestFirst.slice(shown.length));
    return { ...base, messages: [...shown].reverse(), ...(truncated ? { messages_truncated: truncated } : {}) };
  };
  /** `message` with as much of its body as the room left allows (at least `minimum` characters), or undefined. */
  const fitting = (message: Json, minimum: number): Json | undefined => {
    let budget = BODY_BUDGET;
    for (let attempt = 0; attempt < 5 && budget >= minimum; attempt += 1) {
      const shaped = readable(message, budget);
      shown.push(shaped);
      const over = size(build()) - RESULT_BUDGET;
      shown.pop();
      if (over <= 0) return shaped;
      // Cut from what the body takes now (it may be shorter than the budget).
      const longest = Math.max(fieldText(shaped.body_text ?? '').length, fieldText(shaped.body ?? '').length);
      budget = Math.min(budget, longest) - over - 8;
    }
    return undefined;
  };
  const [newest, ...earlier] = newestFirst;
  if (newest === undefined) return build();
  // The newest message always comes, whole if it fits (else with as much of its body as fits, saying so).
  shown.push(fitting(newest, THREAD_BODY_MINIMUM) ?? fitting(newest, 1) ?? readable(newest, THREAD_BODY_MINIMUM));
  for (const message of earlier) {
    const shaped = fitting(message, THREAD_BODY_MINIMUM);
    if (!shaped) break;
    shown.push(shaped);
    if (shaped.body_truncated && (shaped.body_truncated as Truncation).call) break;
  }
  return build();
}

/**
 * Shapes one operation's output for an agent: compact list items, readable bodies, then the size budget.
 * `input` is what the agent asked (limit, page_token, include_html). A `get_thread` output may carry its
 * `messages` (oldest first), as {@link readForAgent} reads them.
 */
export function shapeForAgent(tool: string, output: Json, input: Json): Json {
  const agent = agentOf(tool);
  // A file has its own cap (get_attachment's max_bytes) and is passed on whole, not cut here.
  if (agent.file) return output;
  const includeHtml = input.include_html === true;
  let shaped = output;
  // With `select` the agent chose its fields itself: the items stay as selected (id, grant_id and object always kept).
  const selected = typeof input.select === 'string' && input.select.trim() !== '';
  if (Array.isArray(output.data) && !selected) {
    const items = output.data as Json[];
    if (agent.compact) shaped = { ...output, data: items.map(COMPACTIONS[agent.compact].item) };
  } else if (agent.body === 'message') {
    shaped = readableMessage(output, includeHtml, tool);
  } else if (agent.body === 'thread' && Array.isArray(output.messages)) {
    const { messages, ...thread } = output;
    return threadForAgent(thread, [...(messages as Json[])].reverse(), { includeHtml, input });
  } else if (
    agent.body === 'thread' &&
    output.latest_draft_or_message &&
    typeof output.latest_draft_or_message === 'object'
  ) {
    const latest = output.latest_draft_or_message as Json;
    shaped = {
      ...output,
      latest_draft_or_message: { ...compactMessage(latest), grant_id: latest.grant_id, object: latest.object },
    };
  }
  return withinBudget(tool, shaped, input);
}

/**
 * Cuts a result to {@link RESULT_BUDGET}. A page loses items from its end (the call with a smaller limit gives the
 * cursor that continues right after the last one kept; {@link readForAgent} makes that call itself); any other
 * object has its longest fields cut. Either way `truncated` says what was cut and how to get it.
 */
export function withinBudget(tool: string, output: Json, input: Json): Json {
  if (size(output) <= RESULT_BUDGET) return output;
  if (Array.isArray(output.data)) {
    const items = [...(output.data as unknown[])];
    const total = items.length;
    let length = size(output);
    while (items.length > 1 && length > RESULT_BUDGET) length -= size(items.pop()) + 1;
    const kept = items.length;
    const cuts: string[] = [];
    const data = items.map((item) => {
      if (size(item) <= RESULT_BUDGET) return item;
      const shrunk = shrinkObject(item as Json, RESULT_BUDGET / 2);
      cuts.push(...shrunk.cuts.map((field) => `${fieldText((item as Json).id ?? 'an item')}: ${field}`));
      return shrunk.value;
    });
    // Items cut from the end: the page's next_cursor would skip them (the call with a smaller limit gives the right one).
    const { next_cursor: next, ...rest } = output;
    const call: ToolCall = { tool, arguments: { ...input, limit: kept } };
    const parts = [];
    if (kept < total) {
      parts.push(
        `${total - kept} of the ${total} items of this page were cut to fit; call ${tool} again with limit: ${kept}${typeof input.page_token === 'string' ? `, page_token: "${input.page_token}"` : ''} (${callText(call)}) and page on with its next_cursor`,
      );
    }
    if (cuts.length > 0)
      parts.push(`long fields were cut (${cuts.join('; ')}); the ${tool} operation at the /v3 API returns them whole`);
    return {
      ...rest,
      ...(kept === total && next !== undefined ? { next_cursor: next } : {}),
      data,
      truncated: { omitted: total - kept, hint: parts.join('; '), ...(kept < total ? { call } : {}) },
    };
  }
  const shrunk = shrinkObject(output, RESULT_BUDGET);
  const route = operationRoute(tool, input);
  return {
    ...shrunk.value,
    truncated: {
      omitted: size(output) - size(shrunk.value),
      hint: `long fields were cut to fit: ${shrunk.cuts.join('; ')}; the whole object is at ${route}`,
    },
  };
}

/** The /v3 route of a tool's operation, with the ids the agent gave filled in. */
function operationRoute(tool: string, input: Json): string {
  const binding = operationsByName.get(tool)?.http;
  if (!binding) return `the /v3 API (the ${tool} operation)`;
  return `${binding.method} /v3${binding.path.replace(/:([a-z_]+)/g, (_match, name: string) => (typeof input[name] === 'string' ? String(input[name]) : `{${name}}`))}`;
}

/**
 * `value` with its long strings and arrays cut so that each field takes about `budget` divided among them; says
 * which fields were cut and by how much. Arrays keep their first items (their own order; a thread's messages are
 * never cut here, see {@link threadForAgent}).
 */
function shrinkObject(value: Json, budget: number, path = ''): { value: Json; cuts: string[] } {
  const entries = Object.entries(value);
  const each = Math.max(200, Math.floor(budget / Math.max(1, entries.length)));
  const cuts: string[] = [];
  const shrunk = Object.fromEntries(
    entries.map(([key, field]) => {
      const name = `${path}${key}`;
      if (typeof field === 'string') {
        if (field.length > each) cuts.push(`${name} (${each - 1} of ${field.length} characters kept)`);
        return [key, cut(field, each)];
      }
      if (Array.isArray(field)) {
        if (size(field) <= each) return [key, field];
        const kept = Math.max(1, Math.floor(field.length * (each / size(field))));
        if (kept < field.length) cuts.push(`${name} (the first ${kept} of ${field.length} items kept)`);
        return [key, field.slice(0, kept)];
      }
      if (field && typeof field === 'object') {
        const inner = shrinkObject(field as Json, each, `${name}.`);
        cuts.push(...inner.cuts);
        return [key, inner.value];
      }
      return [key, field];
    }),
  );
  return { value: shrunk, cuts };
}

// ---- the text rendering: a short reading of the result, not a second copy of the JSON ----

const who = (people: unknown) =>
  ((people as Participant[] | undefined) ?? [])
    .map((person) => (person.name ? `${person.name} <${person.email}>` : person.email))
    .join(', ');
const when = (seconds: unknown) =>
  typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + 'Z' : '';
const kb = (bytes: unknown) => (typeof bytes === 'number' ? `${Math.max(1, Math.round(bytes / 1024))} KB` : '?');

/** A message in two or three lines; a field the item does not have (a `select`) is left out, not shown as "?". */
function messageLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : ''].filter(Boolean).join(', ');
  const files = ((item.attachments as Json[] | undefined) ?? [])
    .map((file) => `${fieldText(file.filename || 'unnamed')} (${kb(file.size)})`)
    .join(', ');
  const head = [
    String(item.id),
    when(item.date),
    [
      item.from !== undefined ? `from ${who(item.from) || '?'}` : '',
      item.to !== undefined ? `to ${who(item.to) || '?'}` : '',
    ]
      .filter(Boolean)
      .join(' '),
    flags,
  ];
  const second = [
    item.subject !== undefined ? JSON.stringify(item.subject) : '',
    item.thread_id ? `(thread ${fieldText(item.thread_id)})` : '',
    files ? `· attachments: ${files}` : '',
  ].filter(Boolean);
  const lines = [`- ${head.filter(Boolean).join(' · ')}`];
  if (second.length > 0) lines.push(`  ${second.join(' ')}`);
  if (item.snippet) lines.push(`  ${fieldText(item.snippet)}`);
  return lines.join('\n');
}

function threadLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : '', item.has_attachments ? 'attachments' : '']
    .filter(Boolean)
    .join(', ');
  return [
    `- ${String(item.id)} · ${when(item.date)} · ${fieldText(item.message_count ?? '?')} messages · ${who(item.participants)}${flags ? ` · ${flags}` : ''}`,
    `  ${JSON.stringify(item.subject ?? '')}`,
    item.snippet ? `  ${fieldText(item.snippet)}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

const isParticipant = (value: unknown): value is Participant =>
  !!value &&
  typeof value === 'object' &&
  typeof (value as Participant).email === 'string' &&
  Object.keys(value).every((key) => key === 'name' || key === 'email');

/** A value in a line: scalars as they are, long ones cut, nested objects with their own scalar values. */
function valueText(value: unknown, depth = 0): string {
  if (typeof value === 'string') return cut(value, 120);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.every((entry) => typeof entry === 'string')) return cut(value.join(', '), 120);
    if (value.every(isParticipant)) return cut(who(value), 240);
    return depth === 0 && value.length <= 3
      ? `[${value.map((entry) => valueText(entry, depth + 1)).join('; ')}]`
      : `${value.length} item(s)`;
  }
  if (value && typeof value === 'object') {
    if (depth > 0) return `{${Object.keys(value).slice(0, 6).join(', ')}}`;
    const fields = Object.entries(value)
      .filter(([, field]) => field !== undefined && field !== null)
      .slice(0, 8)
      .map(([key, field]) => `${key}: ${valueText(field, depth + 1)}`);
    return cut(`{${fields.join(', ')}}`, 240);
  }
  return String(value);
}

/** One line of any other item: its fields with their values, long ones cut, nested values summarized. */
function genericLine(item: Json): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(item)) {
    if (key === 'grant_id' || key === 'object' || value === undefined || value === null) continue;
    if (key.endsWith('_truncated') || key === 'truncated') continue;
    if (
      (Array.isArray(value) && value.length === 0) ||
      (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
    )
      continue;
    parts.push(`${key}: ${valueText(value)}`);
  }
  return `- ${parts.join(' · ')}`;
}

/**
 * What a write did, naming the ids it made or changed: the first line of its text. A send (`agent.sends`) says what
 * was sent, scheduled or, for a dry run, would be; another write says what its operation's `agent.headline` says.
 */
function writeHeadline(agent: AgentBlock, output: Json, input: Json): string | undefined {
  const data = (
    output.data && typeof output.data === 'object' && !Array.isArray(output.data) ? output.data : output
  ) as Json;
  if (agent.sends === undefined) return agent.headline?.(data, input);
  const id = data.id === undefined ? '' : fieldText(data.id);
  const inThread = data.thread_id ? ` in thread ${fieldText(data.thread_id)}` : '';
  if (data.dry_run === true) {
    return data.blocked
      ? `Dry run: the send would be refused${data.reason ? ` (${fieldText(data.reason)})` : ''}; nothing was sent`
      : 'Dry run: the send would go; nothing was sent';
  }
  const scheduleId = output.schedule_id ?? data.schedule_id;
  const draft = agent.sends === 'draft' ? `draft ${String(input.draft_id)} as ` : '';
  if (scheduleId !== undefined) {
    return `Scheduled ${draft}message ${id}${inThread} to be sent at ${when(output.send_at ?? data.send_at)} (schedule ${fieldText(scheduleId)}; stop_scheduled_message stops it)`;
  }
  return `Sent ${draft}message ${id}${inThread}`;
}

/** The continuation of a cut page: which call returns the items that did not fit. */
function cutLines(output: Json): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(output)) {
    if (key !== 'truncated' && !key.endsWith('_truncated')) continue;
    const note = value as Truncation | undefined;
    if (note?.hint) lines.push(`[cut: ${note.hint}]`);
  }
  return lines;
}

/**
 * The text content of a result: a short reading for the model; the structured content carries every field. `input`
 * is what the agent asked (a delete answers nothing: its line names the id it was given).
 */
export function renderForAgent(tool: string, output: Json, input: Json = {}): string {
  const agent = agentOf(tool);
  const lines: string[] = [];
  if (Array.isArray(output.data)) {
    const items = output.data as Json[];
    // Selected items (`select`) are read field by field: only what was selected, nothing shown as missing.
    const selected = typeof input.select === 'string' && input.select.trim() !== '';
    const line = !selected && agent.compact ? COMPACTIONS[agent.compact].line : genericLine;
    lines.push(
      `${items.length} item(s)${output.next_cursor ? `; more with page_token: "${fieldText(output.next_cursor)}"` : '; no more pages'}`,
    );
    for (const item of items) lines.push(line(item));
  } else if (agent.body === 'thread' && Array.isArray(output.messages)) {
    const {
      messages,
      messages_truncated: truncated,
      latest_draft_or_message: _latest,
      message_ids: ids,
      ...thread
    } = output;
    lines.push(genericLine({ ...thread, ...(Array.isArray(ids) ? { messages: ids.length } : {}) }).slice(2));
    const left = (truncated as { messages?: Json[]; call?: ToolCall } | undefined)?.messages ?? [];
    if (left.length > 0) {
      lines.push('', `Earlier messages not shown, newest first (read each with get_message):`);
      for (const note of left) {
        lines.push(
          `- ${String(note.id)} · ${when(note.date)} · from ${fieldText(note.from ?? '?')}${note.snippet ? ` · ${fieldText(note.snippet)}` : ''}`,
        );
      }
    }
    for (const message of messages as Json[]) {
      const { body_text: bodyText, body_truncated: bodyCut, snippet: _snippet, ...rest } = message;
      lines.push('', messageLine(rest), typeof bodyText === 'string' ? bodyText : '');
      if ((bodyCut as Truncation | undefined)?.hint) lines.push(`[cut: ${(bodyCut as Truncation).hint}]`);
    }
    if ((truncated as Truncation | undefined)?.hint) lines.push('', `[cut: ${(truncated as Truncation).hint}]`);
    for (const line of cutLines(thread)) lines.push(line);
    return lines.join('\n');
  } else if (typeof output.body_text === 'string') {
    const { body_text: bodyText, body: html, ...rest } = output;
    lines.push(messageLine(rest), '', bodyText);
    if (typeof html === 'string') lines.push('', '--- HTML ---', html);
  } else {
    const headline = writeHeadline(agent, output, input);
    if (headline) lines.push(headline);
    const data = (
      output.data && typeof output.data === 'object' && !Array.isArray(output.data) ? output.data : undefined
    ) as Json | undefined;
    const { data: _data, ...others } = output;
    if (data) {
      const isMessage = 'from' in data || 'to' in data || 'subject' in data;
      lines.push(isMessage ? messageLine(data) : genericLine(data));
      const more = genericLine(others).slice(2);
      if (more) lines.push(more);
    } else {
      const line = genericLine(output).slice(2);
      if (line || !headline) lines.push(line);
    }
  }
  lines.push(...cutLines(output));
  return lines.join('\n');
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
    return threadForAgent(output, page.data, {
      includeHtml: asked.include_html === true,
      input: asked,
      olderCursor: page.next_cursor ?? undefined,
    });
  }
  const shaped = shapeForAgent(tool, output, asked);
  if (
    !Array.isArray(output.data) ||
    !Array.isArray(shaped.data) ||
    shaped.data.length >= output.data.length ||
    !('limit' in operation.input.shape)
  )
    return shaped;
  return await fittedPage(executor, operation, prepared, asked, output.data.length, shaped);
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
): Promise<Json> {
  const tool = operation.name;
  let fit = (cut.data as unknown[]).length;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const again = (await executor(operation, { ...prepared, limit: fit })) as Json;
    const items = (again.data as unknown[] | undefined) ?? [];
    const shaped = shapeForAgent(tool, again, { ...asked, limit: fit });
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

/** The operation of that name, which a face calls itself (a thread read lists its messages; an unapproved send becomes a draft). */
export const operationNamed = (name: string): AnyOperation => {
  const found = operationsByName.get(name);
  if (!found) throw new Error(`No operation ${name}`);
  return found;
};
