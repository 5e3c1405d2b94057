/**
 * @module deliverability/thread-replies
 * `thread.replied`: a message that arrives for a grant and names, in its In-Reply-To or References, the Message-ID of
 * a send of that grant tracked with `thread_replies`, is a reply to it. It works the same for mail from any outside
 * mailer (the SMTP listener) and for a reply from another mailbox of this service (local delivery): both go through
 * `deliverInbound` (src/mail/inbound.ts), which asks {@link ThreadReplies.jobsFor} before it stores the message.
 *
 * - The check is cheap where it must be: a message without In-Reply-To or References costs one bounded scan of its
 *   header section ({@link namesEarlierMessages}), no query. One that has them costs one indexed read of
 *   `tracked_messages` (grant, Message-ID), for the message's mailboxes; a connected account's synced mail is asked
 *   about many messages at once ({@link ThreadReplies.jobsForMany}): first one short read of whether its mailbox has
 *   any tracked send (most have none, and then no header is read), then one read for them all.
 * - When it replies to a tracked send, a durable job (`deliverability.thread_replied`) is stored IN THE MESSAGE'S OWN
 *   TRANSACTION (on the writer thread's fast path as on the parsed path), so the reply is counted if and only if it
 *   was stored, and after the sender was answered.
 * - The job records an `engagement_events` row (kind `reply`), adds one to `tracked_messages.replies_count` and
 *   records the `thread.replied` event, in one transaction. A reply counts once: the event row's id is derived from
 *   the tracked send and the reply's own Message-ID (or, without one, its id), so a job that runs twice, or the same
 *   reply delivered twice (a sender retrying after a lost answer), adds nothing the second time.
 * - When a message names several tracked sends of one mailbox, the closest counts: In-Reply-To first, then
 *   References from the last (the parent) back to the first (the root).
 */
import { createHash } from 'node:crypto';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { JobInput, JobHandler } from '../jobs/index.js';
import type { StoredCopy } from '../mail/contracts.js';
import { readRawHeaders, fromHeaderAddress } from '../mime/index.js';
import { countReply, firstTracked } from './reply-store.js';

/** The job kind that records a reply to a tracked send. */
export const THREAD_REPLIED_JOB = 'deliverability.thread_replied';

/** Bytes of the header section scanned for In-Reply-To / References (as the other header readers of the inbound path). */
const HEADER_SCAN_BYTES = 64 * 1024;
/** Message-IDs looked up at most per message: the In-Reply-To and the closest References (a long thread names dozens). */
const MAX_NAMED_IDS = 50;
/** A header line naming earlier messages, at the start of a line of the header section. */
const REPLY_HEADER = /^(?:in-reply-to|references)[ \t]*:/im;

/** What the job carries: one entry per mailbox the message replies in. */
interface ThreadRepliedPayload {
  /** Unix seconds at which the reply arrived. */
  at: number;
  /** The reply's normalised Message-ID, when it has one (what makes a reply count once). */
  header_message_id: string | null;
  /** The first Message-ID of its In-Reply-To (normalised), when any. */
  in_reply_to: string | null;
  replies: { grant_id: string; tracked_id: string; message_id: string; from_self: boolean }[];
}

/**
 * Whether the header section of a raw message has an In-Reply-To or References line. Bounded, and without splitting
 * the headers: the price every message pays.
 */
export function namesEarlierMessages(raw: Buffer): boolean {
  const head = raw.subarray(0, Math.min(raw.length, HEADER_SCAN_BYTES));
  let end = head.indexOf('\r\n\r\n');
  if (end < 0) end = head.indexOf('\n\n');
  return REPLY_HEADER.test(head.subarray(0, end < 0 ? head.length : end).toString('latin1'));
}

/** The Message-IDs inside angle brackets of a header value, normalised (lower case, no brackets). */
function messageIdsOf(value: string): string[] {
  return [...value.matchAll(/<([^<>\s]+)>/g)].map((match) => match[1]!.toLowerCase());
}

/**
 * The Message-IDs a message names as earlier messages, closest first: its In-Reply-To, then its References from the
 * last to the first; each once, at most {@link MAX_NAMED_IDS}. Also its own Message-ID and its From address.
 */
export function replyHeadersOf(raw: Buffer): {
  named: string[];
  inReplyTo: string | undefined;
  messageId: string | undefined;
  from: string;
} {
  const headers = readRawHeaders(raw, HEADER_SCAN_BYTES, 200);
  const valueOf = (name: string) => headers.find((header) => header.name.toLowerCase() === name)?.value ?? '';
  const inReplyTo = messageIdsOf(valueOf('in-reply-to'));
  const references = messageIdsOf(valueOf('references')).reverse();
  const named = [...new Set([...inReplyTo, ...references])].slice(0, MAX_NAMED_IDS);
  return {
    named,
    inReplyTo: inReplyTo[0],
    messageId: messageIdsOf(valueOf('message-id'))[0],
    from: fromHeaderAddress(valueOf('from')),
  };
}

/** Finds the tracked sends a message replies to, and records the replies. */
export interface ThreadReplies {
  /**
   * For a message about to be stored for `grants`: undefined when it replies to no send of theirs tracked with
   * `thread_replies` (most mail, decided without a query when it names no earlier message), else the jobs to store
   * in its transaction, given its stored copies (one per grant, in order).
   */
  jobsFor(
    raw: Buffer,
    grants: readonly Pick<GrantRow, 'id' | 'email'>[],
    at: number,
  ): Promise<((copies: readonly StoredCopy[]) => JobInput[]) | undefined>;
  /**
   * {@link jobsFor} of many messages at once (a connected account's synced mail), with one read of
   * `tracked_messages` for all of them; one answer per message, in order.
   */
  jobsForMany(
    messages: readonly { raw: Buffer; grants: readonly Pick<GrantRow, 'id' | 'email'>[] }[],
    at: number,
  ): Promise<(((copies: readonly StoredCopy[]) => JobInput[]) | undefined)[]>;
  /** The job's handler, by kind. */
  handlers: Record<string, JobHandler>;
}

/** Creates the reply watch of tracked sends. */
export function createThreadReplies(deps: Pick<CoreDeps, 'db' | 'clock' | 'newId'>): ThreadReplies {
  const { db } = deps;
  const record = eventRecorder(deps);

  /** The id of a reply's engagement row: one per tracked send and reply, whatever runs twice. */
  const replyEventId = (trackedId: string, replyKey: string) =>
    `reply_${createHash('sha256').update(`${trackedId}\0${replyKey}`).digest('base64url').slice(0, 32)}`;

  /** The id of the message the reply answers in its mailbox: the tracked send, or another message of the thread. */
  async function repliedToId(
    grantId: string,
    threadId: string,
    inReplyTo: string | null,
    tracked: { messageId: string; headerMessageId: string },
  ): Promise<string> {
    if (!inReplyTo || inReplyTo === tracked.headerMessageId) return tracked.messageId;
    const [row] = await db.orm
      .select({ id: tables.messages.id })
      .from(tables.messages)
      .where(
        and(
          eq(tables.messages.threadId, threadId),
          eq(tables.messages.grantId, grantId),
          eq(tables.messages.headerMessageId, inReplyTo),
        ),
      )
      // A message received twice (a sender's retry) has two copies: the first one stored is the one answered.
      .orderBy(asc(tables.messages.seq))
      .limit(1);
    return row?.id ?? tracked.messageId;
  }

  const run: JobHandler = async (job) => {
    const payload = job.payload as unknown as ThreadRepliedPayload;
    for (const reply of payload.replies) {
      const [tracked] = await db.orm
        .select()
        .from(tables.trackedMessages)
        .where(eq(tables.trackedMessages.id, reply.tracked_id));
      // The tracked send (or its grant) was deleted meanwhile: nothing to count against.
      if (!tracked) continue;
      const [message] = await db.orm
        .select({ threadId: tables.messages.threadId })
        .from(tables.messages)
        .where(eq(tables.messages.id, reply.message_id));
      const threadId = message?.threadId ?? tracked.threadId ?? '';
      const replyToMessageId = await repliedToId(reply.grant_id, threadId, payload.in_reply_to, tracked);
      await db.write(async (tx) => {
        const [inserted] = await tx
          .insert(tables.engagementEvents)
          .values({
            id: replyEventId(tracked.id, payload.header_message_id ?? reply.message_id),
            messageId: tracked.id,
            kind: 'reply',
            replyMessageId: reply.message_id,
            counted: true,
            at: payload.at * 1000,
          })
          .onConflictDoNothing()
          .returning({ id: tables.engagementEvents.id });
        if (!inserted) return;
        const replies = await countReply(tx, tracked.id);
        await record(tx, {
          applicationId: tracked.applicationId,
          grantId: tracked.grantId,
          type: 'thread.replied',
          objectId: reply.message_id,
          object: {
            object: 'thread',
            grant_id: tracked.grantId,
            message_id: reply.message_id,
            root_message_id: tracked.messageId,
            reply_to_message_id: replyToMessageId,
            ...(tracked.label !== null ? { label: tracked.label } : {}),
            reply_data: { count: replies ?? 1 },
            from_self: reply.from_self,
            sender_app_id: tracked.applicationId,
            thread_id: threadId,
            timestamp: payload.at,
          },
          createdAt: payload.at,
        });
      });
    }
  };

  type TrackedRow = { id: string; grantId: string; headerMessageId: string };

  /**
   * Whether any of `grantIds` has a tracked send: one short indexed read (the first row of the grant index). Most
   * connected accounts have none, so a sync's messages are then neither scanned nor looked up.
   */
  async function anyTracked(grantIds: readonly string[]): Promise<boolean> {
    if (grantIds.length === 0) return false;
    const [any] = await firstTracked(db.orm, { ids: JSON.stringify(grantIds) });
    return any !== undefined;
  }

  /** The tracked sends of `grantIds` with one of `named` as Message-ID (reply tracking on), in slices of the id list. */
  async function trackedAmong(grantIds: readonly string[], named: readonly string[]): Promise<TrackedRow[]> {
    const rows: TrackedRow[] = [];
    for (let index = 0; index < named.length; index += 500) {
      rows.push(
        ...(await db.orm
          .select({
            id: tables.trackedMessages.id,
            grantId: tables.trackedMessages.grantId,
            headerMessageId: tables.trackedMessages.headerMessageId,
          })
          .from(tables.trackedMessages)
          .where(
            and(
              inArray(tables.trackedMessages.grantId, [...grantIds]),
              inArray(tables.trackedMessages.headerMessageId, named.slice(index, index + 500)),
              eq(tables.trackedMessages.threadReplies, true),
            ),
          )),
      );
    }
    return rows;
  }

  /** The jobs of one message, given its headers and the tracked sends found among what it names (maybe others' too). */
  function jobsOf(
    headers: ReturnType<typeof replyHeadersOf>,
    grants: readonly Pick<GrantRow, 'id' | 'email'>[],
    found: readonly TrackedRow[],
    at: number,
  ): ((copies: readonly StoredCopy[]) => JobInput[]) | undefined {
    const mine = new Set(grants.map((grant) => grant.id));
    const rows = found.filter((row) => mine.has(row.grantId) && headers.named.includes(row.headerMessageId));
    if (rows.length === 0) return undefined;
    // Per mailbox, the tracked send named closest to the reply.
    const rank = (row: TrackedRow) => headers.named.indexOf(row.headerMessageId);
    const trackedOf = new Map<string, TrackedRow>();
    for (const row of rows) {
      const kept = trackedOf.get(row.grantId);
      if (!kept || rank(row) < rank(kept)) trackedOf.set(row.grantId, row);
    }
    const emailOf = new Map(grants.map((grant) => [grant.id, grant.email.toLowerCase()]));
    return (copies) => {
      const replies = copies.flatMap((copy) => {
        const tracked = trackedOf.get(copy.grantId);
        return tracked
          ? [
              {
                grant_id: copy.grantId,
                tracked_id: tracked.id,
                message_id: copy.messageId,
                from_self: headers.from !== '' && headers.from === emailOf.get(copy.grantId),
              },
            ]
          : [];
      });
      if (replies.length === 0) return [];
      const payload: ThreadRepliedPayload = {
        at,
        header_message_id: headers.messageId ?? null,
        in_reply_to: headers.inReplyTo ?? null,
        replies,
      };
      return [
        {
          kind: THREAD_REPLIED_JOB,
          payload: payload as unknown as Record<string, unknown>,
          dedupeKey: `${THREAD_REPLIED_JOB}:${replies[0]!.message_id}`,
        },
      ];
    };
  }

  async function jobsForMany(
    messages: readonly { raw: Buffer; grants: readonly Pick<GrantRow, 'id' | 'email'>[] }[],
    at: number,
  ) {
    // Many messages (a connected account's sync): whether the mailboxes have any tracked send is asked first, before
    // any header is read. One message (mail received here) is scanned first: most names no earlier message, and
    // then no query is made.
    if (
      messages.length > 1 &&
      !(await anyTracked([...new Set(messages.flatMap(({ grants }) => grants.map((grant) => grant.id)))]))
    )
      return messages.map(() => undefined);
    const headers = messages.map(({ raw, grants }) =>
      grants.length > 0 && namesEarlierMessages(raw) ? replyHeadersOf(raw) : undefined,
    );
    const named = [...new Set(headers.flatMap((entry) => entry?.named ?? []))];
    if (named.length === 0) return messages.map(() => undefined);
    const grantIds = [
      ...new Set(
        messages.flatMap(({ grants }, index) => (headers[index]?.named.length ? grants.map((grant) => grant.id) : [])),
      ),
    ];
    const found = await trackedAmong(grantIds, named);
    return messages.map(({ grants }, index) => {
      const entry = headers[index];
      return entry && found.length > 0 ? jobsOf(entry, grants, found, at) : undefined;
    });
  }

  return {
    async jobsFor(raw, grants, at) {
      const [jobs] = await jobsForMany([{ raw, grants }], at);
      return jobs;
    },
    jobsForMany,
    handlers: { [THREAD_REPLIED_JOB]: run },
  };
}
