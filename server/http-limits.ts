/**
 * @module server/http-limits
 * Bounds on HTTP requests that sit in front of every route: the length of the path and its segments (a Hono
 * middleware), and the Node server's own refusals (header size, slow clients, malformed requests), which Node would
 * answer with a bare status line and a reset before Hono ever sees the request. Both answer in the shape of the face
 * that was asked (src/operations/http-errors.ts); and the rest of a body left unread by its answer, read and dropped.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MiddlewareHandler } from 'hono';
import { AppError, errorBody, faceOf, type Face, type Logger } from '../src/index.js';
import type { AppEnv } from './types.js';

/** Longest URL path (without the query): the longest real one, two ids and an email address, is under 1 KB. */
export const MAX_PATH_CHARS = 2048;
/**
 * Longest path segment, decoded: 320 characters, an email address used as a grant id (RFC 5321 4.5.3.1: 64 + 1 +
 * 255). Object ids are at most 256 characters (IdSchema), so a longer one is refused by its field's schema.
 */
export const MAX_PATH_SEGMENT_CHARS = 320;

/** Refuses paths and path segments over their limits with a 400 in the face's shape, before any route runs. */
export function pathLimits(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const path = c.req.path;
    if (path.length > MAX_PATH_CHARS) {
      throw new AppError(
        'invalid_request',
        `path: the URL path has ${path.length} characters; at most ${MAX_PATH_CHARS} are accepted.`,
        { field: 'path' },
      );
    }
    for (const segment of path.split('/')) {
      const length = decodedLength(segment);
      if (length > MAX_PATH_SEGMENT_CHARS) {
        throw new AppError(
          'invalid_request',
          `path: a path segment (an id or address) has ${length} characters; at most ${MAX_PATH_SEGMENT_CHARS} are accepted.`,
          { field: 'path' },
        );
      }
    }
    await next();
  };
}

function decodedLength(segment: string): number {
  if (!segment.includes('%')) return segment.length;
  try {
    return decodeURIComponent(segment).length;
  } catch {
    return segment.length;
  }
}

/** How long a refused connection may keep sending (its bytes are read and dropped) before it is closed. */
const DRAIN_MS = 5_000;

/** A parser error from Node's http server (`clientError`). */
type ClientError = Error & { code?: string; rawPacket?: Buffer };

/** What the Node server answers for a request it refuses before Hono sees it. */
interface Refusal {
  status: number;
  type: string;
  message: string;
}

/** The refusal of a `clientError`, or undefined when there is nobody to answer (the client went away). */
function refusalOf(error: ClientError, maxHeaderBytes: number): Refusal | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW': {
      const packet = error.rawPacket;
      const startsRequest = packet !== undefined && /^[A-Z]+ /.test(packet.subarray(0, 16).toString('latin1'));
      const lineEnd = startsRequest ? packet.indexOf('\r\n') : 0;
      if (startsRequest && (lineEnd === -1 || lineEnd >= maxHeaderBytes)) {
        return {
          status: 414,
          type: 'request_too_large',
          message: `The request line (method and URL) is longer than the ${maxHeaderBytes}-byte limit of request headers; ids in paths are at most ${MAX_PATH_SEGMENT_CHARS} characters.`,
        };
      }
      return {
        status: 431,
        type: 'request_too_large',
        message: `The request line and headers are larger than ${maxHeaderBytes} bytes (AGENTPOST_HTTP_MAX_HEADER_BYTES).`,
      };
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        type: 'request_timeout',
        message:
          'The request was not received in time (AGENTPOST_HTTP_HEADERS_TIMEOUT for the headers, AGENTPOST_HTTP_REQUEST_TIMEOUT for the whole request).',
      };
    default:
      return {
        status: 400,
        type: 'invalid_request_error',
        message: `The request is not valid HTTP/1.1 (${error.code ?? error.message}).`,
      };
  }
}

/** The face of a refused request, from its first bytes when the parser still has them (else `/v3`'s). */
function faceOfPacket(packet: Buffer | undefined): Face {
  const line = /^[A-Z]+ (\S+)/.exec(packet?.subarray(0, 64).toString('latin1') ?? '');
  return line ? faceOf(line[1]!) : 'v3';
}

/**
 * Answers the Node server's refusals (`clientError`: header overflow, timeouts, malformed requests) with a real
 * response in the face's error shape instead of Node's bare status line, then closes the connection gracefully:
 * what the client is still sending is read and dropped, so it gets our answer rather than a reset.
 */
export function answerClientErrors(
  server: Server,
  { maxHeaderBytes, logger }: { maxHeaderBytes: number; logger: Logger },
): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    // The parser keeps reporting the later chunks of a request it refused: it is answered once.
    if (answered.has(socket)) return;
    answered.add(socket);
    const refusal = refusalOf(error, maxHeaderBytes);
    // Once a response has begun on this socket (`_httpMessage` is Node's own link to it), no second one can follow.
    const started =
      (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!refusal || !socket.writable || started) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    logger.debug('http request refused', { request_id: requestId, status: refusal.status, code: error.code });
    const body = JSON.stringify(errorBody(faceOfPacket(error.rawPacket), requestId, refusal.type, refusal.message));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.on('error', () => undefined);
    socket.resume();
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  });
}

/**
 * Most bytes of a request body read and dropped after its response (a 413 answered from `Content-Length`, or any
 * answer given before the body was read): beyond the largest body accepted (40 MB multipart), with room to spare.
 */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;
/** How long the rest of an unread body may take to arrive after its response before the connection is closed. */
export const DISCARD_BODY_MS = 30_000;

/**
 * Reads and drops what is left of a request body once its response is sent (up to {@link MAX_DISCARDED_BODY_BYTES}
 * for up to {@link DISCARD_BODY_MS}), so that a client still writing an over-size body finishes writing and reads the
 * answer (413 in the face's shape) instead of meeting a reset (EPIPE, ECONNRESET); the connection then stays usable.
 * Beyond either bound the connection is closed. This replaces @hono/node-server's own clean-up (`autoCleanupIncoming`,
 * turned off where the server is made), which closes such a connection 500 ms after the answer.
 */
export function discardUnreadBodies(server: Server, logger: Logger): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    response.once('finish', () => {
      if (request.complete || request.destroyed) return;
      let bytes = 0;
      const cut = (reason: string) => {
        clearTimeout(timer);
        logger.debug('unread request body cut off', { reason, bytes });
        request.socket.destroy();
      };
      const timer = setTimeout(() => cut('time'), DISCARD_BODY_MS);
      timer.unref();
      // Whoever was reading the body (the web stream of the request) has its answer; the rest goes nowhere.
      request.removeAllListeners('data');
      request.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_DISCARDED_BODY_BYTES) cut('size');
      });
      request.once('end', () => {
        clearTimeout(timer);
      });
      request.once('close', () => clearTimeout(timer));
      request.resume();
    });
  });
}
