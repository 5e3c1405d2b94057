/**
 * @module attachment-text/produce
 * The whole text of an attachment, by its kind, before it is paged (reader.ts) and cached: the formats read on the
 * worker threads (pool.ts) go there with the call's deadline; iCalendar is parsed by the calendar area's bounded
 * parser and message/rfc822 by the MIME area's (each in threads of their own, through their front doors), then
 * written as text here; HTML goes to the caller's converter when it has one.
 */
import { createCalendarParser, type CalendarParser } from '../calendar/index.js';
import { createMimeParser, type MimeParser } from '../mime/index.js';
import type { CachedText } from './cache.js';
import { describeCalendar } from './calendar-text.js';
import type { AttachmentTextOptions } from './contracts.js';
import { charsetOf, decodeText, htmlMetaCharset } from './decode.js';
import { CANONICAL_TYPES, type Detection } from './detect.js';
import { AttachmentTextError } from './errors.js';
import type { ExtractJob, ExtractResult } from './extract.js';
import type { Limits } from './limits.js';
import { describeMessage } from './message-text.js';
import type { Pool } from './pool.js';

/** The calendar area's parser refuses iCalendar over 1 MB (ICAL_LIMITS); larger files are read line by line. */
const CALENDAR_PARSER_BYTES = 1_000_000;

/** Rejects with a timeout when `promise` outlives the deadline. */
async function within<T>(promise: Promise<T>, deadline: number, timeoutMs: number): Promise<T> {
  const remaining = deadline - performance.now();
  if (remaining <= 0) throw timeoutError(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timeoutError(timeoutMs)), remaining);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function timeoutError(ms: number): AttachmentTextError {
  return new AttachmentTextError(
    'timeout',
    `Reading the attachment took longer than ${ms} ms and was stopped; it may be damaged or built to be slow.`,
  );
}

/** Produces an attachment's whole text; its calendar and MIME parsers start on first use. */
export interface Producer {
  /** The text of `bytes` read as `detection` says, within `deadline` (performance.now() ms; `ms` is the budget). */
  produce(
    bytes: Uint8Array,
    detection: Detection,
    call: AttachmentTextOptions,
    limits: Limits,
    deadline: number,
    ms: number,
  ): Promise<CachedText>;
  /** Stops the parsers' threads (the pool is the reader's). */
  close(): Promise<void>;
}

/** Creates the producer of a reader, on its pool; `timeoutMs` is the reader's default deadline. */
export function createProducer(pool: Pool, timeoutMs: number): Producer {
  let calendarParser: CalendarParser | undefined;
  let mimeParser: MimeParser | undefined;

  async function runExtract(job: ExtractJob, deadline: number, ms: number): Promise<ExtractResult> {
    // The worker gets a copy of its own (the caller's buffer stays the caller's), handed over without another.
    const copy = new Uint8Array(job.bytes);
    return pool
      .run<ExtractResult>({ op: 'extract', job: { ...job, bytes: copy } }, Math.max(1, deadline - performance.now()), [
        copy.buffer,
      ])
      .catch((error: unknown) => {
        throw error instanceof AttachmentTextError && error.reason === 'timeout' ? timeoutError(ms) : error;
      });
  }

  async function htmlToMarkdown(
    html: string,
    convert: AttachmentTextOptions['htmlToMarkdown'],
    limits: Limits,
    deadline: number,
  ): Promise<string> {
    if (convert) return convert(html).slice(0, limits.maxCharacters);
    return pool.run<string>(
      { op: 'html', html, maxCharacters: limits.maxCharacters },
      Math.max(1, deadline - performance.now()),
    );
  }

  // Its parameters are typed by the interface (one list of them).
  const produce: Producer['produce'] = async (bytes, detection, call, limits, deadline, ms) => {
    const job: ExtractJob = {
      kind: detection.kind,
      bytes,
      contentType: call.contentType ?? '',
      filename: call.filename ?? '',
      limits,
    };
    const cached = (result: ExtractResult, contentType = detection.contentType): CachedText => ({
      kind: result.kind,
      contentType: result.kind === 'unknown' || result.kind === 'image' ? contentType : CANONICAL_TYPES[result.kind],
      text: result.text,
      format: result.format,
      metadata: result.metadata,
      tokens: result.tokens,
    });

    switch (detection.kind) {
      case 'unknown':
        return cached({ kind: 'unknown', text: '', format: 'text', metadata: { textReadable: false } });
      case 'calendar': {
        if (bytes.length <= CALENDAR_PARSER_BYTES) {
          calendarParser ??= createCalendarParser();
          const parsed = await within(
            calendarParser.parse(decodeText(bytes, charsetOf(call.contentType))),
            deadline,
            ms,
          );
          if (parsed.ok) return cached({ kind: 'calendar', ...describeCalendar(parsed.value) });
          if (parsed.unreadable)
            throw new AttachmentTextError('unreadable', `The calendar cannot be read (${parsed.error.slice(0, 200)}).`);
        }
        return cached(await runExtract({ ...job, kind: 'calendar-lines' }, deadline, ms));
      }
      case 'message': {
        mimeParser ??= createMimeParser({ workers: 1, timeoutMs });
        const parsed = await within(mimeParser.parse(Buffer.from(bytes)), deadline, ms);
        const message = parsed.ok ? parsed.value : parsed.partial;
        if (!message)
          throw new AttachmentTextError(
            'unreadable',
            `The attached message cannot be read (${parsed.ok ? '' : parsed.error.slice(0, 200)}).`,
          );
        const body = message.body ? await htmlToMarkdown(message.body, call.htmlToMarkdown, limits, deadline) : '';
        const described = describeMessage(message, body, !parsed.ok);
        return cached({ kind: 'message', ...described, text: described.text.slice(0, limits.maxCharacters) });
      }
      case 'html':
        if (call.htmlToMarkdown) {
          const html = decodeText(bytes, charsetOf(call.contentType) ?? htmlMetaCharset(bytes));
          const text = await htmlToMarkdown(html, call.htmlToMarkdown, limits, deadline);
          return cached({ kind: 'html', text, format: 'markdown', metadata: {} });
        }
        return cached(await runExtract(job, deadline, ms));
      default:
        return cached(await runExtract(job, deadline, ms));
    }
  };

  return {
    produce,
    async close() {
      await Promise.all([calendarParser?.close(), mimeParser?.close()]);
    },
  };
}
