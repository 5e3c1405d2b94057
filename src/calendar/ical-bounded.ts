/**
 * @module calendar/ical-bounded
 * Parsing of untrusted iCalendar (iMIP invitations, replies and cancellations, `.ics` attachments) off the event
 * loop: {@link parseICalendar} runs in a worker thread (`ical-worker.ts`) with a deadline and a heap cap. The codec's
 * own limits (ICAL_LIMITS) bound every cost we know of; the thread bounds the ones we do not. A parse that overruns
 * either kills its thread and comes back as `{ ok: false, unreadable: true }`, and the service goes on.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker, workerModule } from '../../storage/engine/worker-module.js';
import type { ParsedCalendar } from './ical.js';

/**
 * A bounded parse outcome. `unreadable` is true when the parse was stopped (deadline, heap cap, crash of its
 * thread): the input is to be treated as unreadable, not retried. An ordinary refusal (not iCalendar, a limit of
 * ICAL_LIMITS) has `unreadable: false` and the codec's message.
 */
export type BoundedParseResult =
  { ok: true; value: ParsedCalendar } | { ok: false; error: string; unreadable: boolean };

/** Options of one parse. */
export interface BoundedParseOptions {
  /** Zone of floating times when the calendar names none (X-WR-TIMEZONE). */
  defaultTimeZone?: string;
}

/** Parses iCalendar off the event loop. */
export interface CalendarParser {
  parse(text: string, options?: BoundedParseOptions): Promise<BoundedParseResult>;
  /** Stops the thread. Parses under way or queued fail (not unreadable). */
  close(): Promise<void>;
}

/** Options of {@link createCalendarParser}. */
export interface CalendarParserOptions {
  /** Milliseconds one parse may take once its thread is ready (default {@link ICAL_PARSE_LIMITS}.timeoutMs). */
  timeoutMs?: number;
  /** Old-generation heap cap of the thread, MB (default {@link ICAL_PARSE_LIMITS}.maxHeapMb). */
  maxHeapMb?: number;
  /** Milliseconds the thread may take to start (load the codec) before the parse fails (default 30 s). */
  startTimeoutMs?: number;
  /** Told when the thread stopped on its own or was stopped (deadline, heap cap, crash); the next parse starts another. */
  onCrash?: (reason: string) => void;
}

/**
 * Why these values: a 1 MB calendar at every limit of ICAL_LIMITS parses in well under a second on one core; five
 * seconds leave room for a busy machine. 128 MB is four times what such a parse allocates (and what the old
 * generation of the thread needs to load ical.js and the codec).
 */
export const ICAL_PARSE_LIMITS = { timeoutMs: 5_000, maxHeapMb: 128, startTimeoutMs: 30_000 } as const;

const WORKER_MODULE = workerModule(import.meta.url, 'ical-worker');

interface Job {
  id: number;
  text: string;
  defaultTimeZone: string | undefined;
  resolve(result: BoundedParseResult): void;
}

type WorkerReply =
  { ready: true } | { id: number; result: { ok: true; value: ParsedCalendar } | { ok: false; error: string } };

/**
 * Creates a parser with one thread: invitations are few, and a hostile one holds the others back by the deadline at
 * most. The thread starts on first use, is replaced after an overrun, and keeps the process alive only while it has
 * work (an unreferenced thread with a parse under way would let a short-lived process exit before the answer).
 */
export function createCalendarParser(options: CalendarParserOptions = {}): CalendarParser {
  const timeoutMs = options.timeoutMs ?? ICAL_PARSE_LIMITS.timeoutMs;
  const maxHeapMb = options.maxHeapMb ?? ICAL_PARSE_LIMITS.maxHeapMb;
  const startTimeoutMs = options.startTimeoutMs ?? ICAL_PARSE_LIMITS.startTimeoutMs;
  const queue: Job[] = [];
  let worker: Worker | undefined;
  let ready = false;
  let current: Job | undefined;
  let timer: NodeJS.Timeout | undefined;
  let nextId = 1;
  let closed = false;

  function stop(target: Worker) {
    if (worker !== target) return;
    worker = undefined;
    ready = false;
    target.removeAllListeners();
    target.on('error', () => undefined);
    void target.terminate();
  }

  function finish(result: BoundedParseResult) {
    const job = current;
    if (timer) clearTimeout(timer);
    timer = undefined;
    current = undefined;
    job?.resolve(result);
    dispatch();
    // An idle thread does not keep the process alive; one with work does (until its answer or deadline).
    if (!current && queue.length === 0) worker?.unref();
  }

  /** The thread stopped or overran: the parse under way is unreadable (`unreadable`), or failed for another reason. */
  function fail(target: Worker, error: string, unreadable: boolean) {
    if (worker !== target) return;
    stop(target);
    options.onCrash?.(error);
    if (current) finish({ ok: false, error, unreadable });
    else dispatch();
  }

  function spawn(): Worker {
    // Referenced while it has work (see finish); adding the listeners below references it anyway.
    const started = startWorker(WORKER_MODULE, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } });
    worker = started;
    ready = false;
    const startTimer = setTimeout(
      () => fail(started, `the iCalendar parser did not start within ${startTimeoutMs} ms`, false),
      startTimeoutMs,
    );
    startTimer.unref();
    started.on('message', (reply: WorkerReply) => {
      if (worker !== started) return;
      if ('ready' in reply) {
        clearTimeout(startTimer);
        ready = true;
        dispatch();
        return;
      }
      if (current?.id !== reply.id) return;
      finish(reply.result.ok ? reply.result : { ok: false, error: reply.result.error, unreadable: false });
    });
    const crashed = (reason: string) => {
      clearTimeout(startTimer);
      // Before it was ready, the thread could not load the codec: a fault of ours, not of the input.
      fail(
        started,
        ready ? `the iCalendar parser stopped: ${reason}` : `the iCalendar parser could not start: ${reason}`,
        ready,
      );
    };
    started.on('error', (error) => crashed(error.message));
    started.on('exit', (code) => crashed(`exit code ${code}`));
    return started;
  }

  function dispatch() {
    if (closed || current || queue.length === 0) return;
    const target = worker ?? spawn();
    if (!ready) return;
    const job = queue.shift()!;
    current = job;
    target.ref();
    timer = setTimeout(() => fail(target, `reading the calendar took longer than ${timeoutMs} ms`, true), timeoutMs);
    timer.unref();
    target.postMessage({
      id: job.id,
      text: job.text,
      ...(job.defaultTimeZone ? { defaultTimeZone: job.defaultTimeZone } : {}),
    });
  }

  return {
    parse(text, parseOptions = {}) {
      return new Promise<BoundedParseResult>((resolve) => {
        if (closed) return resolve({ ok: false, error: 'the iCalendar parser is closed', unreadable: false });
        queue.push({ id: nextId++, text, defaultTimeZone: parseOptions.defaultTimeZone, resolve });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0))
        job.resolve({ ok: false, error: 'the iCalendar parser is closed', unreadable: false });
      if (current) finish({ ok: false, error: 'the iCalendar parser is closed', unreadable: false });
      const target = worker;
      if (target) {
        worker = undefined;
        target.removeAllListeners();
        target.on('error', () => undefined);
        await target.terminate();
      }
    },
  };
}

let shared: CalendarParser | undefined;

/** The process's shared bounded parser (default limits; its thread starts on first use). */
export function sharedCalendarParser(): CalendarParser {
  shared ??= createCalendarParser();
  return shared;
}

/**
 * Parses untrusted iCalendar text on the shared bounded parser. Never throws. See {@link BoundedParseResult} for
 * what `unreadable` means.
 */
export function parseICalendarBounded(text: string, options: BoundedParseOptions = {}): Promise<BoundedParseResult> {
  return sharedCalendarParser().parse(text, options);
}
