/**
 * @module attachment-text/extract-worker
 * Runs in a worker thread (started by pool.ts through storage/engine/worker-module.ts): reads attachments (extract.ts),
 * converts HTML, and cuts pages by tokens (paging.ts), off the event loop. The thread answers each request with
 * plain data; an AttachmentTextError travels as its reason and message, anything else as `unreadable`.
 */
import { parentPort } from 'node:worker_threads';
import { AttachmentTextError } from './errors.js';
import { extract, type ExtractJob } from './extract.js';
import { htmlToMarkdownFallback } from './html.js';
import { ENCODE_OPTIONS, loadTokenizer, type Tokenizer } from '../tokens/index.js';
import { cutPage } from './paging.js';

/** A request to the thread. */
export type WorkerRequest =
  | { id: number; op: 'extract'; job: ExtractJob }
  | { id: number; op: 'html'; html: string; maxCharacters: number }
  | { id: number; op: 'page'; rest: string; more: boolean; maxTokens: number }
  | { id: number; op: 'count'; text: string }
  | { id: number; op: 'warm' };

/** Its answer. */
export type WorkerReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; reason: string; message: string };

let tokenizer: Promise<Tokenizer> | undefined;

async function handle(request: WorkerRequest): Promise<unknown> {
  switch (request.op) {
    case 'extract': {
      // The whole text's tokens are counted here, where the text is: it never crosses back for counting.
      const result = await extract(request.job);
      const encoding = await (tokenizer ??= loadTokenizer());
      return { ...result, tokens: result.text ? encoding.countTokens(result.text, ENCODE_OPTIONS) : 0 };
    }
    case 'html':
      return htmlToMarkdownFallback(request.html, request.maxCharacters);
    case 'page':
      return cutPage(await (tokenizer ??= loadTokenizer()), request.rest, request.maxTokens, request.more) ?? null;
    case 'count':
      return (await (tokenizer ??= loadTokenizer())).countTokens(request.text, ENCODE_OPTIONS);
    case 'warm':
      await (tokenizer ??= loadTokenizer());
      return null;
  }
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (request: WorkerRequest) => {
    handle(request).then(
      (value) => port.postMessage({ id: request.id, ok: true, value } satisfies WorkerReply),
      (error: unknown) => {
        const known = error instanceof AttachmentTextError;
        const message = String((error as { message?: unknown })?.message ?? error).slice(0, 500);
        port.postMessage({
          id: request.id,
          ok: false,
          reason: known ? error.reason : 'unreadable',
          message: known ? message : `The attachment cannot be read (${message}).`,
        } satisfies WorkerReply);
      },
    );
  });
}
