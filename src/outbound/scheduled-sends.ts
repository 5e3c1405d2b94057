/**
 * @module outbound/scheduled-sends
 * Scheduled sends. A send with `send_at` is held as a draft until its time; a `mail.send_scheduled` job of the
 * durable queue sends it then. Stopping it cancels the job (and removes the draft unless it was the caller's own
 * draft or `use_draft` was set). The schedule's state is checked again inside the sending transaction, so a stop
 * that races the job either wins (nothing is sent) or comes too late (400: already sent), never both.
 */
import { and, asc, desc, eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, invalid, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import type { Job, JobQueue, JobHandler } from '../jobs/index.js';
import { presentMessages, type MailStore } from '../messages/index.js';
import type { ScheduledMessage, ScheduledMessageRefInput, SendResult } from '../schemas/send.js';
import type { Composer, Composition } from './composition.js';
import { StaleError, type DraftRecord, type DraftVersions } from './draft-versions.js';
import type { IdempotencyClaim, IdempotencyStore } from './idempotency.js';
import type { OutboundStage } from './outbound-stage.js';
import { sendCandidateOf, type AcceptOptions } from './submission.js';
import type { Providers } from '../providers/index.js';

/** The job kind of a scheduled send. */
export const SCHEDULED_SEND_JOB = 'mail.send_scheduled';
/** How far ahead a send may be scheduled (as Nylas: 30 days). */
const MAX_SCHEDULE_AHEAD_SECONDS = 30 * 86_400;

type ScheduleRow = typeof tables.scheduledMessages.$inferSelect;

const SCHEDULE_DESCRIPTIONS: Record<ScheduleRow['status'], string> = {
  pending: 'schedule send awaiting send at time',
  sending: 'schedule send in progress',
  success: 'schedule send succeeded',
  failed: 'schedule send failed',
  cancelled: 'schedule send cancelled',
};

function toScheduled(row: ScheduleRow): ScheduledMessage {
  return {
    schedule_id: row.id,
    status: {
      code: row.status,
      description: row.error ? `${SCHEDULE_DESCRIPTIONS[row.status]}: ${row.error}` : SCHEDULE_DESCRIPTIONS[row.status],
    },
    send_at: row.sendAt,
    ...(row.closeTime !== null ? { close_time: row.closeTime } : {}),
    ...(row.status === 'pending' ? { draft_id: row.draftId } : {}),
    ...(row.sentMessageId !== null ? { message_id: row.sentMessageId } : {}),
  };
}

/** Parts the scheduled sends use. */
export interface ScheduledSendParts {
  grants: GrantService;
  store: MailStore;
  jobs: JobQueue;
  idempotency: IdempotencyStore;
  versions: DraftVersions;
  build: Composer['build'];
  accept: (composition: Composition, options: AcceptOptions) => Promise<SendResult>;
  /** The outbound stage: a send is checked when scheduled (without the quota) and again when it fires (in `accept`). */
  stage: OutboundStage;
  /** The mailbox providers: a removed draft of a connected account goes from its server too. */
  providers: Providers;
}

/** Creates the scheduled sends: scheduling, the job that sends, and listing and stopping schedules. */
export function createScheduledSends(deps: CoreDeps, parts: ScheduledSendParts) {
  const { db, clock, newId, logger } = deps;
  const { grants, store, jobs, idempotency, versions, build, accept, stage, providers } = parts;
  const { findDraft, assertCurrent, compositionOf, writeVersion } = versions;
  const now = () => unixSeconds(clock.now());

  /** Removes a draft in the caller's transaction and cancels its pending schedules (except `keep`). */
  async function removeDraft(tx: Tx, record: DraftRecord, keep?: string): Promise<void> {
    const pending = await tx
      .select()
      .from(tables.scheduledMessages)
      .where(
        and(eq(tables.scheduledMessages.draftId, record.details.id), eq(tables.scheduledMessages.status, 'pending')),
      );
    for (const schedule of pending) {
      if (schedule.id === keep) continue;
      await tx
        .update(tables.scheduledMessages)
        .set({ status: 'cancelled', error: 'the draft was sent or deleted', closeTime: now(), updatedAt: now() })
        .where(eq(tables.scheduledMessages.id, schedule.id));
      await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${schedule.id}`));
    }
    const { grant, provider } = await providers.ofGrantId(tx, record.details.grantId);
    await provider.draftRemoved(tx, grant, {
      draftId: record.details.id,
      grantId: grant.id,
      messageId: record.row.id,
      headerMessageId: record.details.headerMessageId,
    });
    await store.destroy(tx, [record.row]);
  }

  /** Holds a message as a draft until `sendAt` and schedules its sending. Answers with HTTP status 202. */
  async function schedule(
    composition: Composition,
    options: {
      sendAt: number;
      useDraft: boolean;
      claim?: IdempotencyClaim | undefined;
      existing?: DraftRecord | undefined;
    },
  ): Promise<SendResult> {
    const at = now();
    if (options.sendAt <= at)
      throw invalid('send_at', `must be in the future (now is ${at}); leave send_at out to send at once.`);
    if (options.sendAt > at + MAX_SCHEDULE_AHEAD_SECONDS)
      throw invalid('send_at', `may be at most 30 days ahead (until ${at + MAX_SCHEDULE_AHEAD_SECONDS}).`);
    const { grant } = composition;
    const existing = options.existing;
    const built = existing
      ? undefined
      : await build(composition, `${newId()}@${grant.email.slice(grant.email.lastIndexOf('@') + 1)}`, clock.now());
    const check = await stage.prepare(grant, sendCandidateOf(composition, built?.raw.length ?? existing!.row.rawSize));
    return stage.settle(
      db.write(async (tx) => {
        const replay = await idempotency.find(tx, options.claim);
        if (replay) return replay.response as SendResult;
        let record: DraftRecord;
        if (existing) {
          await assertCurrent(tx, existing);
          record = existing;
        } else {
          record = await writeVersion(tx, composition, built!, undefined, {
            starred: false,
            unread: false,
            sendAt: options.sendAt,
          });
        }
        const admitted = await stage.admit(tx, check, 'schedule');
        const id = newId();
        await tx.insert(tables.scheduledMessages).values({
          id,
          applicationId: grant.applicationId,
          grantId: grant.id,
          draftId: record.details.id,
          keepDraft: existing !== undefined || options.useDraft,
          sendAt: options.sendAt,
          status: 'pending',
          createdAt: at,
          updatedAt: at,
        });
        await jobs.enqueueIn(tx, {
          kind: SCHEDULED_SEND_JOB,
          payload: { schedule_id: id },
          runAt: new Date(options.sendAt * 1000),
          dedupeKey: `${SCHEDULED_SEND_JOB}:${id}`,
        });
        const [message] = await presentMessages(tx, [record.row]);
        const { delivery_status: _status, ...data } = message!;
        const answer: SendResult = {
          data: {
            ...data,
            id: record.details.id,
            schedule_id: id,
            send_at: options.sendAt,
            use_draft: options.useDraft,
            ...(composition.replyToMessageId ? { reply_to_message_id: composition.replyToMessageId } : {}),
          },
          schedule_id: id,
          send_at: options.sendAt,
          use_draft: options.useDraft,
          grant_id: grant.id,
        };
        await stage.record(tx, admitted, undefined);
        await idempotency.save(tx, options.claim, { status: 202, response: answer });
        return answer;
      }),
    );
  }

  /** The `mail.send_scheduled` handler: sends the held draft, or records why it could not be sent. */
  const runSchedule: JobHandler = async (job: Job) => {
    const scheduleId = String(job.payload.schedule_id);
    const [row] = await db.orm
      .select()
      .from(tables.scheduledMessages)
      .where(eq(tables.scheduledMessages.id, scheduleId));
    if (!row || row.status !== 'pending') return { type: 'done' };
    const fail = (error: string) =>
      db.write(async (tx) => {
        await tx
          .update(tables.scheduledMessages)
          .set({ status: 'failed', error: error.slice(0, 1000), closeTime: now(), updatedAt: now() })
          .where(and(eq(tables.scheduledMessages.id, scheduleId), eq(tables.scheduledMessages.status, 'pending')));
        await tx.update(tables.draftDetails).set({ sendAt: null }).where(eq(tables.draftDetails.id, row.draftId));
      });
    const record = await findDraft(db.orm, row.grantId, row.draftId);
    const [grant] = await db.orm.select().from(tables.grants).where(eq(tables.grants.id, row.grantId));
    if (!record || !grant) {
      await fail(!grant ? 'the mailbox was deleted' : 'the draft holding the message was deleted');
      return { type: 'done' };
    }
    const principal: Principal = { applicationId: row.applicationId, via: 'local' };
    try {
      const composition = await compositionOf(principal, grant, record, {}, 'send');
      await accept(composition, {
        headerMessageId: record.details.headerMessageId,
        before: async (tx) => {
          const [current] = await tx
            .select()
            .from(tables.scheduledMessages)
            .where(eq(tables.scheduledMessages.id, scheduleId));
          if (current?.status !== 'pending') throw new StaleError('the schedule was stopped');
          await assertCurrent(tx, record);
        },
        after: async (tx, sentMessageId) => {
          await tx
            .update(tables.scheduledMessages)
            .set({ status: 'success', sentMessageId, closeTime: now(), updatedAt: now() })
            .where(eq(tables.scheduledMessages.id, scheduleId));
          await removeDraft(tx, record, scheduleId);
        },
      });
    } catch (error) {
      if (error instanceof StaleError) return { type: 'done' };
      if (error instanceof AppError && error.code !== 'internal' && error.code !== 'unavailable') {
        logger.warn('scheduled send failed', { schedule_id: scheduleId, error: error.message });
        await fail(error.message);
        return { type: 'done' };
      }
      throw error;
    }
    return { type: 'done' };
  };

  return {
    schedule,
    removeDraft,

    /** Scheduled sends of a mailbox, the latest send time first (at most 200). */
    async listScheduled(this: void, principal: Principal, input: { grant_id: string }): Promise<ScheduledMessage[]> {
      const grant = await grants.require(principal, input.grant_id);
      const rows = await db.orm
        .select()
        .from(tables.scheduledMessages)
        .where(eq(tables.scheduledMessages.grantId, grant.id))
        .orderBy(desc(tables.scheduledMessages.sendAt), asc(tables.scheduledMessages.id))
        .limit(200);
      return rows.map(toScheduled);
    },

    /** One scheduled send. */
    async findScheduled(this: void, principal: Principal, input: ScheduledMessageRefInput): Promise<ScheduledMessage> {
      const grant = await grants.require(principal, input.grant_id);
      const [row] = await db.orm
        .select()
        .from(tables.scheduledMessages)
        .where(and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)));
      if (!row) throw notFound('Scheduled message', input.schedule_id);
      return toScheduled(row);
    },

    /** Stops a pending scheduled send. A send already made is a 400. */
    async stopScheduled(
      this: void,
      principal: Principal,
      input: ScheduledMessageRefInput,
    ): Promise<{ message: string }> {
      const grant = await grants.require(principal, input.grant_id);
      return db.write(async (tx) => {
        const [row] = await tx
          .select()
          .from(tables.scheduledMessages)
          .where(
            and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)),
          );
        if (!row) throw notFound('Scheduled message', input.schedule_id);
        if (row.status === 'success' || row.status === 'failed') {
          throw invalid(
            'schedule_id',
            `this scheduled send already ${row.status === 'success' ? 'went out' : 'failed'} (status ${row.status}); there is nothing to stop.`,
          );
        }
        if (row.status !== 'cancelled') {
          await tx
            .update(tables.scheduledMessages)
            .set({ status: 'cancelled', closeTime: now(), updatedAt: now() })
            .where(eq(tables.scheduledMessages.id, row.id));
          await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${row.id}`));
          const record = await findDraft(tx, grant.id, row.draftId);
          if (record && !row.keepDraft) await store.destroy(tx, [record.row]);
          else if (record)
            await tx
              .update(tables.draftDetails)
              .set({ sendAt: null })
              .where(eq(tables.draftDetails.id, record.details.id));
        }
        return { message: 'requested cancelation for workflow' };
      });
    },

    handlers: { [SCHEDULED_SEND_JOB]: runSchedule } as Record<string, JobHandler>,
  };
}
