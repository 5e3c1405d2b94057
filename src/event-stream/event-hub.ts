/**
 * @module event-stream/event-hub
 * The event stream's engine (issue 40, item 1; docs/webhooks.md#the-event-stream): every stream of this process reads
 * the outbox through one tail. The tail reads the events committed after the newest it has seen, once per wake-up,
 * and keeps the last {@link RING_EVENTS} (with their notifications, built once) for the streams to take from:
 * - woken at once when this process records an event (after the writer's lock is free, so the commit is visible);
 * - and every `pollMs` while a stream is open, for events other processes committed.
 * A stream behind the kept events (resuming from an old cursor, or reading slowly) reads its own pages from the
 * outbox until it has caught up; one more than `maxBehind` events behind the newest is closed (the client resumes
 * from its cursor), so a client that does not read never costs memory. Nothing runs while no stream is open.
 */
import type { Logger } from '../ports/index.js';
import type { Database } from '../../storage/index.js';
import { AppError } from '../errors.js';
import { onEventRecorded, type OutboxRow } from '../outbox/index.js';
import { notificationsOf } from '../webhooks/index.js';
import type { EventHub, EventStreamFilter, StreamedEvent, EventSubscription } from './contracts.js';
import { eventsAfter, seqBounds } from './event-stream-store.js';

/** Events the tail keeps in memory for the streams (with their notifications). */
export const RING_EVENTS = 2_000;
/** Events read per query, by the tail and by a stream catching up. */
const PAGE_EVENTS = 500;

interface Kept {
  row: OutboxRow;
  notification: StreamedEvent['notification'];
}

/** Whether a stream wants an event. */
function wanted(filter: EventStreamFilter, row: OutboxRow): boolean {
  if (row.applicationId !== filter.applicationId) return false;
  if (filter.grantIds && (row.grantId === null || !filter.grantIds.has(row.grantId))) return false;
  if (filter.types && !filter.types.has(row.type)) return false;
  return filter.allowType ? filter.allowType(row.type) : true;
}

/** Reads a cursor (`seq` as decimal digits). */
function parseCursor(cursor: string): number {
  if (!/^\d{1,15}$/.test(cursor))
    throw new AppError(
      'invalid_request',
      `cursor: ${JSON.stringify(cursor.slice(0, 40))} is not a cursor of this stream.`,
    );
  return Number(cursor);
}

/** Creates the hub of this process; `close` ends every stream. */
export function createEventHub(
  { db, logger }: { db: Database; logger?: Logger | undefined },
  options: { pollMs: number; maxBehind: number },
): EventHub {
  const ring: Kept[] = [];
  /** The highest seq the tail has read (undefined until the first stream opens). */
  let head: number | undefined;
  let subscribers = 0;
  let waiters: (() => void)[] = [];
  let running: Promise<void> | undefined;
  let again = false;
  /** Whether a wake-up since the last read named an event of a transaction that may still be open. */
  let uncommitted = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let closed = false;
  const open = new Set<{ end(reason: string): void }>();

  function wakeStreams(): void {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  }

  /**
   * Reads what was committed after `head` into the ring, page by page; one run at a time (a wake during it repeats
   * it). `committed` false: the event was announced from a transaction still open.
   */
  function tail(committed = true): void {
    if (!committed) uncommitted = true;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        // An event recorded in a transaction still open is visible once this process's write lock is free; the mail
        // writer announces its events after their commit, and the poll reads what other processes committed.
        if (uncommitted) {
          uncommitted = false;
          await db.exclusive(async () => undefined);
        }
        for (;;) {
          const rows = await eventsAfter(db.orm, head ?? 0, PAGE_EVENTS);
          if (rows.length === 0) break;
          const notifications = await notificationsOf(db.orm, rows);
          for (const [index, row] of rows.entries()) ring.push({ row, notification: notifications[index]! });
          if (ring.length > RING_EVENTS) ring.splice(0, ring.length - RING_EVENTS);
          head = rows.at(-1)!.seq;
          wakeStreams();
          if (rows.length < PAGE_EVENTS) break;
        }
      } while (again && subscribers > 0);
    })()
      .catch((error: unknown) => logger?.warn('event stream: reading the outbox failed', { error: String(error) }))
      .finally(() => {
        running = undefined;
      });
  }

  function start(): void {
    if (subscribers++ > 0) return;
    unsubscribe = onEventRecorded(tail);
    timer = setInterval(() => tail(), options.pollMs);
    timer.unref();
  }

  function stop(): void {
    if (--subscribers > 0) return;
    unsubscribe?.();
    clearInterval(timer);
  }

  /** The next page for a stream at `position`: from the ring when it reaches back that far, else from the outbox. */
  async function pageAfter(position: number, filter: EventStreamFilter): Promise<{ events: Kept[]; last: number }> {
    const first = ring[0];
    const start = first && first.row.seq <= position + 1 ? ring.findIndex((kept) => kept.row.seq > position) : -1;
    if (start !== -1) {
      const taken = ring.slice(start, start + PAGE_EVENTS);
      return { events: taken.filter((kept) => wanted(filter, kept.row)), last: taken.at(-1)!.row.seq };
    }
    const rows = await eventsAfter(db.orm, position, PAGE_EVENTS);
    // Nothing after it (the events up to the head were purged meanwhile): the stream has caught up.
    if (rows.length === 0) return { events: [], last: Math.max(position, head ?? position) };
    const matching = rows.filter((row) => wanted(filter, row));
    const notifications = await notificationsOf(db.orm, matching);
    return {
      events: matching.map((row, index) => ({ row, notification: notifications[index]! })),
      last: rows.at(-1)!.seq,
    };
  }

  return {
    async open(filter, cursor) {
      if (closed) throw new AppError('unavailable', 'The service is shutting down; retry in a moment.');
      const bounds = await seqBounds(db.orm);
      let position = bounds.newest;
      if (cursor !== undefined) {
        const asked = parseCursor(cursor);
        if (asked > bounds.newest)
          throw new AppError(
            'invalid_request',
            `cursor: ${cursor} is ahead of the newest event; resume with a cursor this stream sent.`,
          );
        if (asked + 1 < bounds.oldest)
          throw new AppError(
            'gone',
            `cursor: the events after ${cursor} are no longer kept (the event retention is AGENTPOST_EVENT_RETENTION_HOURS); open the stream without a cursor and read the missed changes through the API.`,
            undefined,
            { type: 'cursor_expired' },
          );
        position = asked;
      }
      start();
      // Events committed while no stream was open were never read into the ring: it starts again at the newest, so
      // that what it holds always runs without a gap up to the head (streams behind it read the outbox).
      if (head === undefined || head < bounds.newest) {
        ring.length = 0;
        head = bounds.newest;
      }
      let buffered: Kept[] = [];
      let ended: string | undefined;
      let wakeSelf: (() => void) | undefined;
      const handle = {
        end(reason: string) {
          if (ended !== undefined) return;
          ended = reason;
          stop();
          open.delete(handle);
          wakeSelf?.();
        },
      };
      open.add(handle);

      async function next(): Promise<IteratorResult<StreamedEvent>> {
        for (;;) {
          if (ended !== undefined) return { done: true, value: undefined };
          const kept = buffered.shift();
          if (kept) return { done: false, value: { cursor: String(kept.row.seq), notification: kept.notification } };
          if (head !== undefined && head - position > options.maxBehind) {
            handle.end('behind');
            throw new AppError(
              'rate_limited',
              `This stream fell more than ${options.maxBehind} events behind (AGENTPOST_EVENT_STREAM_MAX_BEHIND); resume from your last cursor.`,
              { retryAfterSeconds: 1 },
              { type: 'stream_behind' },
            );
          }
          if (head !== undefined && position < head) {
            const page = await pageAfter(position, filter);
            position = page.last;
            buffered = page.events;
            continue;
          }
          await new Promise<void>((resolve) => {
            wakeSelf = resolve;
            waiters.push(resolve);
          });
          wakeSelf = undefined;
        }
      }

      const subscription: EventSubscription = {
        [Symbol.asyncIterator]: () => ({
          next,
          return: () => {
            handle.end('closed');
            return Promise.resolve({ done: true, value: undefined });
          },
        }),
        close: () => handle.end('closed'),
        get position() {
          return String(position);
        },
      };
      return subscription;
    },

    close() {
      closed = true;
      for (const handle of [...open]) handle.end('shutdown');
    },
  };
}
