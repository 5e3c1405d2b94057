/**
 * @module tools/compact
 * Tool results sized for a model. The `/v3` API returns full objects; agents get, from the same operations:
 * compact list items (no bodies), message bodies as text with quoted history collapsed (HTML on request), and a
 * character budget on every result. A result over its budget says what was cut and which call returns the rest.
 * MCP and the AI SDK both shape their results here, so both faces read the same.
 */
import { z } from 'zod';
import { htmlToText, operations, type AnyOperation } from '../src/index.js';

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

const ParticipantSchema = z.object({ name: z.string().optional(), email: z.string() });
const AttachmentNoteSchema = z.object({ id: z.string(), filename: z.string(), size: z.number(), content_type: z.string().optional() });
const TruncationSchema = z
  .object({ omitted: z.number().int().describe('Items or characters left out'), hint: z.string().describe('The call that returns the rest') })
  .optional()
  .describe('Present when the result was cut to its size budget');

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
  z.object({ data: z.array(item), next_cursor: z.string().optional().describe('Pass as page_token for the next page'), truncated: TruncationSchema });

/** Output schemas of the list tools whose items are compacted (the others keep their item schema). */
export const COMPACT_OUTPUT_SCHEMAS: Record<string, z.ZodObject> = {
  list_messages: page(CompactMessageSchema),
  list_drafts: page(CompactMessageSchema),
  list_threads: page(CompactThreadSchema),
};

/** The tool-only input fields that ask for more than the compact default. */
export const INCLUDE_HTML_FIELD = {
  include_html: z.boolean().optional().describe('Also return the HTML body (default: text only, quoted history collapsed)'),
};
/** Tools that render a body as text and take `include_html`. */
export const BODY_TOOLS: ReadonlySet<string> = new Set(['get_message', 'get_thread', 'get_draft']);

const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);
const definedOnly = (value: Json): Json => Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));

function compactMessage(message: Json): Json {
  const attachments = (message.attachments as Json[] | undefined)
    ?.filter((attachment) => attachment.is_inline !== true)
    .map((attachment) => ({ id: attachment.id, filename: attachment.filename, size: attachment.size, content_type: attachment.content_type }));
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

const QUOTE_MARKERS = ['<blockquote', 'class="gmail_quote', "class='gmail_quote", 'id="divrplyfwdmsg', 'id="appendonsend'];
const QUOTE_HEADER = /^(On .{4,300} wrote:|-{2,} ?Original Message ?-{2,}|-{2,} ?Forwarded message ?-{2,}|From: .+ Sent: .+)$/i;

/**
 * A body as text for a model: the visible text of its HTML, with quoted history (a blockquote, a Gmail or
 * Outlook quote, `>` lines after an "On … wrote:") replaced by one line saying how much was hidden.
 */
export function bodyAsText(html: string): { text: string; quoted_characters: number } {
  const lower = html.toLowerCase();
  const quoteAt = Math.min(...QUOTE_MARKERS.map((marker) => lower.indexOf(marker)).filter((index) => index >= 0), html.length);
  const head = htmlToText(html.slice(0, quoteAt), html.length);
  let quoted = quoteAt < html.length ? htmlToText(html.slice(quoteAt), html.length).length : 0;
  const lines = head.split('\n');
  let kept = lines.length;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!.trim();
    const rest = lines.slice(index + 1);
    if (QUOTE_HEADER.test(line) || (line.startsWith('>') && rest.every((next) => next.trim() === '' || next.trim().startsWith('>')))) {
      kept = index;
      break;
    }
  }
  quoted += lines.slice(kept).join('\n').length;
  let text = lines.slice(0, kept).join('\n').trim();
  if (quoted > 0) text += `\n[quoted history hidden: ${quoted} characters]`;
  return { text, quoted_characters: quoted };
}

/** A full message for get_message / get_thread: body as text (HTML only with include_html), bounded. */
function readableMessage(message: Json, includeHtml: boolean, tool: string, budget = BODY_BUDGET): Json {
  const { body, headers: _headers, raw_mime: rawMime, ...rest } = message;
  if (typeof rawMime === 'string') return { ...rest, raw_mime: cut(rawMime, budget) };
  if (typeof body !== 'string') return rest;
  const { text, quoted_characters } = bodyAsText(body);
  const shaped: Json = { ...rest, body_text: cut(text, budget), ...(quoted_characters ? { quoted_characters } : {}) };
  if (text.length > budget) shaped.body_truncated = { omitted: text.length - budget, hint: `the attachments and full HTML stay available; call ${tool} with include_html: true for the HTML` };
  if (includeHtml) {
    shaped.body = cut(body, budget);
    if (body.length > budget) shaped.html_truncated = { omitted: body.length - budget, hint: 'the full HTML is at GET /v3/grants/{grant_id}/messages/{id}' };
  }
  return shaped;
}

/** Characters of message bodies a `get_thread` result carries in all, and at least per message shown. */
export const THREAD_BODIES_BUDGET = 14_000;
const THREAD_BODY_MINIMUM = 1_500;
/** Messages of a thread `get_thread` reads for an agent (the newest; older ones are named by id). */
export const THREAD_MESSAGES = 50;

/**
 * A thread's messages for a model, oldest first, as readable text: each body gets an equal share of
 * {@link THREAD_BODIES_BUDGET} (at least {@link THREAD_BODY_MINIMUM}); when they cannot all have that much, the
 * newest are kept and the rest are named, to be read with get_message.
 */
function readableThreadMessages(messages: Json[], includeHtml: boolean): { messages: Json[]; omitted?: Json } {
  const fit = Math.max(1, Math.floor(THREAD_BODIES_BUDGET / THREAD_BODY_MINIMUM));
  const shown = messages.slice(-fit);
  const share = Math.max(THREAD_BODY_MINIMUM, Math.floor(THREAD_BODIES_BUDGET / Math.max(1, shown.length)));
  const readable = shown.map((message) => {
    const { grant_id: _grant, object: _object, thread_id: _thread, ...rest } = readableMessage(message, includeHtml, 'get_message', share);
    return rest;
  });
  const older = messages.slice(0, messages.length - shown.length).map((message) => message.id);
  return { messages: readable, ...(older.length > 0 ? { omitted: { omitted: older.length, hint: `${older.length} older message(s) left out: read them with get_message (ids ${older.join(', ')})` } } : {}) };
}

/**
 * Shapes one operation's output for an agent: compact list items, readable bodies, then the size budget.
 * `input` is what the agent asked (limit, page_token, include_html).
 */
export function shapeForAgent(tool: string, output: Json, input: Json): Json {
  // A file has its own cap (get_attachment's max_bytes) and is passed on whole, not cut here.
  if (tool === 'get_attachment') return output;
  const includeHtml = input.include_html === true;
  let shaped = output;
  // With `select` the agent chose its fields itself: the items stay as selected (id, grant_id and object always kept).
  const selected = typeof input.select === 'string' && input.select.trim() !== '';
  if (Array.isArray(output.data) && !selected) {
    const items = output.data as Json[];
    if (tool === 'list_messages' || tool === 'list_drafts') shaped = { ...output, data: items.map(compactMessage) };
    else if (tool === 'list_threads') shaped = { ...output, data: items.map(compactThread) };
  } else if (tool === 'get_message' || tool === 'get_draft') {
    shaped = readableMessage(output, includeHtml, tool);
  } else if (tool === 'get_thread' && output.latest_draft_or_message && typeof output.latest_draft_or_message === 'object') {
    const latest = output.latest_draft_or_message as Json;
    shaped = { ...output, latest_draft_or_message: { ...compactMessage(latest), grant_id: latest.grant_id, object: latest.object } };
  }
  if (tool === 'get_thread' && Array.isArray(output.messages)) {
    const { messages, omitted } = readableThreadMessages(output.messages as Json[], includeHtml);
    shaped = { ...shaped, messages, ...(omitted ? { messages_truncated: omitted } : {}) };
  }
  return withinBudget(tool, shaped, input);
}

/** Cuts a result to {@link RESULT_BUDGET}: list items from the end, else the longest strings. */
export function withinBudget(tool: string, output: Json, input: Json): Json {
  if (JSON.stringify(output).length <= RESULT_BUDGET) return output;
  if (Array.isArray(output.data)) {
    const items = [...(output.data as unknown[])];
    const total = items.length;
    let size = JSON.stringify(output).length;
    while (items.length > 1 && size > RESULT_BUDGET) size -= JSON.stringify(items.pop()).length + 1;
    const kept = items.length;
    const pageToken = typeof input.page_token === 'string' ? `, page_token: "${input.page_token}"` : '';
    const { next_cursor: _next, ...rest } = output;
    return {
      ...rest,
      data: items.map((item) => (JSON.stringify(item).length > RESULT_BUDGET ? shrinkStrings(item as Json, RESULT_BUDGET / 2) : item)),
      truncated: { omitted: total - kept, hint: `${total - kept} of ${total} items were cut to fit; call ${tool} again with limit: ${kept}${pageToken} and page on with its next_cursor` },
    };
  }
  return { ...shrinkStrings(output, RESULT_BUDGET), truncated: { omitted: JSON.stringify(output).length - RESULT_BUDGET, hint: `long text fields were cut; the full object is at the /v3 API (the ${tool} operation)` } };
}

function shrinkStrings(value: Json, budget: number): Json {
  const entries = Object.entries(value);
  const each = Math.max(200, Math.floor(budget / Math.max(1, entries.length)));
  return Object.fromEntries(
    entries.map(([key, field]) => {
      if (typeof field === 'string') return [key, cut(field, each)];
      if (Array.isArray(field)) return [key, JSON.stringify(field).length > each ? field.slice(0, Math.max(1, Math.floor(field.length * (each / JSON.stringify(field).length)))) : field];
      if (field && typeof field === 'object') return [key, shrinkStrings(field as Json, each)];
      return [key, field];
    }),
  );
}

// ---- the text rendering: a short reading of the result, not a second copy of the JSON ----

const who = (people: unknown) =>
  ((people as Participant[] | undefined) ?? []).map((person) => (person.name ? `${person.name} <${person.email}>` : person.email)).join(', ');
const when = (seconds: unknown) => (typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + 'Z' : '');
const kb = (bytes: unknown) => (typeof bytes === 'number' ? `${Math.max(1, Math.round(bytes / 1024))} KB` : '?');

function messageLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : ''].filter(Boolean).join(', ');
  const files = ((item.attachments as Json[] | undefined) ?? []).map((file) => `${String(file.filename || 'unnamed')} (${kb(file.size)})`).join(', ');
  const lines = [
    `- ${String(item.id)} · ${when(item.date)} · from ${who(item.from) || '?'} to ${who(item.to) || '?'}${flags ? ` · ${flags}` : ''}`,
    `  ${JSON.stringify(item.subject ?? '')}${item.thread_id ? ` (thread ${String(item.thread_id)})` : ''}${files ? ` · attachments: ${files}` : ''}`,
  ];
  if (item.snippet) lines.push(`  ${String(item.snippet)}`);
  return lines.join('\n');
}

function threadLine(item: Json): string {
  const flags = [item.unread ? 'unread' : '', item.starred ? 'starred' : '', item.has_attachments ? 'attachments' : ''].filter(Boolean).join(', ');
  return [`- ${String(item.id)} · ${when(item.date)} · ${String(item.message_count ?? '?')} messages · ${who(item.participants)}${flags ? ` · ${flags}` : ''}`, `  ${JSON.stringify(item.subject ?? '')}`, item.snippet ? `  ${String(item.snippet)}` : '']
    .filter(Boolean)
    .join('\n');
}

/** One line of any other item: its scalar fields, long ones cut, nested values summarized. */
function genericLine(item: Json): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(item)) {
    if (key === 'grant_id' || key === 'object' || value === undefined || value === null) continue;
    if (typeof value === 'string') parts.push(`${key}: ${cut(value, 120)}`);
    else if (typeof value === 'number' || typeof value === 'boolean') parts.push(`${key}: ${String(value)}`);
    else if (Array.isArray(value)) parts.push(value.every((entry) => typeof entry === 'string') ? `${key}: ${cut(value.join(', '), 120)}` : `${key}: ${value.length} item(s)`);
    else parts.push(`${key}: {${Object.keys(value).slice(0, 6).join(', ')}}`);
  }
  return `- ${parts.join(' · ')}`;
}

/** The text content of a result: a short reading for the model; the structured content carries every field. */
export function renderForAgent(tool: string, output: Json): string {
  const lines: string[] = [];
  if (Array.isArray(output.data)) {
    const items = output.data as Json[];
    const line = tool === 'list_messages' || tool === 'list_drafts' ? messageLine : tool === 'list_threads' ? threadLine : genericLine;
    lines.push(`${items.length} item(s)${output.next_cursor ? `; more with page_token: "${String(output.next_cursor)}"` : '; no more pages'}`);
    for (const item of items) lines.push(line(item));
  } else if (tool === 'get_thread' && Array.isArray(output.messages)) {
    const { messages, latest_draft_or_message: _latest, ...thread } = output;
    lines.push(genericLine(thread).slice(2));
    for (const message of messages as Json[]) {
      const { body_text: bodyText, ...rest } = message;
      lines.push('', messageLine(rest), typeof bodyText === 'string' ? bodyText : '');
    }
  } else if (typeof output.body_text === 'string') {
    const { body_text: bodyText, body: html, ...rest } = output;
    lines.push(messageLine(rest), '', bodyText as string);
    if (typeof html === 'string') lines.push('', '--- HTML ---', html);
  } else {
    lines.push(genericLine(output).slice(2));
  }
  for (const key of ['truncated', 'body_truncated', 'html_truncated', 'messages_truncated']) {
    const note = output[key] as { hint?: string } | undefined;
    if (note?.hint) lines.push(`[cut: ${note.hint}]`);
  }
  return lines.join('\n');
}

/**
 * Runs a tool's operation for an agent (shape the output with {@link shapeForAgent}). `get_thread` also reads the
 * thread's messages (the newest {@link THREAD_MESSAGES}, through list_messages, as the thread resources do), so the
 * conversation comes back as readable text in one call; with `select`, the thread alone, as selected.
 */
export async function readForAgent(
  executor: (operation: AnyOperation, input: Record<string, unknown>) => Promise<unknown>,
  operation: AnyOperation,
  prepared: Record<string, unknown>,
  asked: Json,
): Promise<Json> {
  const output = (await executor(operation, prepared)) as Json;
  const selected = typeof asked.select === 'string' && asked.select.trim() !== '';
  if (operation.name !== 'get_thread' || selected || typeof output.id !== 'string') return output;
  const page = (await executor(listMessagesOperation(), { grant_id: prepared.grant_id, thread_id: output.id, limit: THREAD_MESSAGES })) as { data: Json[] };
  // Lists are newest first; a conversation reads oldest first.
  return { ...output, messages: [...page.data].reverse() };
}

const listMessagesOperation = (): AnyOperation => {
  const found = operations.find((candidate) => candidate.name === 'list_messages');
  if (!found) throw new Error('No operation list_messages');
  return found;
};
