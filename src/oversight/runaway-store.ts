/**
 * @module oversight/runaway-store
 * What the runaway and loop guards (./runaway-guards.ts) read: whether the message a send answers is automated, the
 * agent sends of a thread within an hour, the messages of a thread within the loop window; and their one write, the
 * `thread.loop_detected` event, recorded once per loop episode.
 */
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { tables, type Database, type StoredAddress, type StoredMessageVerdict } from '../../storage/index.js';
import { announceRecordedEvents } from '../outbox/index.js';

const { messages, outboundMessages, apiKeys, outboxEvents } = tables;

/** At most this many rows of a thread are read by one check: a loop or a budget shows far below it. */
export const THREAD_ROWS_READ = 1000;

/** The `automated` verdict of a message of a grant (absent when a person wrote it, or it is not there). */
export async function automatedOf(
  db: Database,
  grantId: string,
  messageId: string,
): Promise<StoredMessageVerdict['automated']> {
  const [row] = await db.orm
    .select({ verdict: messages.verdict })
    .from(messages)
    .where(and(eq(messages.grantId, grantId), eq(messages.id, messageId)))
    .limit(1);
  return row?.verdict?.automated;
}

/**
 * The dates (unix seconds, oldest first) of a thread's agent sends since `since`: sent copies whose send came through
 * the MCP or AI SDK face or with an agent's key (the provenance stored with the outbound record).
 */
export async function agentSendDates(
  db: Database,
  grantId: string,
  threadId: string,
  since: number,
): Promise<number[]> {
  const face = sql`json_extract(${outboundMessages.provenance}, '$.face')`;
  const keyId = sql`json_extract(${outboundMessages.provenance}, '$.api_key_id')`;
  const rows = await db.orm
    .select({ date: messages.date })
    .from(messages)
    .innerJoin(outboundMessages, eq(outboundMessages.messageId, messages.id))
    .where(
      and(
        eq(messages.threadId, threadId),
        eq(messages.grantId, grantId),
        gte(messages.date, since),
        sql`(${face} IN ('mcp', 'ai-sdk') OR EXISTS (SELECT 1 FROM ${apiKeys} WHERE ${apiKeys.id} = ${keyId} AND ${apiKeys.agent} = 1))`,
      ),
    )
    .orderBy(asc(messages.date))
    .limit(THREAD_ROWS_READ);
  return rows.map((row) => row.date);
}

/** A message of a thread as the loop guard sees it: when, from whom, to whom. */
export interface ThreadTraffic {
  date: number;
  from: string[];
  to: string[];
}

/** The messages of a thread since `since` (unix seconds), oldest first, drafts left out, addresses lower-cased. */
export async function threadTraffic(
  db: Database,
  grantId: string,
  threadId: string,
  since: number,
): Promise<ThreadTraffic[]> {
  const rows = await db.orm
    .select({
      date: messages.date,
      folders: messages.folders,
      from: messages.fromAddresses,
      to: messages.toAddresses,
      cc: messages.ccAddresses,
      bcc: messages.bccAddresses,
    })
    .from(messages)
    .where(and(eq(messages.threadId, threadId), eq(messages.grantId, grantId), gte(messages.date, since)))
    .orderBy(asc(messages.date))
    .limit(THREAD_ROWS_READ);
  const emails = (list: StoredAddress[]) => list.map((address) => address.email.toLowerCase());
  return rows
    .filter((row) => !row.folders.includes('drafts'))
    .map((row) => ({ date: row.date, from: emails(row.from), to: emails([...row.to, ...row.cc, ...row.bcc]) }));
}

/** A loop found in a thread, as `thread.loop_detected` carries it. */
export interface LoopEvent {
  applicationId: string;
  grantId: string;
  threadId: string;
  /** The mailbox the grant trades with. */
  counterpart: string;
  messages: number;
  windowMinutes: number;
  /** Unix seconds the episode began (the message that took the thread over the bound) and sends may resume. */
  since: number;
  pausedUntil: number;
  at: number;
}

/**
 * Records `thread.loop_detected` for a loop episode, once: the event's id is the episode's (grant, thread and the
 * time it began), so every refused send of one episode names the same event and only the first writes it.
 */
export async function recordLoop(db: Database, loop: LoopEvent): Promise<boolean> {
  const id = `loop_${loop.grantId}_${loop.threadId}_${loop.since}`;
  const inserted = await db.write((tx) =>
    tx
      .insert(outboxEvents)
      .values({
        id,
        applicationId: loop.applicationId,
        grantId: loop.grantId,
        type: 'thread.loop_detected',
        objectId: loop.threadId,
        payload: {
          object: 'thread_loop',
          id: loop.threadId,
          grant_id: loop.grantId,
          thread_id: loop.threadId,
          counterpart: loop.counterpart,
          messages: loop.messages,
          window_minutes: loop.windowMinutes,
          since: loop.since,
          paused_until: loop.pausedUntil,
          detected_at: loop.at,
        },
        createdAt: loop.at,
      })
      .onConflictDoNothing({ target: outboxEvents.id }),
  );
  if (inserted.rowsAffected === 0) return false;
  announceRecordedEvents();
  return true;
}
