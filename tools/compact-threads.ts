/**
 * @module tools/compact-threads
 * A thread read for an agent (./compact.ts): its newest messages with readable bodies, newest first, within the
 * result budget; earlier ones named by one line each, with the call that lists them.
 */
import { fieldText } from '../src/operations/index.js';
import {
  callText,
  compactLatest,
  cut,
  definedOnly,
  grantOf,
  readableMessage,
  readMessageCall,
  size,
  type Json,
  type Participant,
  type ToolCall,
  type Truncation,
  DEFAULT_LIMITS,
  type Limits,
} from './compact-items.js';
import type { BodyFormat } from '../src/reading/index.js';

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
  /** The sizes to fill (from the caller's max_tokens); {@link DEFAULT_LIMITS} by default. */
  limits?: Limits;
  /** How bodies read (`body_format`, markdown by default). */
  format?: BodyFormat;
}

/**
 * A thread with its messages for a model, within `limits.result` characters. The newest message comes whole (its
 * body up to `limits.body`), then earlier ones, newest first, as many as fit (the last one in may have its body cut,
 * saying so); `messages` reads oldest first. The messages left out are listed in `messages_truncated`, newest first
 * (id, sender, date, one line), with the call that reads each, and the call that lists any older than those read.
 * `newestFirst` is the thread's message list as list_messages answers it.
 */
export function threadForAgent(thread: Json, newestFirst: Json[], options: ThreadReadOptions = {}): Json {
  const input = options.input ?? {};
  const limits = options.limits ?? DEFAULT_LIMITS;
  const threadId = String(thread.id);
  // The thread's own fields, compact: its latest message as a list item; a very long list of ids cut to the newest.
  let base: Json = { ...thread };
  if (thread.latest_draft_or_message && typeof thread.latest_draft_or_message === 'object') {
    const latest = thread.latest_draft_or_message as Json;
    base.latest_draft_or_message = compactLatest(latest);
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
    } = readableMessage(
      message,
      options.includeHtml === true,
      'get_message',
      budget,
      readCall(message.id),
      options.format,
    );
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
    let budget = limits.body;
    for (let attempt = 0; attempt < 5 && budget >= minimum; attempt += 1) {
      const shaped = readable(message, budget);
      shown.push(shaped);
      const over = size(build()) - limits.result;
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
