/**
 * @module mime/parse-inbound
 * Parsing of untrusted MIME (mailparser, in `parse-worker.ts`) on a small pool of worker threads, so a hostile
 * message never stalls the event loop: each parse runs with a deadline and a heap cap, and a worker that
 * overruns either is replaced. The result is a union, as for every parser of ours: a message that does not
 * parse is still stored, raw, with the error. The same workers cut the parts a policy removed out of a raw message
 * (`cut`, ./cut-parts.ts), which decodes and hashes each part: off the event loop too.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { blobHash } from '../../storage/index.js';
import { startWorker, workerModule } from '../../storage/engine/worker-module.js';
import type { WireParsedAttachment, WireParsedMessage } from './normalize.js';
import { unfoldHeaderLines } from './header-lines.js';
import type { PartToCut } from './cut-parts.js';

/** One attachment (or inline part) of a parsed message: the worker's form (normalize.ts), bytes as a Buffer. */
export interface ParsedAttachment extends Omit<WireParsedAttachment, 'content'> {
  content: Buffer;
}

/** What the store needs from a message (each field is described in normalize.ts). */
export interface ParsedMessage extends Omit<WireParsedMessage, 'attachments'> {
  attachments: ParsedAttachment[];
}

/** A parse outcome. On failure, `partial` holds what the header section alone gave, when anything. */
export type ParseResult =
  | { ok: true; rawHash: string; value: ParsedMessage }
  | { ok: false; rawHash: string; error: string; partial: ParsedMessage | undefined };

/** Parses raw messages off the event loop. */
export interface MimeParser {
  parse(raw: Buffer): Promise<ParseResult>;
  /**
   * {@link cutParts} (./cut-parts.ts) on a worker of the pool, under the same deadline and heap cap: `raw` with the
   * parts that have a note replaced by it, or undefined when one was not found, or the cut failed or overran.
   */
  cut(raw: Buffer, parts: readonly PartToCut[]): Promise<Buffer | undefined>;
  /** Stops the workers. Parses still queued fail with an error result. */
  close(): Promise<void>;
}

/** Options of {@link createMimeParser}. */
export interface MimeParserOptions {
  /** Worker threads (default: cores − 1, at least 2, at most 4). */
  workers?: number;
  /** Milliseconds one parse may take before its worker is replaced and the parse fails (default 15 s). */
  timeoutMs?: number;
  /** Old-generation heap cap of a worker, MB (default 512): a parse that exceeds it fails, nothing else does. */
  maxHeapMb?: number;
  /** Told when a worker crashed or was stopped for overrunning `timeoutMs` (its parse failed; the next parse starts another). */
  onCrash?: (reason: string) => void;
}

/** An empty parsed message: the shape a message has when nothing could be read from it. */
export function emptyParsedMessage(): ParsedMessage {
  return {
    subject: '',
    messageId: undefined,
    inReplyTo: undefined,
    references: [],
    date: undefined,
    from: [],
    to: [],
    cc: [],
    bcc: [],
    replyTo: [],
    body: '',
    snippet: '',
    searchText: '',
    attachments: [],
  };
}

type WireReply =
  | ({ id: number; rawHash: string } & (
      { ok: true; value: WireParsedMessage } | { ok: false; error: string; partial?: WireParsedMessage }
    ))
  | { id: number; cut: Uint8Array | null };

function fromWire(message: WireParsedMessage): ParsedMessage {
  return {
    ...message,
    messageId: message.messageId ?? undefined,
    inReplyTo: message.inReplyTo ?? undefined,
    date: message.date ?? undefined,
    attachments: message.attachments.map((attachment) => ({
      ...attachment,
      contentId: attachment.contentId ?? undefined,
      content: Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength),
    })),
  };
}

interface Job {
  id: number;
  raw: Buffer;
  /** Set for a cut ({@link MimeParser.cut}); a parse otherwise. */
  parts?: readonly PartToCut[];
  resolve(result: ParseResult): void;
  cutDone?(result: Buffer | undefined): void;
}

interface Slot {
  worker: Worker | undefined;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

const WORKER_MODULE = workerModule(import.meta.url, 'parse-worker');

/** Creates the worker pool. Workers start on first use and do not keep the process alive. */
export function createMimeParser(options: MimeParserOptions = {}): MimeParser {
  const size = options.workers ?? Math.min(4, Math.max(2, availableParallelism() - 1));
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxHeapMb = options.maxHeapMb ?? 512;
  const slots: Slot[] = Array.from({ length: size }, () => ({ worker: undefined, job: undefined, timer: undefined }));
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function failed(job: Job, error: string): ParseResult {
    return { ok: false, rawHash: blobHash(job.raw), error, partial: undefined };
  }

  /** Ends the slot's job: a parse with `result` (made only for a parse), a cut with `cut` (undefined: failed). */
  function finish(slot: Slot, result: (job: Job) => ParseResult, cut?: Buffer) {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    if (job?.cutDone) job.cutDone(cut);
    else if (job) job.resolve(result(job));
    dispatch();
  }

  function discard(slot: Slot, worker: Worker) {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    worker.removeAllListeners();
    worker.on('error', () => undefined);
    void worker.terminate();
  }

  function spawn(slot: Slot): Worker {
    const worker = startWorker(WORKER_MODULE, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } });
    worker.unref();
    worker.on('message', (reply: WireReply) => {
      if (slot.worker !== worker || slot.job?.id !== reply.id) return;
      if ('cut' in reply) {
        const cut = reply.cut ? Buffer.from(reply.cut.buffer, reply.cut.byteOffset, reply.cut.byteLength) : undefined;
        return finish(slot, (job) => failed(job, 'not a parse'), cut);
      }
      finish(slot, () =>
        reply.ok
          ? { ok: true, rawHash: reply.rawHash, value: fromWire(reply.value) }
          : {
              ok: false,
              rawHash: reply.rawHash,
              error: reply.error,
              partial: reply.partial ? fromWire(reply.partial) : undefined,
            },
      );
    });
    const crashed = (reason: string) => {
      if (slot.worker !== worker) return;
      discard(slot, worker);
      options.onCrash?.(reason);
      const job = slot.job;
      if (job) finish(slot, (stopped) => failed(stopped, `the MIME parser stopped: ${reason}`));
    };
    worker.on('error', (error) => crashed(error.message));
    worker.on('exit', (code) => crashed(`exit code ${code}`));
    slot.worker = worker;
    return worker;
  }

  function dispatch() {
    for (const slot of slots) {
      if (slot.job || queue.length === 0 || closed) continue;
      const job = queue.shift()!;
      const worker = slot.worker ?? spawn(slot);
      slot.job = job;
      slot.timer = setTimeout(() => {
        discard(slot, worker);
        options.onCrash?.(`a parse took longer than ${timeoutMs} ms`);
        finish(slot, (late) => failed(late, `parsing took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      slot.timer.unref();
      // One copy, in its own buffer, handed over without a second copy.
      const copy = new Uint8Array(job.raw);
      worker.postMessage({ id: job.id, raw: copy, parts: job.parts }, [copy.buffer]);
    }
  }

  return {
    parse(raw) {
      return new Promise<ParseResult>((resolve) => {
        const job: Job = { id: nextId++, raw, resolve };
        if (closed) return resolve(failed(job, 'the MIME parser is closed'));
        queue.push(job);
        dispatch();
      });
    },
    cut(raw, parts) {
      return new Promise<Buffer | undefined>((cutDone) => {
        const job: Job = { id: nextId++, raw, parts, resolve: () => cutDone(undefined), cutDone };
        if (closed) return cutDone(undefined);
        queue.push(job);
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) {
        if (job.cutDone) job.cutDone(undefined);
        else job.resolve(failed(job, 'the MIME parser is closed'));
      }
      await Promise.all(
        slots.map(async (slot) => {
          const worker = slot.worker;
          if (slot.job) finish(slot, (job) => failed(job, 'the MIME parser is closed'));
          if (worker) {
            slot.worker = undefined;
            worker.removeAllListeners();
            worker.on('error', () => undefined);
            await worker.terminate();
          }
        }),
      );
    },
  };
}

/** One header line of a raw message. */
export interface RawHeader {
  name: string;
  value: string;
}

/**
 * The header lines of a raw message, unfolded, in order, values as sent (not MIME-decoded). Reads at most
 * `maxBytes` of the header section and at most `maxHeaders` lines: a hostile 2 MB header is cut, not parsed whole.
 */
export function readRawHeaders(raw: Buffer, maxBytes = 256 * 1024, maxHeaders = 1000): RawHeader[] {
  const head = raw.subarray(0, Math.min(raw.length, maxBytes)).toString('latin1');
  const crlf = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
  const section = end >= 0 ? head.slice(0, end) : head;
  const headers = unfoldHeaderLines(section, maxHeaders);
  // Header bytes are usually ASCII; re-read each value as UTF-8 so 8-bit headers survive.
  return headers.map((header) => ({ name: header.name, value: Buffer.from(header.value, 'latin1').toString('utf8') }));
}
