/**
 * @module event-stream/event-hub
 * The event stream's engine (issue 40, item 1; docs/webhooks.md#the-event-stream): every stream of this process reads
 * the outbox through one tail. The tail reads the events committed after the newest it has seen, once per wake-up,
 * and keeps the last {@link RING_EVENTS} for the streams to take from (an event's notification, which may read a
 * message body back, is built once, when a stream first wants it: events no stream wants cost no read):
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

/** Events the tail keeps in memory for the streams. */
export const RING_EVENTS = 2_000;
/** Events read per query, by the tail and by a stream catching up. */
const PAGE_EVENTS = 500;

type Notification = StreamedEvent['notification'];

/** An event of the ring, and its notification once a stream wanted it. */
interface Kept {
  row: OutboxRow;
  notification?: Promise<Notification>;
}

/** The notifications of kept events, built in one batch for those that have none yet (shared by every stream). */
function notificationsFor(db: Database, kept: readonly Kept[]): Promise<Notification[]> {
  const missing = kept.filter((one) => one.notification === undefined);
  if (missing.length > 0) {
    const batch = notificationsOf(
      db.orm,
      missing.map((one) => one.row),
    );
    for (const [index, one] of missing.entries()) one.notification = batch.then((built) => built[index]!);
  }
  return Promise.all(kept.map((one) => one.notification!));
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
          for (const row of rows) ring.push({ row });
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
  async function pageAfter(
    position: number,
    filter: EventStreamFilter,
  ): Promise<{ events: StreamedEvent[]; last: number }> {
    const first = ring[0];
    const start = first && first.row.seq <= position + 1 ? ring.findIndex((kept) => kept.row.seq > position) : -1;
    let taken: Kept[];
    if (start !== -1) {
      taken = ring.slice(start, start + PAGE_EVENTS);
    } else {
      const rows = await eventsAfter(db.orm, position, PAGE_EVENTS);
      // Nothing after it (the events up to the head were purged meanwhile): the stream has caught up.
      if (rows.length === 0) return { events: [], last: Math.max(position, head ?? position) };
      taken = rows.map((row) => ({ row }));
    }
    const matching = taken.filter((kept) => wanted(filter, kept.row));
    const notifications = await notificationsFor(db, matching);
    return {
      events: matching.map((kept, index) => ({ cursor: String(kept.row.seq), notification: notifications[index]! })),
      last: taken.at(-1)!.row.seq,
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
      let buffered: StreamedEvent[] = [];
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
          const event = buffered.shift();
          if (event) return { done: false, value: event };
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
