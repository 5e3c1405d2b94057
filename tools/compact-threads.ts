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
  /**
   * How tightly the thread's own fields and the notes are written, for a small budget ({@link fitThread}): 0 as
   * they are; 1 without what repeats the newest message (`latest_draft_or_message`, `snippet`), the messages'
   * empty fields and the notes' snippets; 2 also message_ids cut to the newest (the call listing them all given),
   * the messages' authentication_results and the notes' dates; 3
   * also without participants, notes by id alone.
   */
  compact?: number;
}

/** The tightest {@link ThreadReadOptions.compact}. */
export const TIGHTEST = 3;

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
  const level = options.compact ?? 0;
  // The thread's own fields, compact: its latest message as a list item; a very long list of ids cut to the newest.
  let base: Json = { ...thread };
  if (thread.latest_draft_or_message && typeof thread.latest_draft_or_message === 'object') {
    const latest = thread.latest_draft_or_message as Json;
    base.latest_draft_or_message = compactLatest(latest);
  }
  if (level >= 1) {
    const { latest_draft_or_message: _latest, snippet: _snippet, ...rest } = base;
    base = rest;
  }
  if (level >= TIGHTEST) {
    const { participants: _participants, ...rest } = base;
    base = rest;
  }
  const allIds = Array.isArray(thread.message_ids) ? (thread.message_ids as string[]) : undefined;
  const idsKept = level >= 2 ? 1 : THREAD_IDS_KEPT;
  if (allIds && allIds.length > idsKept) {
    const omitted = allIds.length - idsKept;
    const call: ToolCall = { tool: 'list_messages', arguments: { ...grantOf(input), thread_id: threadId } };
    base = {
      ...base,
      message_ids: allIds.slice(-idsKept),
      message_ids_truncated: {
        omitted,
        hint: `the ids of the ${omitted} oldest messages were cut from message_ids (the newest ${idsKept} kept); ${callText(call)} pages through them all`,
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
    if (level < 1) return rest;
    // Tighter: no empty fields (cc, bcc, reply_to, attachments, metadata), then no authentication_results (the
    // trust warnings say what matters of it; get_message has both).
    return Object.fromEntries(
      Object.entries(rest).filter(
        ([key, value]) =>
          !(Array.isArray(value) && value.length === 0) &&
          !(value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) &&
          !(level >= 2 && key === 'authentication_results'),
      ),
    );
  };
  const note = (message: Json): Json =>
    definedOnly({
      id: message.id,
      from:
        level >= TIGHTEST
          ? undefined
          : ((message.from as Participant[] | undefined) ?? []).map((person) => person.email).join(', ') || undefined,
      date: level >= 2 ? undefined : message.date,
      snippet: typeof message.snippet === 'string' && level < 1 ? cut(message.snippet, NOTE_LINE) : undefined,
      uri: options.uriOf && level < TIGHTEST ? options.uriOf(String(message.id)) : undefined,
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

/** Characters a list cursor is assumed to take while the cursor itself is not asked for yet ({@link fitThread}). */
const CURSOR_SIZE = 48;

/** Characters of the newest message's body in a thread read (its last message). */
const newestBody = (read: Json): number => {
  const newest = (read.messages as Json[] | undefined)?.at(-1);
  return typeof newest?.body_text === 'string' ? newest.body_text.length : 0;
};

/**
 * A thread read within `limit` characters, also when the budget is small (issue 35: the newest message kept, the
 * rest named). `read(compact, count, cursor)` builds it with {@link threadForAgent} from the newest `count` messages
 * of those `available` (the rest, if any, listed by the call with `cursor`). First the thread's own fields and the
 * notes are written more tightly ({@link ThreadReadOptions.compact}), as long as that gives the newest message more of
 * its body or the read is over the limit; then, if it still is, fewer of the messages left out are named one by one:
 * the others are listed by the call that continues right after the last one named (`cursorAfter(count)`).
 */
export async function fitThread(
  read: (compact: number, count: number, cursor: string | undefined) => Json,
  available: number,
  cursor: string | undefined,
  limit: number,
  cursorAfter: (count: number) => Promise<string | undefined>,
): Promise<Json> {
  let result = read(0, available, cursor);
  for (let level = 1; level <= TIGHTEST; level += 1) {
    const over = size(result) > limit;
    if (!over && !(result.messages as Json[]).at(-1)?.body_truncated) return result;
    const tighter = read(level, available, cursor);
    // Under the limit with the newest message cut: tighter only if that gives it more of its body.
    if (!over && newestBody(tighter) <= newestBody(result)) return result;
    result = tighter;
  }
  const shown = (result.messages as Json[]).length;
  const placeholder = cursor ?? 'x'.repeat(CURSOR_SIZE);
  // As much of the newest message as it gets with none of the others named: naming them must not take from it.
  const most = newestBody(read(TIGHTEST, shown, placeholder));
  if (size(result) <= limit && newestBody(result) >= most) return result;
  for (let named = available - shown; named > 0;) {
    named = Math.floor(named / 2);
    const count = shown + named;
    const trial = read(TIGHTEST, count, placeholder);
    if (named > 0 && (size(trial) > limit || newestBody(trial) < most)) continue;
    const after = await cursorAfter(count);
    // No cursor after them: the list changed meanwhile; the read as it is names every message it has.
    return after === undefined ? result : read(TIGHTEST, count, after);
  }
  return result;
}
