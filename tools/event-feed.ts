/**
 * @module tools/event-feed
 * Where the MCP resource subscriptions (./subscriptions.ts) learn that a mailbox changed: the event stream of the
 * `stream_events` operation (issue 40, item 1), in this process on a core (its hub is woken by this process's commits
 * and polls for other processes') or over `GET /v3/events/stream` of a running service. Either way the key's own
 * rights apply: a grant it cannot read is refused when the feed opens, and nothing here polls.
 */
import { randomUUID } from 'node:crypto';
import {
  AppError,
  errorCodeOfStatus,
  operations,
  runOperationStream,
  type Core,
  type Principal,
} from '../src/index.js';

/** One event of a feed: its trigger type and the object it carries (a message for `message.created`). */
export interface FeedEvent {
  type: string;
  object: Record<string, unknown>;
}

/**
 * Opens a feed of one grant's events of some trigger types, until `signal` aborts. Rejects (an AppError) when the key
 * cannot read the grant; the iterable ends when the stream ends (the service stops, the reader fell behind).
 */
export type EventFeed = (
  grantId: string,
  types: readonly string[],
  signal: AbortSignal,
) => Promise<AsyncIterable<FeedEvent>>;

const streamEvents = operations.find((operation) => operation.name === 'stream_events')!;

/** The event of a streamed notification envelope (`{ type, data: { object } }`). */
function eventOf(envelope: Record<string, unknown>): FeedEvent | undefined {
  const data = envelope.data as { object?: unknown } | undefined;
  if (typeof envelope.type !== 'string' || typeof data?.object !== 'object' || data.object === null) return undefined;
  return { type: envelope.type, object: data.object as Record<string, unknown> };
}

/** A feed on a core in this process, as `principal` (the MCP session's key). */
export function localEventFeed(core: Core, principal: Principal): EventFeed {
  return async (grantId, types, signal) => {
    const stream = await runOperationStream(
      streamEvents,
      core,
      { grant_ids: [grantId], trigger_types: [...types] },
      { principal, face: 'mcp', requestId: randomUUID(), signal },
    );
    return (async function* () {
      for await (const envelope of stream) {
        const event = eventOf(envelope);
        if (event) yield event;
      }
    })();
  };
}

/** Longest line, and largest event, of the event stream a remote feed reads (an event's JSON is one line): 4 MB. */
const MAX_LINE_CHARACTERS = 4 * 1024 * 1024;

/**
 * The events of a Server-Sent Events body (`event` and joined `data` lines), in linear time: each chunk is scanned
 * once for line ends (LF or CRLF, as the service writes them); a line longer than {@link MAX_LINE_CHARACTERS} fails.
 */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let partial = '';
  let data: string[] = [];
  let size = 0;
  let event = 'message';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      let line = partial + text.slice(start, end);
      partial = '';
      start = end + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        data = [];
        size = 0;
        event = 'message';
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        size += line.length;
        if (size > MAX_LINE_CHARACTERS)
          throw new AppError('upstream_error', 'The event stream sent an event larger than 4 MB.');
      } else if (line.startsWith('event:')) event = line.slice(6).trim();
    }
    partial += text.slice(start);
    if (partial.length > MAX_LINE_CHARACTERS)
      throw new AppError('upstream_error', 'The event stream sent a line longer than 4 MB.');
  }
}

/** A feed over `GET /v3/events/stream` of a running service (the stdio server with `AGENTPOST_URL`). */
export function remoteEventFeed(options: { url: string; apiKey: string; fetch?: typeof fetch | undefined }): EventFeed {
  const send = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '');
  return async (grantId, types, signal) => {
    const url = new URL(`${base}/v3/events/stream`);
    url.searchParams.set('grant_id', grantId);
    url.searchParams.set('trigger_types', types.join(','));
    const response = await send(url, {
      headers: { authorization: `Bearer ${options.apiKey}`, accept: 'text/event-stream', 'x-agentpost-face': 'mcp' },
      signal,
    });
    if (!response.ok || !response.body) {
      const json = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
      throw new AppError(
        errorCodeOfStatus(response.status) ?? 'upstream_error',
        json.error?.message ?? `HTTP ${response.status} from ${url.pathname}`,
      );
    }
    const body = response.body;
    return (async function* () {
      try {
        for await (const { event, data } of sseEvents(body)) {
          if (event !== 'message') return; // `event: error`: the service ended the stream
          const parsed = eventOf(JSON.parse(data) as Record<string, unknown>);
          if (parsed) yield parsed;
        }
      } catch (error) {
        if (!signal.aborted) throw error;
      }
    })();
  };
}
