/**
 * @module deliverability/thread-replies-record
 * The `deliverability.thread_replied` job of the reply watch (./thread-replies.ts): per mailbox the message replies
 * in, an `engagement_events` row (kind `reply`), one more reply on the tracked send and the `thread.replied` event,
 * in one transaction; a reply counts once.
 */
import { createHash } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Job } from '../jobs/index.js';
import { countReply } from './reply-store.js';
import type { ThreadRepliedPayload, ThreadRepliesState } from './thread-replies-state.js';

/** The id of a reply's engagement row: one per tracked send and reply, whatever runs twice. */
const replyEventId = (trackedId: string, replyKey: string) =>
  `reply_${createHash('sha256').update(`${trackedId}\0${replyKey}`).digest('base64url').slice(0, 32)}`;

/** The id of the message the reply answers in its mailbox: the tracked send, or another message of the thread. */
async function repliedToId(
  { db }: ThreadRepliesState,
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

/** Records the replies a `deliverability.thread_replied` job carries (the job's handler). */
export async function recordReplies(state: ThreadRepliesState, job: Job): Promise<void> {
  const { db, record } = state;
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
    const replyToMessageId = await repliedToId(state, reply.grant_id, threadId, payload.in_reply_to, tracked);
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
}
