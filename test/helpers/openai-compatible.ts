/**
 * A real OpenAI-compatible chat completions server on loopback (node:http, an ephemeral port), standing in for a
 * hosted model: `POST /v1/chat/completions`, plain JSON or streamed (SSE `data:` chunks, then `[DONE]`; usage in
 * the last chunk when `stream_options.include_usage` asks for it), as OpenAI's API answers. Tests script what it
 * answers next (a suggestion, a 429, a 500 with a message, a slow answer) and read the requests it received, so
 * they assert what reached the model.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat completions request as received. */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  [key: string]: unknown;
}

/** What the server answers to the next request. */
export type ModelAnswer =
  /** A completion of these pieces (streamed one chunk each, or joined), with this usage. */
  | {
      kind: 'text';
      pieces: string[];
      usage?: { prompt_tokens: number; completion_tokens: number };
      pieceDelayMs?: number;
    }
  /** An error status with OpenAI's error body (`{error: {message, type}}`), and headers such as Retry-After. */
  | { kind: 'error'; status: number; message: string; headers?: Record<string, string> }
  /** No answer for `ms` milliseconds, then a completion (for timeouts). */
  | { kind: 'slow'; ms: number; text: string };

/** The loopback model server. */
export interface FakeModelServer {
  /** Base URL for AGENTPOST_AI_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request received, in order. */
  requests: ChatRequest[];
  /** Streamed answers whose client went away before their end (the caller stopped the generation). */
  readonly cutOff: number;
  /** Queues the answers to the next requests (when the queue is empty: a text answer "Default suggestion."). */
  answer(...answers: ModelAnswer[]): void;
  close(): Promise<void>;
}

function chunk(
  id: string,
  model: string,
  delta: Record<string, unknown>,
  finishReason: string | null,
  usage?: unknown,
): string {
  return `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: usage && finishReason === null && Object.keys(delta).length === 0 ? [] : [{ index: 0, delta, finish_reason: finishReason }], ...(usage ? { usage } : {}) })}\n\n`;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Starts the server on 127.0.0.1, port 0. */
export async function startFakeModelServer(): Promise<FakeModelServer> {
  const requests: ChatRequest[] = [];
  const queue: ModelAnswer[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let cutOff = 0;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: { message: `no route ${request.method} ${request.url}`, type: 'invalid_request_error' },
        }),
      );
      return;
    }
    const body = JSON.parse(await readBody(request)) as ChatRequest;
    requests.push(body);
    const answer = queue.shift() ?? {
      kind: 'text',
      pieces: ['Default suggestion.'],
      usage: { prompt_tokens: 10, completion_tokens: 3 },
    };
    if (answer.kind === 'error') {
      response
        .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
        .end(JSON.stringify({ error: { message: answer.message, type: 'server_error', code: null } }));
      return;
    }
    if (answer.kind === 'slow') {
      await sleep(answer.ms);
      if (response.destroyed) return;
    }
    const pieces = answer.kind === 'text' ? answer.pieces : [answer.text];
    const usage =
      answer.kind === 'text'
        ? (answer.usage ?? { prompt_tokens: 10, completion_tokens: pieces.length })
        : { prompt_tokens: 10, completion_tokens: 1 };
    const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const id = `chatcmpl-${requests.length}`;
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') }, finish_reason: 'stop' }],
          usage: fullUsage,
        }),
      );
      return;
    }
    response.once('close', () => {
      if (!response.writableFinished) cutOff++;
    });
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    response.write(chunk(id, body.model, { role: 'assistant', content: '' }, null));
    for (const piece of pieces) {
      if (response.destroyed) return;
      response.write(chunk(id, body.model, { content: piece }, null));
      if (answer.kind === 'text' && answer.pieceDelayMs) await sleep(answer.pieceDelayMs);
    }
    response.write(chunk(id, body.model, {}, 'stop'));
    if (body.stream_options?.include_usage) response.write(chunk(id, body.model, {}, null, fullUsage));
    response.end('data: [DONE]\n\n');
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get cutOff() {
      return cutOff;
    },
    answer: (...answers) => queue.push(...answers),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
