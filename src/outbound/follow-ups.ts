/**
 * @module outbound/follow-ups
 * Follow-ups (issue 40, item 6): a reply sent into the thread of a sent message when nobody other than the grant has
 * answered in it by its due time.
 *
 * - Asked for with `follow_up` on a send (after the send is made; not with `send_at`) or afterwards on a sent message.
 *   One per message, kept in `follow_ups` with its due time.
 * - A reply cancels it: a message of the thread stored after the followed-up one whose sender is not the grant
 *   (compared by `messages.seq`, so mail stored by real time and sends on a test clock compare alike). The worker's
 *   pass looks at the messages stored since its last pass; a follow-up about to be sent is checked once more.
 * - When due, it is sent as `send_message` sends (the caller's {@link FollowUpSender}: the operation runner, so the
 *   send gate, oversight, suppressions and the access log apply as to any send), as a reply to the followed-up
 *   message, with an Idempotency-Key of its own (two passes racing send it once).
 * - Either way a webhook: `message.follow_up_sent`, or `message.follow_up_cancelled` (a reply, the agent, or a refused
 *   send: `status` and `reason` say which).
 * - {@link FollowUps.runDue} is a due-runner: the worker runs it for production applications (src/background/), a
 *   test-mode application's test clock for its own (src/background/test-clock.ts).
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { OperationContext, Principal } from '../access.js';
import { AppError, invalid, isTransient, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import { eventRecorder } from '../outbox/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { CreateFollowUpInput, FollowUp, FollowUpRefInput, ListFollowUpsInput } from '../schemas/follow-ups.js';
import { unixSeconds } from '../time.js';
import type { DueRun, FollowUps, FollowUpSender } from './follow-ups-contracts.js';
import {
  closeFollowUps,
  dueFollowUps,
  findFollowUp,
  lastMessageSeq,
  listFollowUps,
  nextFollowUpDue,
  oldestPendingSeq,
  postponeFollowUp,
  repliedFollowUps,
  replyTo,
  type FollowUpRow,
} from './follow-ups-store.js';

/** Follow-ups sent per pass; the next pass takes the rest. */
const SEND_BATCH = 50;
/** How long a follow-up whose send failed for now (a budget, the service busy) waits before it is tried again. */
const RETRY_SECONDS = 60;
/** The Idempotency-Key of a follow-up's send. */
const idempotencyKeyOf = (id: string) => `follow-up:${id}`;

/** The wire form of a follow-up row. */
export function toFollowUp(row: FollowUpRow): FollowUp {
  return {
    id: row.id,
    object: 'follow_up',
    grant_id: row.grantId,
    message_id: row.messageId,
    thread_id: row.threadId,
    status: row.status,
    body: row.body,
    due_at: row.dueAt,
    ...(row.sentMessageId !== null ? { sent_message_id: row.sentMessageId } : {}),
    ...(row.replyMessageId !== null ? { reply_message_id: row.replyMessageId } : {}),
    ...(row.reason !== null ? { reason: row.reason } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Creates the follow-ups. */
export function createFollowUps({ db, clock, newId, logger }: CoreDeps, grants: GrantService): FollowUps {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());
  /** The worker's pass starts after this `messages.seq` (undefined: not yet known in this process). */
  let seenSeq: number | undefined;

  /** Closes follow-ups with their webhook, in one transaction. */
  async function close(
    rows: readonly { id: string; reply?: string }[],
    change: Parameters<typeof closeFollowUps>[2],
  ): Promise<FollowUpRow[]> {
    if (rows.length === 0) return [];
    const at = now();
    return db.write(async (tx) => {
      const closed: FollowUpRow[] = [];
      for (const { id, reply } of rows) {
        const [row] = await closeFollowUps(tx, [id], { ...change, ...(reply ? { replyMessageId: reply } : {}) }, at);
        if (!row) continue;
        closed.push(row);
        await record(tx, {
          applicationId: row.applicationId,
          grantId: row.grantId,
          type: row.status === 'sent' ? 'message.follow_up_sent' : 'message.follow_up_cancelled',
          objectId: row.id,
          object: toFollowUp(row),
          createdAt: at,
        });
      }
      return closed;
    });
  }

  /** Sends one due follow-up (or cancels it, when a reply came meanwhile). */
  async function sendOne(row: FollowUpRow, send: FollowUpSender): Promise<'sent' | 'cancelled' | 'failed' | 'later'> {
    const reply = await replyTo(db.orm, row.id);
    if (reply !== undefined) {
      await close([{ id: row.id, reply }], { status: 'cancelled', reason: 'a reply came' });
      return 'cancelled';
    }
    const [message] = await db.orm
      .select({
        to: tables.messages.toAddresses,
        cc: tables.messages.ccAddresses,
      })
      .from(tables.messages)
      .where(and(eq(tables.messages.id, row.messageId), eq(tables.messages.grantId, row.grantId)));
    if (!message) {
      await close([{ id: row.id }], { status: 'failed', reason: 'the followed-up message was deleted' });
      return 'failed';
    }
    const principal: Principal = {
      applicationId: row.applicationId,
      via: 'local',
      ...(row.requestedBy ? { key: row.requestedBy } : {}),
    };
    const context: OperationContext = { principal, face: 'worker', idempotencyKey: idempotencyKeyOf(row.id) };
    try {
      const result = (await send(
        {
          grant_id: row.grantId,
          reply_to_message_id: row.messageId,
          to: message.to,
          ...(message.cc.length > 0 ? { cc: message.cc } : {}),
          // No subject: send_message answers the message with its `Re:` subject, as any reply.
          body: row.body,
        },
        context,
      )) as { data?: { id?: unknown } };
      const sentId = typeof result.data?.id === 'string' ? result.data.id : null;
      await close([{ id: row.id }], { status: 'sent', sentMessageId: sentId });
      return 'sent';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Refused for good (the gate, a suppression, a paused grant's 4xx): failed, with the refusal as its reason. A
      // suspended grant's follow-up waits for the resume, as a scheduled send does.
      if (!isTransient(error)) {
        await close([{ id: row.id }], { status: 'failed', reason: message.slice(0, 1000) });
        return 'failed';
      }
      logger.warn('follow-up send failed; tried again later', { follow_up_id: row.id, error: message });
      const at = now();
      await db.write((tx) => postponeFollowUp(tx, row.id, at + RETRY_SECONDS, message.slice(0, 1000), at));
      return 'later';
    }
  }

  /** The pending follow-ups a reply cancels (the worker: what arrived since its last pass; a test clock: all of it). */
  async function cancelReplied(applicationId: string | undefined): Promise<number> {
    let replied: { id: string; reply: string }[];
    if (applicationId !== undefined) {
      replied = await repliedFollowUps(db.orm, { applicationId });
    } else {
      // First pass of this process: from the oldest pending follow-up's message (nothing older can answer one).
      seenSeq ??= (await oldestPendingSeq(db.orm)) ?? (await lastMessageSeq(db.orm));
      const until = await lastMessageSeq(db.orm);
      if (until <= seenSeq) return 0;
      replied = await repliedFollowUps(db.orm, { sinceSeq: seenSeq, untilSeq: until });
      seenSeq = until;
    }
    const closed = await close(replied, { status: 'cancelled', reason: 'a reply came' });
    return closed.length;
  }

  /** A follow-up of a message the grant sent. */
  async function create(principal: Principal, input: CreateFollowUpInput): Promise<FollowUp> {
    const grant = await grants.require(principal, input.grant_id);
    const [message] = await db.orm
      .select({
        id: tables.messages.id,
        seq: tables.messages.seq,
        threadId: tables.messages.threadId,
        from: tables.messages.fromAddresses,
        folders: tables.messages.folders,
      })
      .from(tables.messages)
      .where(and(eq(tables.messages.id, input.message_id), eq(tables.messages.grantId, grant.id)));
    if (!message) throw notFound('Message', input.message_id);
    if (message.from[0]?.email.toLowerCase() !== grant.email.toLowerCase() || message.folders.includes('drafts'))
      throw invalid('message_id', 'must be a message this grant sent (a follow-up answers its own send).');
    const at = now();
    const key = principal.key;
    const row: FollowUpRow = {
      id: newId(),
      applicationId: grant.applicationId,
      grantId: grant.id,
      messageId: message.id,
      threadId: message.threadId,
      afterSeq: message.seq,
      body: input.body,
      dueAt: at + input.after_seconds,
      status: 'pending',
      sentMessageId: null,
      replyMessageId: null,
      reason: null,
      requestedBy: key ? { id: key.id, name: key.name, ...(key.agent ? { agent: true } : {}) } : null,
      closedAt: null,
      createdAt: at,
      updatedAt: at,
    };
    const inserted = await db.write((tx) =>
      tx.insert(tables.followUps).values(row).onConflictDoNothing().returning({ id: tables.followUps.id }),
    );
    if (inserted.length === 0)
      throw new AppError('conflict', `Message ${input.message_id} has a follow-up already; list_follow_ups shows it.`);
    return toFollowUp(row);
  }

  return {
    create,

    async attach(principal: Principal, input: CreateFollowUpInput): Promise<void> {
      try {
        await create(principal, input);
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'conflict')) throw error;
      }
    },

    async list(principal: Principal, input: ListFollowUpsInput): Promise<{ data: FollowUp[] }> {
      const grant = await grants.require(principal, input.grant_id);
      const rows = await listFollowUps(db.orm, grant.id, input.status, input.limit ?? 50);
      return { data: rows.map(toFollowUp) };
    },

    async find(principal: Principal, input: FollowUpRefInput): Promise<FollowUp> {
      const grant = await grants.require(principal, input.grant_id);
      const row = await findFollowUp(db.orm, grant.id, input.follow_up_id);
      if (!row) throw notFound('Follow-up', input.follow_up_id);
      return toFollowUp(row);
    },

    async cancel(principal: Principal, input: FollowUpRefInput): Promise<FollowUp> {
      const grant = await grants.require(principal, input.grant_id);
      const row = await findFollowUp(db.orm, grant.id, input.follow_up_id);
      if (!row) throw notFound('Follow-up', input.follow_up_id);
      if (row.status === 'cancelled') return toFollowUp(row);
      const [closed] = await close([{ id: row.id }], { status: 'cancelled', reason: 'cancelled by the agent' });
      if (!closed) {
        const current = await findFollowUp(db.orm, grant.id, row.id);
        throw new AppError(
          'conflict',
          `Follow-up ${row.id} is ${current?.status ?? 'gone'}; it can no longer be cancelled.`,
        );
      }
      return toFollowUp(closed);
    },

    async runDue(at: Date, options: { applicationId?: string | undefined; send: FollowUpSender }): Promise<DueRun> {
      const done: DueRun = { sent: 0, cancelled: await cancelReplied(options.applicationId), failed: 0 };
      const rows = await dueFollowUps(db.orm, unixSeconds(at), SEND_BATCH, options.applicationId);
      for (const row of rows) {
        const outcome = await sendOne(row, options.send);
        if (outcome !== 'later') done[outcome]++;
      }
      return done;
    },

    nextDue: (applicationId: string) => nextFollowUpDue(db.orm, applicationId),
  };
}
