/**
 * `GET /v3/events/stream` (extension; issue 40, item 1; docs/webhooks.md#the-event-stream): the notifications
 * webhooks carry, for a client with no public URL, framed two ways over one path:
 * - **Server-Sent Events**: `id: <cursor>` and `data: <notification JSON>` per event, a comment line as the heartbeat
 *   of an idle stream, `event: error` with the Nylas error envelope when the service ends the stream (it fell too far
 *   behind, the service shuts down);
 * - **WebSocket** (a request with `Upgrade: websocket`): one notification JSON per text frame, pings as heartbeats;
 *   a client that does not read is closed (1013) once its unsent frames pass {@link MAX_BUFFERED_BYTES}.
 * The work, checks and access log are the `stream_events` operation's; this module only frames. The WebSocket
 * handshake reaches this route through {@link dispatchUpgrade}, which the HTTP server calls on `upgrade`.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Hono } from 'hono';
import { WebSocketServer, type WebSocket } from 'ws';
import { errorBody, httpErrorOf, operations, runOperationStream } from '../../src/index.js';
import { peerAddress } from '../middleware/rate-limit.js';
import type { AppEnv } from '../types.js';

/** Bytes a WebSocket client may leave unread before its stream is closed. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Largest frame a client may send (the stream reads none; pings and closes are small). */
const MAX_CLIENT_FRAME_BYTES = 4 * 1024;

/** What the HTTP server hands the route for a WebSocket handshake (`c.env.upgrade`). */
interface Upgrade {
  incoming: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  /** Set once the route took the socket over. */
  done: boolean;
}

let sockets: WebSocketServer | undefined;

const streamEvents = operations.find((operation) => operation.name === 'stream_events')!;

/** The operation's input from the query: `grant_id` repeatable (or comma-separated), `trigger_types`, `cursor`. */
function inputOf(c: Context<AppEnv>): Record<string, unknown> {
  const url = new URL(c.req.url);
  const list = (...names: string[]) =>
    names
      .flatMap((name) => url.searchParams.getAll(name))
      .flatMap((value) => value.split(','))
      .map((value) => value.trim())
      .filter(Boolean);
  const grants = list('grant_id', 'grant_ids');
  const types = list('trigger_types', 'trigger_type');
  const cursor = url.searchParams.get('cursor') ?? c.req.header('last-event-id');
  return {
    ...(grants.length > 0 ? { grant_ids: grants } : {}),
    ...(types.length > 0 ? { trigger_types: types } : {}),
    ...(cursor ? { cursor } : {}),
  };
}

/** Mounts the route on the authenticated `/v3` app. */
export function mountEventStream(v3: Hono<AppEnv>, heartbeatSeconds: number): void {
  v3.get('/events/stream', async (c) => {
    const upgrade = (c.env as { upgrade?: Upgrade } | undefined)?.upgrade;
    const aborted = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => aborted.abort(), { once: true });
    const context = {
      principal: c.get('principal'),
      requestId: c.get('requestId'),
      face: 'http' as const,
      address: peerAddress(c),
      signal: aborted.signal,
    };
    const events = await runOperationStream(streamEvents, c.get('core'), inputOf(c), context);
    const iterator = events[Symbol.asyncIterator]();
    if (upgrade && /^websocket$/i.test(c.req.header('upgrade') ?? '')) {
      upgrade.done = true;
      sockets ??= new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
      sockets.handleUpgrade(upgrade.incoming, upgrade.socket, upgrade.head, (socket) =>
        pump(socket, iterator, heartbeatSeconds, c.get('requestId'), aborted),
      );
      return c.body(null, 200);
    }
    // Each event is a small write: without this, Nagle's algorithm holds one back until the last is acknowledged.
    (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.setNoDelay(true);
    return sse(iterator, heartbeatSeconds, c.get('requestId'));
  });
}

/** The events as Server-Sent Events, a heartbeat comment after each idle `heartbeatSeconds`. */
function sse(iterator: AsyncIterator<Record<string, unknown>>, heartbeatSeconds: number, requestId: string): Response {
  const encoder = new TextEncoder();
  let pending: Promise<IteratorResult<Record<string, unknown>>> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // The client learns at once that the stream is open (and how soon to reconnect).
        controller.enqueue(encoder.encode(': connected\nretry: 2000\n\n'));
      },
      async pull(controller) {
        pending ??= iterator.next();
        let timer: NodeJS.Timeout | undefined;
        const idle = new Promise<'idle'>((resolve) => {
          timer = setTimeout(() => resolve('idle'), heartbeatSeconds * 1000);
        });
        try {
          const step = await Promise.race([pending, idle]);
          if (step === 'idle') {
            controller.enqueue(encoder.encode(': heartbeat\n\n'));
            return;
          }
          pending = undefined;
          if (step.done) {
            controller.close();
            return;
          }
          const cursor = String(step.value.cursor);
          controller.enqueue(encoder.encode(`id: ${cursor}\ndata: ${JSON.stringify(step.value)}\n\n`));
        } catch (error) {
          const { type, message } = httpErrorOf(error);
          controller.enqueue(
            encoder.encode(`event: error\ndata: ${JSON.stringify(errorBody('v3', requestId, type, message))}\n\n`),
          );
          controller.close();
        } finally {
          clearTimeout(timer);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    new CountQueuingStrategy({ highWaterMark: 16 }),
  );
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': requestId,
    },
  });
}

/** Sends each event as a text frame; pings every `heartbeatSeconds`; closes a client that does not read. */
function pump(
  socket: WebSocket,
  iterator: AsyncIterator<Record<string, unknown>>,
  heartbeatSeconds: number,
  requestId: string,
  aborted: AbortController,
): void {
  let alive = true;
  const heartbeat = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    socket.ping();
  }, heartbeatSeconds * 1000);
  socket.on('pong', () => {
    alive = true;
  });
  socket.on('close', () => {
    clearInterval(heartbeat);
    aborted.abort();
    void iterator.return?.();
  });
  socket.on('error', () => socket.terminate());
  void (async () => {
    try {
      for (;;) {
        const step = await iterator.next();
        if (step.done || socket.readyState !== socket.OPEN) break;
        if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
          socket.close(1013, 'Too far behind: resume with the cursor of the last event you read.');
          return;
        }
        socket.send(JSON.stringify(step.value));
      }
      socket.close(1001, 'The stream ended.');
    } catch (error) {
      const { type, message } = httpErrorOf(error);
      if (socket.readyState === socket.OPEN) {
        socket.send(JSON.stringify(errorBody('v3', requestId, type, message)));
        socket.close(1011, type.slice(0, 100));
      }
    }
  })();
}

/**
 * The HTTP server's `upgrade` listener: a WebSocket handshake goes through the app (authentication, rate limits,
 * the route) with the socket at hand; an answer other than the handshake (401, 404, …) is written on the socket as
 * an HTTP response, which is then closed.
 */
export function dispatchUpgrade(
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  incoming: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const upgrade: Upgrade = { incoming, socket, head, done: false };
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  socket.on('error', () => socket.destroy());
  const request = new Request(`http://${incoming.headers.host ?? 'localhost'}${incoming.url ?? '/'}`, {
    method: incoming.method ?? 'GET',
    headers,
  });
  void Promise.resolve(fetch(request, { incoming, upgrade }))
    .then(async (response) => {
      if (upgrade.done) return;
      const body = Buffer.from(await response.arrayBuffer());
      const head =
        `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n` +
        `content-type: ${response.headers.get('content-type') ?? 'application/json'}\r\n` +
        `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
      socket.end(Buffer.concat([Buffer.from(head), body]));
    })
    .catch(() => socket.destroy());
}
