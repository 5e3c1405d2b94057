/**
 * @module attachment-text/reader
 * The engine: an attachment's bytes → one page of its text. On the calling thread it only detects the kind
 * (detect.ts, the first 4 KB), hashes the bytes (Web Crypto, off the event loop; an attachment from the blob store
 * comes with its hash and is loaded whole only when the cache lacks its text), looks in the cache, and puts the
 * answer together; reading, HTML conversion and token counting run on the worker threads (pool.ts) within the
 * call's deadline. The whole text of each kind is produced by produce.ts.
 */
import { createHash, webcrypto } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { TextCache, type CachedText } from './cache.js';
import type {
  AttachmentMetadata,
  AttachmentText,
  AttachmentTextOptions,
  AttachmentTextReader,
  AttachmentTextReaderOptions,
  StoredAttachment,
} from './contracts.js';
import { detect } from './detect.js';
import { AttachmentTextError } from './errors.js';
import { DEFAULT_MAX_TOKENS, limitsOf } from './limits.js';
import { decodeCursor, encodeCursor, pageWindow } from './paging.js';
import { createPool, type Pool } from './pool.js';
import { createProducer } from './produce.js';

/** Defaults of a reader (see {@link AttachmentTextReaderOptions}). */
export const READER_DEFAULTS = {
  timeoutMs: 15_000,
  maxHeapMb: 256,
  maxBytes: 25 * 1024 * 1024,
  cacheCharacters: 16_000_000,
  cacheEntries: 64,
} as const;

/** A number per `htmlToMarkdown` function, so two converters never share a cache entry. */
const converterIds = new WeakMap<(html: string) => string, number>();
let nextConverterId = 1;

function converterId(converter: ((html: string) => string) | undefined): number {
  if (!converter) return 0;
  let id = converterIds.get(converter);
  if (id === undefined) converterIds.set(converter, (id = nextConverterId++));
  return id;
}

/** Bytes in hand, as a stored attachment: hashed here (Web Crypto, off the event loop). */
async function inHand(bytes: Uint8Array): Promise<StoredAttachment> {
  const sha256 = Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
  return { sha256, size: bytes.length, head: bytes, load: () => Promise.resolve(bytes) };
}

/** Creates a reader: its threads start on first use. */
export function createAttachmentTextReader(options: AttachmentTextReaderOptions = {}): AttachmentTextReader {
  const timeoutMs = options.timeoutMs ?? READER_DEFAULTS.timeoutMs;
  const maxBytes = options.maxBytes ?? READER_DEFAULTS.maxBytes;
  const pool: Pool = createPool({
    workers: options.workers ?? (availableParallelism() >= 3 ? 2 : 1),
    maxHeapMb: options.maxHeapMb ?? READER_DEFAULTS.maxHeapMb,
  });
  const cache = new TextCache(
    options.cacheEntries ?? READER_DEFAULTS.cacheEntries,
    options.cacheCharacters ?? READER_DEFAULTS.cacheCharacters,
  );
  const pending = new Map<string, Promise<CachedText>>();
  const producer = createProducer(pool, timeoutMs);

  async function extract(
    input: Uint8Array | StoredAttachment,
    call: AttachmentTextOptions = {},
  ): Promise<AttachmentText> {
    const ms = call.timeoutMs ?? timeoutMs;
    const deadline = performance.now() + ms;
    const size = input instanceof Uint8Array ? input.length : input.size;
    if (size > maxBytes)
      throw new AttachmentTextError(
        'too_large',
        `The attachment is ${size} bytes; attachments over ${maxBytes} bytes are not read.`,
      );
    // A stored attachment's hash is its address and its first bytes tell its kind: the whole is loaded on a miss.
    const stored = input instanceof Uint8Array ? await inHand(input) : input;
    const hash = stored.sha256;
    const detection = detect(stored.head, call.contentType, call.filename);
    const limits = limitsOf(call);
    const key = `${hash}|${detection.kind}|${detection.contentType}|${JSON.stringify(limits)}|${converterId(call.htmlToMarkdown)}`;
    const digest = createHash('sha256').update(key).digest('hex').slice(0, 16);
    let offset = 0;
    if (call.cursor !== undefined && call.cursor !== '') {
      const decoded = decodeCursor(call.cursor, digest);
      if (decoded === undefined)
        throw new AttachmentTextError(
          'invalid_cursor',
          'The cursor does not belong to this attachment and these options: start again without a cursor.',
        );
      offset = decoded;
    }

    let entry = cache.get(key);
    if (!entry) {
      let producing = pending.get(key);
      if (!producing) {
        producing = stored.load().then((bytes) => producer.produce(bytes, detection, call, limits, deadline, ms));
        pending.set(key, producing);
        void producing.then(
          () => pending.delete(key),
          () => pending.delete(key),
        );
      }
      entry = await producing;
      cache.set(key, entry);
    }
    if (offset > entry.text.length)
      throw new AttachmentTextError('invalid_cursor', 'The cursor points beyond the end of the text.');

    const maxTokens = Math.max(1, Math.floor(call.maxTokens ?? DEFAULT_MAX_TOKENS));
    const remaining = () => Math.max(1, deadline - performance.now());
    if (entry.tokens === undefined)
      entry.tokens = entry.text ? await pool.run<number>({ op: 'count', text: entry.text }, remaining()) : 0;
    let page = { length: 0, tokens: 0 };
    if (entry.text.length > offset) {
      // A window of the rest crosses to the thread, not the rest: the page's cost follows its budget.
      const window = pageWindow(maxTokens);
      const more = entry.text.length - offset > window;
      const rest = more ? entry.text.slice(offset, offset + window) : entry.text.slice(offset);
      page =
        (await pool.run<{ length: number; tokens: number } | null>(
          { op: 'page', rest, more, maxTokens },
          remaining(),
        )) ??
        (await pool.run<{ length: number; tokens: number }>(
          { op: 'page', rest: entry.text.slice(offset), more: false, maxTokens },
          remaining(),
        ));
    }
    const end = offset + page.length;
    const readable = entry.metadata.textReadable ?? true;
    const metadata: AttachmentMetadata = {
      kind: entry.kind,
      contentType: entry.contentType,
      ...(call.filename ? { filename: call.filename } : {}),
      bytes: size,
      sha256: hash,
      ...entry.metadata,
      textReadable: readable,
      characters: entry.text.length,
      tokens: entry.tokens ?? 0,
    };
    if (!readable && !metadata.note)
      metadata.note =
        entry.kind === 'image'
          ? `No text can be read from an image (${metadata.image?.format ?? 'image'}${metadata.image?.width ? `, ${metadata.image.width}×${metadata.image.height}` : ''}); only its metadata is given.`
          : `No text can be read from this type (${entry.contentType}); only its metadata is given.`;
    return {
      text: entry.text.slice(offset, end),
      format: entry.format,
      ...(end < entry.text.length ? { truncated: true as const, nextCursor: encodeCursor(digest, end) } : {}),
      page: { start: offset, end, tokens: page.tokens },
      metadata,
    };
  }

  return {
    extract,
    async warmUp() {
      await pool.run({ op: 'warm' }, 60_000);
    },
    async close() {
      await Promise.all([pool.close(), producer.close()]);
    },
  };
}

let shared: AttachmentTextReader | undefined;

/** The process's shared reader (default options; its threads start on first use). */
export function sharedAttachmentTextReader(): AttachmentTextReader {
  shared ??= createAttachmentTextReader();
  return shared;
}

/**
 * One page of an attachment's text, on the shared reader. Throws an AttachmentTextError naming why the attachment
 * cannot be read (`too_large`, `zip_bomb`, `timeout`, `unreadable`, `encrypted`, `unsupported`, `invalid_cursor`).
 */
export function extractAttachmentText(bytes: Uint8Array, options: AttachmentTextOptions = {}): Promise<AttachmentText> {
  return sharedAttachmentTextReader().extract(bytes, options);
}
