/**
 * @module deliverability/tracking-service
 * What happens when a tracking URL is requested, and what a message's engagement is.
 *
 * - **Answering** ({@link TrackingService.open}, {@link TrackingService.click}): the token is checked with the
 *   installation's key (synchronously, once the key is loaded) and the tracked message looked up through a small
 *   cache ({@link LOOKUP_TTL_MS}); a bad token or an unknown message is `undefined` (the route answers 404). A
 *   click leads only to the URL recorded at send time for that link index.
 * - **Recording**: each hit is put in a buffer and written with the others of its batch in ONE transaction, a few
 *   tens of milliseconds later ({@link FLUSH_DELAY_MS}), after the answer went out: a hit never waits on a database
 *   write. A crash loses at most the hits not yet written (the last batch).
 * - **Counting**: every hit is an `engagement_events` row. A hit is recorded but flagged, not counted, when it is a
 *   HEAD request (`head`), comes from a known link scanner or mail-privacy proxy ({@link scannerUserAgent},
 *   `scanner`), arrives within {@link EARLY_MS} of the send (`early`), or is an open within {@link REPEAT_OPEN_MS} of
 *   the message's last counted open (`repeat`). A counted hit bumps the counters and, when that tracking option is
 *   on, records `message.opened` / `message.link_clicked` in the outbox in the same transaction; counted hits of one
 *   kind on one message within one batch give one notification, with the counts and `recents` as of the last of them.
 *   Flagged hits notify nobody.
 * - **Engagement** ({@link TrackingService.engagement}): opens, clicks per link, replies and each recipient's
 *   delivery state of one sent message.
 */
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { EngagementFlag } from '../../storage/schema/deliverability.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { notFound } from '../errors.js';
import { announceRecordedEvents, type TriggerType } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import { notDraft, type SentStateLookup } from '../messages/index.js';
import type { GetMessageEngagementInput, MessageEngagement } from '../schemas/engagement.js';
import type { HitSource, SigningKeys, TokenSigner, TrackingService } from './contracts.js';
import { CLICK_TOKEN_PURPOSE, OPEN_TOKEN_PURPOSE, readLinkToken } from './tracked-sends.js';

/** How long a looked-up tracked message (and its links) is reused: a deleted grant's URLs answer for at most this long in other processes. */
export const LOOKUP_TTL_MS = 1_000;
/** Tracked messages kept in the lookup cache (least recently added go first). */
const LOOKUP_ENTRIES = 10_000;
/**
 * Tokens already verified, kept with their payload: a token is its own key, so a URL loaded again (repeated opens,
 * proxies, a flood) skips the HMAC. Only good tokens are kept; a forged one is checked every time.
 */
const VERIFIED_TOKENS = 10_000;
/** How long a hit waits in the buffer before its batch is written. */
export const FLUSH_DELAY_MS = 25;
/** Hits written per transaction at most. */
const MAX_BATCH = 2_000;
/** Hits the buffer holds at most; beyond it (the database far behind a flood), hits are answered but not recorded. */
export const MAX_PENDING_HITS = 200_000;
/** Hits this soon after the send are a gateway or proxy fetching ahead of the reader. */
export const EARLY_MS = 10_000;
/** Opens within this of the last counted open of the message count once (Nylas: one minute). */
export const REPEAT_OPEN_MS = 60_000;
/** Recent counted hits a notification lists (`recents`). */
export const RECENT_HITS = 10;
/** Longest user agent kept. */
const MAX_USER_AGENT = 512;

/**
 * User agents of link scanners, security gateways, mail-privacy and image proxies, and scripts: their hits are not
 * people. Matched case-insensitively anywhere in the string; an empty or missing user agent counts as one too.
 */
export const SCANNER_USER_AGENTS = [
  'GoogleImageProxy',
  'YahooMailProxy',
  'Barracuda',
  'Proofpoint',
  'Mimecast',
  'urldefense',
  'BingPreview',
  'SafeLinks',
  'python-requests',
  'python-urllib',
  'aiohttp',
  'curl/',
  'Wget',
  'Go-http-client',
  'libwww-perl',
  'okhttp',
  'Java/',
  'HeadlessChrome',
  'facebookexternalhit',
  'bot',
  'crawler',
  'spider',
  'preview',
  'scanner',
] as const;

const SCANNER_PATTERN = new RegExp(
  SCANNER_USER_AGENTS.map((word) => word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
  'i',
);

/** Whether a user agent is a scanner's or a proxy's (see {@link SCANNER_USER_AGENTS}). */
export function scannerUserAgent(userAgent: string | undefined): boolean {
  return userAgent === undefined || userAgent.trim() === '' || SCANNER_PATTERN.test(userAgent);
}

/** A tracked message as the tracking routes need it. */
interface TrackedEntry {
  id: string;
  grantId: string;
  opens: boolean;
  links: boolean;
  /** The original URLs, by link index (empty when links are not tracked). */
  urls: string[];
}

/** A hit waiting to be written. */
interface Hit extends HitSource {
  kind: 'open' | 'click';
  trackingId: string;
  linkIndex: number | null;
  /** Unix milliseconds (deps.clock). */
  at: number;
}

/** A `recents` entry of a notification. */
interface Recent {
  id: number;
  ip: string;
  linkIndex: number | null;
  at: number;
  userAgent: string;
}

type TrackedRow = typeof tables.trackedMessages.$inferSelect;

/** Per message, what a batch changes. */
interface BatchState {
  row: TrackedRow;
  dirty: boolean;
  links: Map<number, { url: string; count: number; dirty: boolean }>;
  recents: Partial<Record<'open' | 'click', Recent[]>>;
}

/** Parts of the tracking service. */
export interface TrackingParts {
  signing: Pick<SigningKeys, 'signer' | 'loadedSigner'>;
  grants: Pick<GrantService, 'require'>;
  sentState: SentStateLookup;
}

/** Creates the tracking service. */
export function createTrackingService(deps: CoreDeps, parts: TrackingParts): TrackingService {
  const { db, clock, newId, logger } = deps;
  const cache = new Map<
    string,
    { entry: TrackedEntry | null; expires: number } | { loading: Promise<TrackedEntry | null> }
  >();
  const pending: Hit[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> | undefined;
  let dropped = 0;
  const verified = new Map<string, string>();

  /** The payload of a token signed for `purpose` (see {@link VERIFIED_TOKENS}); the purpose is part of the key. */
  function verify(
    signer: TokenSigner,
    purpose: string,
    token: string,
    read: (signer: TokenSigner, token: string) => string | undefined,
  ): string | undefined {
    const key = `${purpose} ${token}`;
    const known = verified.get(key);
    if (known !== undefined) return known;
    const payload = read(signer, token);
    if (payload === undefined) return undefined;
    if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
    verified.set(key, payload);
    return payload;
  }

  async function load(trackingId: string): Promise<TrackedEntry | null> {
    const [row] = await db.orm
      .select({
        id: tables.trackedMessages.id,
        grantId: tables.trackedMessages.grantId,
        opens: tables.trackedMessages.opens,
        links: tables.trackedMessages.links,
      })
      .from(tables.trackedMessages)
      .where(eq(tables.trackedMessages.id, trackingId))
      .limit(1);
    if (!row) return null;
    const urls = row.links
      ? (
          await db.orm
            .select({ url: tables.trackingLinks.url })
            .from(tables.trackingLinks)
            .where(eq(tables.trackingLinks.messageId, trackingId))
            .orderBy(asc(tables.trackingLinks.linkIndex))
        ).map((link) => link.url)
      : [];
    return { ...row, urls };
  }

  /** The tracked message of a tracking id, from the cache when fresh (one load at a time per id). */
  function lookup(trackingId: string): TrackedEntry | null | Promise<TrackedEntry | null> {
    const cached = cache.get(trackingId);
    if (cached) {
      if ('loading' in cached) return cached.loading;
      if (cached.expires > performance.now()) return cached.entry;
      cache.delete(trackingId);
    }
    const loading = load(trackingId).then(
      (entry) => {
        if (cache.size >= LOOKUP_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(trackingId, { entry, expires: performance.now() + LOOKUP_TTL_MS });
        return entry;
      },
      (error: unknown) => {
        cache.delete(trackingId);
        throw error;
      },
    );
    cache.set(trackingId, { loading });
    return loading;
  }

  /** The signer, synchronously once loaded (the service loads it at start). */
  function signerNow(): TokenSigner | Promise<TokenSigner> {
    return parts.signing.loadedSigner() ?? parts.signing.signer();
  }

  function remember(hit: Hit): void {
    if (pending.length >= MAX_PENDING_HITS) {
      dropped++;
      return;
    }
    pending.push(hit);
    schedule();
  }

  /** Writes the buffer {@link FLUSH_DELAY_MS} from now, unless a write is under way (it schedules the next itself). */
  function schedule(): void {
    if (timer === undefined && writing === undefined && pending.length > 0) {
      timer = setTimeout(() => void start(false), FLUSH_DELAY_MS);
      timer.unref?.();
    }
  }

  /**
   * Writes buffered hits, a batch per transaction: one batch, and more while full ones wait (`all`: until the buffer
   * is empty). Under a steady flood a batch is written at most every {@link FLUSH_DELAY_MS}, whatever the rate.
   */
  async function writeBatches(all: boolean): Promise<void> {
    do {
      const batch = pending.splice(0, MAX_BATCH);
      try {
        // The commit's fsync runs off the event loop (durableWrite), so answering hits goes on meanwhile.
        await db.durableWrite((tx) => writeBatch(tx, batch));
      } catch (error) {
        logger.error('tracking: a batch of hits could not be recorded', {
          hits: batch.length,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    } while (pending.length >= MAX_BATCH || (all && pending.length > 0));
    if (dropped > 0) {
      logger.warn('tracking: hits answered but not recorded (the buffer was full)', { hits: dropped });
      dropped = 0;
    }
  }

  /** Starts a write unless one is under way; returns it. */
  function start(all: boolean): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    writing ??= writeBatches(all).finally(() => {
      writing = undefined;
      schedule();
    });
    return writing;
  }

  /** Writes every hit buffered so far (shutdown, tests). */
  async function drain(): Promise<void> {
    while (writing !== undefined || pending.length > 0) await (writing ?? start(true));
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
      id: newId(),
      applicationId: row.applicationId,
      grantId: row.grantId,
      type,
      objectId: row.messageId,
      payload: object,
      createdAt: timestamp,
    };
  }

  async function writeBatch(tx: Tx, batch: Hit[]): Promise<void> {
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
      ...new Set(
        batch.filter((hit) => hit.kind === 'click' && states.has(hit.trackingId)).map((hit) => hit.trackingId),
      ),
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
            newId(),
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
        newId(),
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
    const notifications = [...notified.values()].map(({ state, kind, at }) => notificationOf(state, kind, at));
    if (events.length > 0) {
      // One statement whatever the batch's size: the rows travel as one JSON array, unpacked by SQLite.
      await tx.run(sql`INSERT INTO engagement_events (id, message_id, kind, link_index, ip, user_agent, counted, flag, at, hits)
        SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9 FROM json_each(${JSON.stringify(events)})`);
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

  function hitOf(kind: 'open' | 'click', trackingId: string, linkIndex: number | null, source: HitSource): Hit {
    return {
      kind,
      trackingId,
      linkIndex,
      ip: source.ip,
      userAgent: source.userAgent === undefined ? undefined : source.userAgent.slice(0, MAX_USER_AGENT),
      head: source.head,
      at: clock.now().getTime(),
    };
  }

  /** `then(value)`, at once when `value` is no promise (the hot path stays synchronous). */
  function settle<T, R>(value: T | Promise<T>, then: (value: T) => R | Promise<R>): R | Promise<R> {
    return value instanceof Promise ? value.then(then) : then(value);
  }

  return {
    /**
     * A pixel request: true (and the hit is recorded) when the token is a pixel token of this installation for a
     * tracked message with opens on; false otherwise. Synchronous when the key and the message are at hand.
     */
    open(token: string, source: HitSource): boolean | Promise<boolean> {
      return settle(signerNow(), (signer) => {
        const trackingId = verify(signer, OPEN_TOKEN_PURPOSE, token, (key, value) =>
          key.verify(OPEN_TOKEN_PURPOSE, value),
        );
        if (trackingId === undefined) return false;
        return settle(lookup(trackingId), (entry) => {
          if (!entry?.opens) return false;
          remember(hitOf('open', trackingId, null, source));
          return true;
        });
      });
    },

    /**
     * A link request: the original URL recorded for the token's link (and the hit is recorded), or undefined when the
     * token is not a link token of this installation for a link of a tracked message.
     */
    click(token: string, source: HitSource): string | undefined | Promise<string | undefined> {
      return settle(signerNow(), (signer) => {
        const payload = verify(signer, CLICK_TOKEN_PURPOSE, token, (key, value) => {
          const read = readLinkToken(key, value);
          return read && `${read.trackingId}.${read.linkIndex}`;
        });
        if (payload === undefined) return undefined;
        const dot = payload.lastIndexOf('.');
        const link = { trackingId: payload.slice(0, dot), linkIndex: Number(payload.slice(dot + 1)) };
        return settle(lookup(link.trackingId), (entry) => {
          const url = entry?.links ? entry.urls[link.linkIndex] : undefined;
          if (url === undefined) return undefined;
          remember(hitOf('click', link.trackingId, link.linkIndex, source));
          return url;
        });
      });
    },

    /** Writes every hit buffered so far (tests; shutdown). */
    flush: drain,

    /** Flushes, at shutdown: the hits answered before are written. */
    close: drain,

    /** Forgets the cached lookups of a deleted grant, so its tracking URLs answer 404 at once in this process. */
    forgetGrant(grantId: string): void {
      for (const [id, cached] of cache) {
        if ('entry' in cached && cached.entry?.grantId === grantId) cache.delete(id);
        else if ('loading' in cached) cache.delete(id);
      }
    },

    /** One sent message's engagement: opens, clicks per link, replies, and each recipient's delivery state. */
    async engagement(principal: Principal, input: GetMessageEngagementInput): Promise<MessageEngagement> {
      const grant = await parts.grants.require(principal, input.grant_id);
      const [message] = await db.orm
        .select({ id: tables.messages.id })
        .from(tables.messages)
        .where(and(eq(tables.messages.grantId, grant.id), eq(tables.messages.id, input.message_id), notDraft()))
        .limit(1);
      if (!message) throw notFound('Message', input.message_id);
      const delivery = (await parts.sentState([message.id])).get(message.id)?.deliveryStatus ?? [];
      const [tracked] = await db.orm
        .select()
        .from(tables.trackedMessages)
        .where(and(eq(tables.trackedMessages.grantId, grant.id), eq(tables.trackedMessages.messageId, message.id)))
        .limit(1);
      const base = {
        object: 'message_engagement' as const,
        grant_id: grant.id,
        message_id: message.id,
        delivery_status: delivery,
      };
      if (!tracked)
        return {
          ...base,
          tracked: false,
          opens: { count: 0, hits: 0, flagged: 0 },
          clicks: { count: 0, hits: 0, flagged: 0 },
          links: [],
          replies: { count: 0, message_ids: [] },
        };
      const totals = await db.orm
        .select({
          kind: tables.engagementEvents.kind,
          counted: tables.engagementEvents.counted,
          hits: sql<number>`sum(${tables.engagementEvents.hits})`,
          first: sql<number>`min(${tables.engagementEvents.at})`,
          last: sql<number>`max(${tables.engagementEvents.at})`,
        })
        .from(tables.engagementEvents)
        .where(
          and(
            eq(tables.engagementEvents.messageId, tracked.id),
            inArray(tables.engagementEvents.kind, ['open', 'click']),
          ),
        )
        .groupBy(tables.engagementEvents.kind, tables.engagementEvents.counted);
      const summary = (kind: 'open' | 'click', count: number) => {
        const counted = totals.find((total) => total.kind === kind && total.counted);
        const flagged = totals.find((total) => total.kind === kind && !total.counted);
        return {
          count,
          hits: Number(counted?.hits ?? 0) + Number(flagged?.hits ?? 0),
          flagged: Number(flagged?.hits ?? 0),
          ...(counted
            ? { first_at: Math.floor(Number(counted.first) / 1000), last_at: Math.floor(Number(counted.last) / 1000) }
            : {}),
        };
      };
      const links = await db.orm
        .select()
        .from(tables.trackingLinks)
        .where(eq(tables.trackingLinks.messageId, tracked.id))
        .orderBy(asc(tables.trackingLinks.linkIndex));
      const replies = await db.orm
        .select({ id: tables.engagementEvents.replyMessageId })
        .from(tables.engagementEvents)
        .where(
          and(
            eq(tables.engagementEvents.messageId, tracked.id),
            eq(tables.engagementEvents.kind, 'reply'),
            eq(tables.engagementEvents.counted, true),
          ),
        )
        .orderBy(asc(tables.engagementEvents.at), asc(tables.engagementEvents.id));
      const replyIds = replies.flatMap((reply) => (reply.id === null ? [] : [reply.id]));
      return {
        ...base,
        tracked: true,
        tracking_options: {
          opens: tracked.opens,
          links: tracked.links,
          thread_replies: tracked.threadReplies,
          ...(tracked.label !== null ? { label: tracked.label } : {}),
        },
        sent_at: Math.floor(tracked.sentAt / 1000),
        opens: summary('open', tracked.opensCount),
        clicks: summary('click', tracked.clicksCount),
        links: links.map((link) => ({ link_index: String(link.linkIndex), url: link.url, count: link.clicksCount })),
        replies: { count: replyIds.length, message_ids: replyIds },
      };
    },
  };
}

/** The tracking service. */
export type { HitSource, TrackingService } from './contracts.js';
