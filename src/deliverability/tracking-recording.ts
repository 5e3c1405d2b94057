/**
 * @module deliverability/tracking-recording
 * Recording tracking hits (./tracking-service.ts): each hit is put in a buffer and written with the others of its
 * batch in ONE transaction, {@link FLUSH_DELAY_MS} later, after the answer went out; a hit is counted or flagged, a
 * counted hit bumps the counters and records its notification in the outbox in the same transaction.
 */
import { and, desc, eq, inArray } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { EngagementFlag } from '../../storage/schema/deliverability.js';
import { announceRecordedEvents, type TriggerType } from '../outbox/index.js';
import { insertEngagementEvents } from './tracking-store.js';
import {
  EARLY_MS,
  FLUSH_DELAY_MS,
  MAX_PENDING_HITS,
  RECENT_HITS,
  REPEAT_OPEN_MS,
  scannerUserAgent,
  type BatchState,
  type Hit,
  type Recent,
  type TrackedRow,
  type TrackingState,
} from './tracking-state.js';

/** Hits written per transaction at most. */
const MAX_BATCH = 2_000;

export function remember(tracking: TrackingState, hit: Hit): void {
  if (tracking.pending.length >= MAX_PENDING_HITS) {
    tracking.dropped++;
    return;
  }
  tracking.pending.push(hit);
  schedule(tracking);
}

/** Writes the buffer {@link FLUSH_DELAY_MS} from now, unless a write is under way (it schedules the next itself). */
function schedule(tracking: TrackingState): void {
  if (tracking.timer === undefined && tracking.writing === undefined && tracking.pending.length > 0) {
    tracking.timer = setTimeout(() => void start(tracking, false), FLUSH_DELAY_MS);
    tracking.timer.unref?.();
  }
}

/**
 * Writes buffered hits, a batch per transaction: one batch, and more while full ones wait (`all`: until the buffer
 * is empty). Under a steady flood a batch is written at most every {@link FLUSH_DELAY_MS}, whatever the rate.
 */
async function writeBatches(tracking: TrackingState, all: boolean): Promise<void> {
  do {
    const batch = tracking.pending.splice(0, MAX_BATCH);
    try {
      // The commit's fsync runs off the event loop (durableWrite), so answering hits goes on meanwhile.
      await tracking.db.durableWrite((tx) => writeBatch(tracking, tx, batch));
    } catch (error) {
      tracking.logger.error('tracking: a batch of hits could not be recorded', {
        hits: batch.length,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  } while (tracking.pending.length >= MAX_BATCH || (all && tracking.pending.length > 0));
  if (tracking.dropped > 0) {
    tracking.logger.warn('tracking: hits answered but not recorded (the buffer was full)', { hits: tracking.dropped });
    tracking.dropped = 0;
  }
}

/** Starts a write unless one is under way; returns it. */
function start(tracking: TrackingState, all: boolean): Promise<void> {
  if (tracking.timer !== undefined) {
    clearTimeout(tracking.timer);
    tracking.timer = undefined;
  }
  tracking.writing ??= writeBatches(tracking, all).finally(() => {
    tracking.writing = undefined;
    schedule(tracking);
  });
  return tracking.writing;
}

/** Writes every hit buffered so far (shutdown, tests). */
export async function drain(tracking: TrackingState): Promise<void> {
  while (tracking.writing !== undefined || tracking.pending.length > 0)
    await (tracking.writing ?? start(tracking, true));
}

function flagOf(hit: Hit, row: TrackedRow): EngagementFlag | null {
  if (hit.head) return 'head';
  if (scannerUserAgent(hit.userAgent)) return 'scanner';
  if (hit.at - row.sentAt < EARLY_MS) return 'early';
  if (hit.kind === 'open' && row.lastOpenAt !== null && hit.at - row.lastOpenAt < REPEAT_OPEN_MS) return 'repeat';
  return null;
}

/** The last counted hits of a kind of a message, oldest first, numbered from 0 across all its counted hits. */
async function recentsOf(tx: Tx, state: BatchState, kind: 'open' | 'click'): Promise<Recent[]> {
  const known = state.recents[kind];
  if (known) return known;
  const rows = await tx
    .select({
      ip: tables.engagementEvents.ip,
      userAgent: tables.engagementEvents.userAgent,
      linkIndex: tables.engagementEvents.linkIndex,
      at: tables.engagementEvents.at,
    })
    .from(tables.engagementEvents)
    .where(
      and(
        eq(tables.engagementEvents.messageId, state.row.id),
        eq(tables.engagementEvents.kind, kind),
        eq(tables.engagementEvents.counted, true),
      ),
    )
    .orderBy(desc(tables.engagementEvents.at), desc(tables.engagementEvents.id))
    .limit(RECENT_HITS);
  const count = kind === 'open' ? state.row.opensCount : state.row.clicksCount;
  const recents = rows.reverse().map((row, index) => ({
    id: count - rows.length + index,
    ip: row.ip ?? '',
    linkIndex: row.linkIndex,
    at: row.at,
    userAgent: row.userAgent ?? '',
  }));
  state.recents[kind] = recents;
  return recents;
}

/** The outbox row of `message.opened` / `message.link_clicked` for a message as it stands after a hit at `at`. */
function notificationOf(
  tracking: TrackingState,
  state: BatchState,
  kind: 'open' | 'click',
  at: number,
): typeof tables.outboxEvents.$inferInsert {
  const { row } = state;
  const recents = state.recents[kind] ?? [];
  const timestamp = Math.floor(at / 1000);
  const common = {
    object: 'message',
    grant_id: row.grantId,
    message_id: row.messageId,
    ...(row.label !== null ? { label: row.label } : {}),
  };
  const object =
    kind === 'open'
      ? {
          ...common,
          message_data: { count: row.opensCount, timestamp },
          recents: recents.map((recent) => ({
            ip: recent.ip,
            opened_id: recent.id,
            timestamp: Math.floor(recent.at / 1000),
            user_agent: recent.userAgent,
          })),
          sender_app_id: row.applicationId,
          timestamp,
        }
      : {
          ...common,
          link_data: [...state.links.entries()]
            .sort(([a], [b]) => a - b)
            .map(([, entry]) => ({ count: entry.count, url: entry.url })),
          recents: recents.map((recent) => ({
            click_id: recent.id,
            ip: recent.ip,
            link_index: String(recent.linkIndex),
            timestamp: Math.floor(recent.at / 1000),
            user_agent: recent.userAgent,
          })),
          sender_app_id: row.applicationId,
          timestamp,
        };
  const type: TriggerType = kind === 'open' ? 'message.opened' : 'message.link_clicked';
  return {
    id: tracking.newId(),
    applicationId: row.applicationId,
    grantId: row.grantId,
    type,
    objectId: row.messageId,
    payload: object,
    createdAt: timestamp,
  };
}

async function writeBatch(tracking: TrackingState, tx: Tx, batch: Hit[]): Promise<void> {
  const ids = [...new Set(batch.map((hit) => hit.trackingId))];
  const states = new Map<string, BatchState>();
  for (let start = 0; start < ids.length; start += 500) {
    const rows = await tx
      .select()
      .from(tables.trackedMessages)
      .where(inArray(tables.trackedMessages.id, ids.slice(start, start + 500)));
    for (const row of rows) states.set(row.id, { row, dirty: false, links: new Map(), recents: {} });
  }
  const clicked = [
    ...new Set(batch.filter((hit) => hit.kind === 'click' && states.has(hit.trackingId)).map((hit) => hit.trackingId)),
  ];
  for (let start = 0; start < clicked.length; start += 500) {
    const links = await tx
      .select()
      .from(tables.trackingLinks)
      .where(inArray(tables.trackingLinks.messageId, clicked.slice(start, start + 500)));
    for (const link of links)
      states.get(link.messageId)!.links.set(link.linkIndex, { url: link.url, count: link.clicksCount, dirty: false });
  }
  /** [id, message_id, kind, link_index, ip, user_agent, counted, flag, at, hits]: inserted in one statement per batch. */
  const events: unknown[][] = [];
  /** Flagged rows of this batch by what makes hits identical: a repeat adds to the row's `hits` instead of a row. */
  const flaggedRows = new Map<string, unknown[]>();
  /** Per message and kind, the last counted hit to notify, in the order of those last hits. */
  const notified = new Map<string, { state: BatchState; kind: 'open' | 'click'; at: number }>();
  for (const hit of batch) {
    const state = states.get(hit.trackingId);
    // The message (or its grant) was deleted since the hit was answered.
    if (!state) continue;
    const link = hit.linkIndex === null ? undefined : state.links.get(hit.linkIndex);
    if (hit.kind === 'click' && !link) continue;
    const { row } = state;
    const flag = flagOf(hit, row);
    if (flag !== null) {
      const key = `${row.id}\0${hit.kind}\0${hit.linkIndex ?? ''}\0${hit.ip ?? ''}\0${hit.userAgent ?? ''}\0${flag}`;
      const same = flaggedRows.get(key);
      if (same) {
        same[8] = hit.at;
        same[9] = (same[9] as number) + 1;
      } else {
        const event = [
          tracking.newId(),
          row.id,
          hit.kind,
          hit.linkIndex,
          hit.ip ?? null,
          hit.userAgent ?? null,
          0,
          flag,
          hit.at,
          1,
        ];
        flaggedRows.set(key, event);
        events.push(event);
      }
      continue;
    }
    events.push([
      tracking.newId(),
      row.id,
      hit.kind,
      hit.linkIndex,
      hit.ip ?? null,
      hit.userAgent ?? null,
      1,
      flag,
      hit.at,
      1,
    ]);
    state.dirty = true;
    const wanted = hit.kind === 'open' ? row.opens : row.links;
    const recents = wanted ? await recentsOf(tx, state, hit.kind) : undefined;
    let id: number;
    if (hit.kind === 'open') {
      id = row.opensCount;
      row.opensCount += 1;
      row.lastOpenAt = hit.at;
    } else {
      id = row.clicksCount;
      row.clicksCount += 1;
      link!.count += 1;
      link!.dirty = true;
    }
    if (!recents) continue;
    recents.push({ id, ip: hit.ip ?? '', linkIndex: hit.linkIndex, at: hit.at, userAgent: hit.userAgent ?? '' });
    if (recents.length > RECENT_HITS) recents.shift();
    // Several counted hits of one kind on one message in one batch give one notification, as of the last of them.
    const key = `${hit.kind} ${row.id}`;
    notified.delete(key);
    notified.set(key, { state, kind: hit.kind, at: hit.at });
  }
  const notifications = [...notified.values()].map(({ state, kind, at }) => notificationOf(tracking, state, kind, at));
  if (events.length > 0) {
    // One statement whatever the batch's size: the rows travel as one JSON array, unpacked by SQLite.
    await insertEngagementEvents(tx, events);
  }
  for (const state of states.values()) {
    if (!state.dirty) continue;
    const { row } = state;
    await tx
      .update(tables.trackedMessages)
      .set({ opensCount: row.opensCount, lastOpenAt: row.lastOpenAt, clicksCount: row.clicksCount })
      .where(eq(tables.trackedMessages.id, row.id));
    for (const [linkIndex, link] of state.links) {
      if (link.dirty)
        await tx
          .update(tables.trackingLinks)
          .set({ clicksCount: link.count })
          .where(and(eq(tables.trackingLinks.messageId, row.id), eq(tables.trackingLinks.linkIndex, linkIndex)));
    }
  }
  // The notifications, in the outbox in the same transaction (as src/outbox/outbox.ts recordEvent writes them).
  for (let start = 0; start < notifications.length; start += 100)
    await tx.insert(tables.outboxEvents).values(notifications.slice(start, start + 100));
  if (notifications.length > 0) announceRecordedEvents();
}
