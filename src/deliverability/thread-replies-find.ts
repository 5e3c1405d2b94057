/**
 * @module deliverability/thread-replies-find
 * Which arriving messages reply to a tracked send (./thread-replies.ts): a message that names no earlier message is
 * decided without a query; the others with one read of `tracked_messages` for all of them (a sync's messages first
 * ask whether their mailboxes have any tracked send at all). A reply gives its mailboxes' job, stored with it.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { JobInput } from '../jobs/index.js';
import type { StoredCopy } from '../mail/contracts.js';
import { firstTracked } from './reply-store.js';
import { namesEarlierMessages, replyHeadersOf } from './thread-replies-headers.js';
import {
  THREAD_REPLIED_JOB,
  type ThreadRepliedPayload,
  type ThreadRepliesState,
  type TrackedRow,
} from './thread-replies-state.js';

/**
 * Whether any of `grantIds` has a tracked send: one short indexed read (the first row of the grant index). Most
 * connected accounts have none, so a sync's messages are then neither scanned nor looked up.
 */
async function anyTracked({ db }: ThreadRepliesState, grantIds: readonly string[]): Promise<boolean> {
  if (grantIds.length === 0) return false;
  const [any] = await firstTracked(db.orm, { ids: JSON.stringify(grantIds) });
  return any !== undefined;
}

/** The tracked sends of `grantIds` with one of `named` as Message-ID (reply tracking on), in slices of the id list. */
async function trackedAmong(
  { db }: ThreadRepliesState,
  grantIds: readonly string[],
  named: readonly string[],
): Promise<TrackedRow[]> {
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

/**
 * The jobs of each of many messages about to be stored (one answer per message, in order): undefined for one that
 * replies to no tracked send of its mailboxes.
 */
export async function jobsForMany(
  state: ThreadRepliesState,
  messages: readonly { raw: Buffer; grants: readonly Pick<GrantRow, 'id' | 'email'>[] }[],
  at: number,
) {
  // Many messages (a connected account's sync): whether the mailboxes have any tracked send is asked first, before
  // any header is read. One message (mail received here) is scanned first: most names no earlier message, and
  // then no query is made.
  if (
    messages.length > 1 &&
    !(await anyTracked(state, [...new Set(messages.flatMap(({ grants }) => grants.map((grant) => grant.id)))]))
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
  const found = await trackedAmong(state, grantIds, named);
  return messages.map(({ grants }, index) => {
    const entry = headers[index];
    return entry && found.length > 0 ? jobsOf(entry, grants, found, at) : undefined;
  });
}
