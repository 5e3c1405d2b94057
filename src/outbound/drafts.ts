/**
 * @module outbound/drafts
 * Drafts and scheduled sends. A draft is a message in the `drafts` folder (and in its thread) plus a
 * `draft_details` row with its stable id and the fields only sending uses. An update stores the new version and
 * drops the old one in one transaction (the draft id and Message-ID stay, so it stays in its thread). Sending
 * a draft goes through the normal send flow and removes the draft in the same transaction.
 *
 * A scheduled send (`send_at`) is held as a draft until its time; a `mail.send_scheduled` job of the durable
 * queue sends it then. Stopping it cancels the job (and removes the draft unless it was the caller's own draft
 * or `use_draft` was set). The schedule's state is checked again inside the sending transaction, so a stop
 * that races the job either wins (nothing is sent) or comes too late (400: already sent), never both.
 */
import { and, asc, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../applications/application-service.js';
import type { CoreDeps } from '../deps.js';
import { unixSeconds } from '../deps.js';
import { AppError, invalid, notFound } from '../errors.js';
import type { GrantService } from '../grants/grant-service.js';
import type { Job, JobQueue } from '../jobs/job-queue.js';
import type { JobHandler } from '../jobs/worker.js';
import { loadAttachments, loadBody, presentMessages, type MailStore, type NewMessage } from '../messages/mail-store.js';
import { messageConditions } from '../messages/message-filters.js';
import { selectFields, type MessageRow } from '../messages/message-mapper.js';
import type { OperationContext } from '../operations/define-operation.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type { CreateDraftInput, Draft, DraftRefInput, ListDraftsInput, UpdateDraftInput } from '../schemas/drafts.js';
import type { ScheduledMessage, ScheduledMessageRefInput, SendResult } from '../schemas/send.js';
import { parsedOf } from './compose.js';
import type { IdempotencyClaim, IdempotencyStore } from './idempotency.js';
import type { Built, ComposeRequest, Composition } from './outbound-service.js';

/** The job kind of a scheduled send. */
export const SCHEDULED_SEND_JOB = 'mail.send_scheduled';
/** How far ahead a send may be scheduled (as Nylas: 30 days). */
const MAX_SCHEDULE_AHEAD_SECONDS = 30 * 86_400;

type DetailsRow = typeof tables.draftDetails.$inferSelect;
type ScheduleRow = typeof tables.scheduledMessages.$inferSelect;

/** A draft: its details and the message row of its current version. */
export interface DraftRecord {
  details: DetailsRow;
  row: MessageRow;
}

/** What the draft service borrows from the send flow. */
export interface DraftParts {
  grants: GrantService;
  store: MailStore;
  jobs: JobQueue;
  idempotency: IdempotencyStore;
  prepare(principal: Principal, grant: GrantRow, input: ComposeRequest, mode: 'send' | 'draft'): Promise<Composition>;
  build(composition: Composition, headerMessageId: string, date: Date): Promise<Built>;
  accept(
    composition: Composition,
    options: {
      claim?: IdempotencyClaim | undefined;
      headerMessageId?: string | undefined;
      before?: ((tx: Tx) => Promise<void>) | undefined;
      after?: ((tx: Tx, sentMessageId: string) => Promise<void>) | undefined;
    },
  ): Promise<SendResult>;
}

/** Thrown inside a sending transaction when the draft or schedule changed meanwhile: nothing is written. */
class StaleError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

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
    status: { code: row.status, description: row.error ? `${SCHEDULE_DESCRIPTIONS[row.status]}: ${row.error}` : SCHEDULE_DESCRIPTIONS[row.status] },
    send_at: row.sendAt,
    ...(row.closeTime !== null ? { close_time: row.closeTime } : {}),
    ...(row.status === 'pending' ? { draft_id: row.draftId } : {}),
    ...(row.sentMessageId !== null ? { message_id: row.sentMessageId } : {}),
  };
}

/** Only the fields the caller gave. */
function given<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** The sender's own copy of a composed message (the sent copy, or a draft version), for the mail store. */
export function ownCopy(composition: Composition, built: Built, place: Pick<NewMessage, 'folders' | 'unread' | 'date' | 'envelopeFrom'>): NewMessage {
  return {
    applicationId: composition.grant.applicationId,
    grantId: composition.grant.id,
    parsed: parsedOf(built.input),
    raw: built.raw,
    rawHash: built.rawHash,
    ...place,
    envelopeTo: null,
    parseError: null,
    metadata: composition.metadata,
  };
}

/** Creates the draft service. */
export function createDraftService(deps: CoreDeps, parts: DraftParts) {
  const { db, clock, newId, logger } = deps;
  const { grants, store, jobs, idempotency, prepare, build, accept } = parts;
  const now = () => unixSeconds(clock.now());

  async function findDraft(executor: Pick<typeof db.orm, 'select'>, grantId: string, draftId: string): Promise<DraftRecord | undefined> {
    const [found] = await executor
      .select({ details: tables.draftDetails, row: tables.messages })
      .from(tables.draftDetails)
      .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
      .where(and(eq(tables.draftDetails.grantId, grantId), eq(tables.draftDetails.id, draftId)))
      .limit(1);
    return found;
  }

  async function requireDraft(grantId: string, draftId: string): Promise<DraftRecord> {
    const record = await findDraft(db.orm, grantId, draftId);
    if (!record) throw notFound('Draft', draftId);
    return record;
  }

  /** Throws {@link StaleError} unless the draft's current version is still `record.row` (inside a transaction). */
  async function assertCurrent(tx: Tx, record: DraftRecord): Promise<void> {
    const current = await findDraft(tx, record.details.grantId, record.details.id);
    if (!current || current.row.id !== record.row.id) throw new StaleError(`Draft ${record.details.id} changed or was deleted meanwhile; read it again and retry.`);
  }

  async function present(records: DraftRecord[], select?: string): Promise<Draft[]> {
    const messages = await presentMessages(db.orm, records.map((record) => record.row));
    return records.map(({ details }, index) => {
      const { object: _object, raw_mime: _raw, headers: _headers, delivery_status: _status, ...message } = messages[index]!;
      const draft: Draft = {
        ...message,
        id: details.id,
        object: 'draft',
        ...(details.replyToMessageId !== null ? { reply_to_message_id: details.replyToMessageId } : {}),
        ...(details.trackingOptions !== null ? { tracking_options: details.trackingOptions } : {}),
        ...(details.customHeaders !== null && details.customHeaders.length > 0 ? { custom_headers: details.customHeaders } : {}),
        ...(details.isPlaintext ? { is_plaintext: true } : {}),
        ...(details.sendAt !== null ? { send_at: details.sendAt } : {}),
      };
      return select === undefined ? draft : (selectFields(draft, select) as Draft);
    });
  }

  /** The draft as a send request, attachments by id (their bytes are read again when it is sent). */
  async function requestOf(record: DraftRecord): Promise<ComposeRequest> {
    const { row, details } = record;
    const attachments = (await loadAttachments(db.orm, [row.id])).get(row.id) ?? [];
    return {
      to: row.toAddresses,
      cc: row.ccAddresses,
      bcc: row.bccAddresses,
      reply_to: row.replyToAddresses,
      from: row.fromAddresses.slice(0, 1),
      subject: row.subject,
      body: details.isPlaintext ? (details.plainBody ?? '') : await loadBody(db.orm, row),
      is_plaintext: details.isPlaintext,
      attachments: attachments.map((attachment) => ({ id: attachment.id })),
      ...(details.trackingOptions !== null ? { tracking_options: details.trackingOptions } : {}),
      ...(details.customHeaders !== null ? { custom_headers: details.customHeaders } : {}),
      // Drafts saved before metadata had to be flat strings may hold other values: they go on as their JSON text.
      metadata: Object.fromEntries(Object.entries(row.metadata).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)])),
    };
  }

  /**
   * The composition of a draft, with `changes` applied. Threading stays as stored unless `changes` names another
   * message to answer (the message first answered may have been deleted since; its headers are kept).
   */
  async function compositionOf(principal: Principal, grant: GrantRow, record: DraftRecord, changes: Partial<ComposeRequest>, mode: 'send' | 'draft'): Promise<Composition> {
    const request = { ...(await requestOf(record)), ...given(changes) };
    const composition = await prepare(principal, grant, request, mode);
    if (changes.reply_to_message_id === undefined && record.details.replyToMessageId !== null) {
      composition.replyToMessageId = record.details.replyToMessageId;
      composition.inReplyTo = record.row.inReplyTo ?? undefined;
      composition.references = record.row.references;
    }
    return composition;
  }

  /**
   * Stores a version of a draft in the caller's transaction: a new `messages` row (no `message.created` event: a
   * draft is not mail that arrived), then, for an existing draft, the details point to it and the old row goes.
   */
  async function writeVersion(
    tx: Tx,
    composition: Composition,
    built: Built,
    previous: DraftRecord | undefined,
    flags: { starred: boolean; unread: boolean; sendAt: number | null },
  ): Promise<DraftRecord> {
    const { grant } = composition;
    const copy = await store.insert(tx, ownCopy(composition, built, { folders: ['drafts'], unread: flags.unread, date: now(), envelopeFrom: null }));
    await tx.delete(tables.outboxEvents).where(and(eq(tables.outboxEvents.type, 'message.created'), eq(tables.outboxEvents.objectId, copy.row.id)));
    let row = copy.row;
    if (flags.starred) row = (await store.change(tx, [row], { starred: true }))[0] ?? row;
    const values = {
      messageId: row.id,
      grantId: grant.id,
      headerMessageId: built.input.messageId,
      replyToMessageId: composition.replyToMessageId ?? null,
      isPlaintext: composition.isPlaintext,
      plainBody: composition.isPlaintext ? composition.body : null,
      trackingOptions: composition.trackingOptions ?? null,
      customHeaders: composition.customHeaders.length > 0 ? composition.customHeaders : null,
      sendAt: flags.sendAt,
    };
    let details: DetailsRow;
    if (previous) {
      [details] = (await tx.update(tables.draftDetails).set(values).where(eq(tables.draftDetails.id, previous.details.id)).returning()) as [DetailsRow];
      await store.destroy(tx, [previous.row]);
    } else {
      [details] = (await tx
        .insert(tables.draftDetails)
        .values({ id: newId(), ...values, createdAt: now() })
        .returning()) as [DetailsRow];
    }
    return { details, row: row! };
  }

  /** Removes a draft in the caller's transaction and cancels its pending schedules (except `keep`). */
  async function removeDraft(tx: Tx, record: DraftRecord, keep?: string): Promise<void> {
    const pending = await tx
      .select()
      .from(tables.scheduledMessages)
      .where(and(eq(tables.scheduledMessages.draftId, record.details.id), eq(tables.scheduledMessages.status, 'pending')));
    for (const schedule of pending) {
      if (schedule.id === keep) continue;
      await tx.update(tables.scheduledMessages).set({ status: 'cancelled', error: 'the draft was sent or deleted', closeTime: now(), updatedAt: now() }).where(eq(tables.scheduledMessages.id, schedule.id));
      await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${schedule.id}`));
    }
    await store.destroy(tx, [record.row]);
  }

  /** Holds a message as a draft until `sendAt` and schedules its sending. Answers with HTTP status 202. */
  async function schedule(
    composition: Composition,
    options: { sendAt: number; useDraft: boolean; claim?: IdempotencyClaim | undefined; existing?: DraftRecord | undefined },
  ): Promise<SendResult> {
    const at = now();
    if (options.sendAt <= at) throw invalid('send_at', `must be in the future (now is ${at}); leave send_at out to send at once.`);
    if (options.sendAt > at + MAX_SCHEDULE_AHEAD_SECONDS) throw invalid('send_at', `may be at most 30 days ahead (until ${at + MAX_SCHEDULE_AHEAD_SECONDS}).`);
    const { grant } = composition;
    const existing = options.existing;
    const built = existing ? undefined : await build(composition, `${newId()}@${grant.email.slice(grant.email.lastIndexOf('@') + 1)}`, clock.now());
    return db.write(async (tx) => {
      const replay = await idempotency.find(tx, options.claim);
      if (replay) return replay.response as SendResult;
      let record: DraftRecord;
      if (existing) {
        await assertCurrent(tx, existing);
        record = existing;
      } else {
        record = await writeVersion(tx, composition, built!, undefined, { starred: false, unread: false, sendAt: options.sendAt });
      }
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
      await jobs.enqueueIn(tx, { kind: SCHEDULED_SEND_JOB, payload: { schedule_id: id }, runAt: new Date(options.sendAt * 1000), dedupeKey: `${SCHEDULED_SEND_JOB}:${id}` });
      const [message] = await presentMessages(tx, [record.row]);
      const { delivery_status: _status, ...data } = message!;
      const answer: SendResult = {
        data: { ...data, id: record.details.id, schedule_id: id, send_at: options.sendAt, use_draft: options.useDraft, ...(composition.replyToMessageId ? { reply_to_message_id: composition.replyToMessageId } : {}) },
        schedule_id: id,
        send_at: options.sendAt,
        use_draft: options.useDraft,
        grant_id: grant.id,
      };
      await idempotency.save(tx, options.claim, { status: 202, response: answer });
      return answer;
    });
  }

  /** The `mail.send_scheduled` handler: sends the held draft, or records why it could not be sent. */
  const runSchedule: JobHandler = async (job: Job) => {
    const scheduleId = String(job.payload.schedule_id);
    const [row] = await db.orm.select().from(tables.scheduledMessages).where(eq(tables.scheduledMessages.id, scheduleId));
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
          const [current] = await tx.select().from(tables.scheduledMessages).where(eq(tables.scheduledMessages.id, scheduleId));
          if (current?.status !== 'pending') throw new StaleError('the schedule was stopped');
          await assertCurrent(tx, record);
        },
        after: async (tx, sentMessageId) => {
          await tx.update(tables.scheduledMessages).set({ status: 'success', sentMessageId, closeTime: now(), updatedAt: now() }).where(eq(tables.scheduledMessages.id, scheduleId));
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

    /** Creates a draft in the `drafts` folder (and in the thread of the message it answers). */
    async create(principal: Principal, input: CreateDraftInput): Promise<Draft> {
      const grant = await grants.require(principal, input.grant_id);
      const { grant_id: _grant, starred, send_at: sendAt, ...request } = input;
      const composition = await prepare(principal, grant, request, 'draft');
      const built = await build(composition, `${newId()}@${grant.email.slice(grant.email.lastIndexOf('@') + 1)}`, clock.now());
      const record = await db.write((tx) => writeVersion(tx, composition, built, undefined, { starred: starred ?? false, unread: false, sendAt: sendAt ?? null }));
      const [draft] = await present([record]);
      return draft!;
    },

    /** A page of drafts, newest first. */
    async list(principal: Principal, input: ListDraftsInput): Promise<{ data: Draft[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const conditions: (SQL | undefined)[] = [...messageConditions(grant.id, input), eq(tables.draftDetails.grantId, grant.id)];
      const after = decodeCursor(input.page_token, 2) as [number, number] | undefined;
      if (after) {
        const [date, seq] = after;
        conditions.push(or(lt(tables.messages.date, date), and(eq(tables.messages.date, date), lt(tables.messages.seq, seq))));
      }
      const rows = await db.orm
        .select({ details: tables.draftDetails, row: tables.messages })
        .from(tables.draftDetails)
        .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
        .where(and(...conditions))
        .orderBy(desc(tables.messages.date), desc(tables.messages.seq))
        .limit(limit + 1);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return { data: await present(page, input.select), ...(rows.length > limit && last ? { next_cursor: encodeCursor([last.row.date, last.row.seq]) } : {}) };
    },

    /** One draft. */
    async find(principal: Principal, input: DraftRefInput): Promise<Draft> {
      const grant = await grants.require(principal, input.grant_id);
      const [draft] = await present([await requireDraft(grant.id, input.draft_id)]);
      return draft!;
    },

    /** Changes the fields given (the others stay); `attachments`, when given, replaces the list. */
    async update(principal: Principal, input: UpdateDraftInput): Promise<Draft> {
      const grant = await grants.require(principal, input.grant_id);
      const record = await requireDraft(grant.id, input.draft_id);
      const { grant_id: _grant, draft_id: _draft, starred, unread, send_at: sendAt, ...changes } = input;
      const composition = await compositionOf(principal, grant, record, changes, 'draft');
      const built = await build(composition, record.details.headerMessageId, clock.now());
      const updated = await db.write(async (tx) => {
        await assertCurrent(tx, record);
        return writeVersion(tx, composition, built, record, {
          starred: starred ?? record.row.starred,
          unread: unread ?? record.row.unread,
          sendAt: sendAt ?? record.details.sendAt,
        });
      });
      const [draft] = await present([updated]);
      return draft!;
    },

    /** Deletes a draft (and stops any scheduled send of it). */
    async destroy(principal: Principal, input: DraftRefInput): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      const record = await requireDraft(grant.id, input.draft_id);
      await db.write(async (tx) => {
        await assertCurrent(tx, record);
        await removeDraft(tx, record);
      });
    },

    /**
     * Sends a draft through the send flow and removes it; a draft whose send_at is in the future is scheduled
     * instead. Idempotency-Key as for send_message.
     */
    async send(principal: Principal, input: DraftRefInput, context: Pick<OperationContext, 'idempotencyKey'> = {}): Promise<SendResult> {
      const claim = idempotency.claim(principal.applicationId, context.idempotencyKey, 'send_draft', input);
      const replay = await idempotency.find(db.orm, claim);
      if (replay) return replay.response as SendResult;
      const grant = await grants.require(principal, input.grant_id);
      const record = await requireDraft(grant.id, input.draft_id);
      const composition = await compositionOf(principal, grant, record, {}, 'send');
      if (record.details.sendAt !== null && record.details.sendAt > now()) {
        return schedule(composition, { sendAt: record.details.sendAt, useDraft: true, claim, existing: record });
      }
      return accept(composition, {
        claim,
        headerMessageId: record.details.headerMessageId,
        before: (tx) => assertCurrent(tx, record),
        after: (tx) => removeDraft(tx, record),
      });
    },

    /** Scheduled sends of a mailbox, the latest send time first (at most 200). */
    async listScheduled(principal: Principal, input: { grant_id: string }): Promise<ScheduledMessage[]> {
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
    async findScheduled(principal: Principal, input: ScheduledMessageRefInput): Promise<ScheduledMessage> {
      const grant = await grants.require(principal, input.grant_id);
      const [row] = await db.orm
        .select()
        .from(tables.scheduledMessages)
        .where(and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)));
      if (!row) throw notFound('Scheduled message', input.schedule_id);
      return toScheduled(row);
    },

    /** Stops a pending scheduled send. A send already made is a 400. */
    async stopScheduled(principal: Principal, input: ScheduledMessageRefInput): Promise<{ message: string }> {
      const grant = await grants.require(principal, input.grant_id);
      return db.write(async (tx) => {
        const [row] = await tx
          .select()
          .from(tables.scheduledMessages)
          .where(and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)));
        if (!row) throw notFound('Scheduled message', input.schedule_id);
        if (row.status === 'success' || row.status === 'failed') {
          throw invalid('schedule_id', `this scheduled send already ${row.status === 'success' ? 'went out' : 'failed'} (status ${row.status}); there is nothing to stop.`);
        }
        if (row.status !== 'cancelled') {
          await tx.update(tables.scheduledMessages).set({ status: 'cancelled', closeTime: now(), updatedAt: now() }).where(eq(tables.scheduledMessages.id, row.id));
          await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${row.id}`));
          const record = await findDraft(tx, grant.id, row.draftId);
          if (record && !row.keepDraft) await store.destroy(tx, [record.row]);
          else if (record) await tx.update(tables.draftDetails).set({ sendAt: null }).where(eq(tables.draftDetails.id, record.details.id));
        }
        return { message: 'requested cancelation for workflow' };
      });
    },

    /** Ids of the drafts among the given message rows (for threads' draft_ids). */
    async draftIdsOf(messageIds: string[]): Promise<Map<string, string>> {
      const map = new Map<string, string>();
      for (let index = 0; index < messageIds.length; index += 500) {
        const rows = await db.orm
          .select({ id: tables.draftDetails.id, messageId: tables.draftDetails.messageId })
          .from(tables.draftDetails)
          .where(inArray(tables.draftDetails.messageId, messageIds.slice(index, index + 500)));
        for (const row of rows) map.set(row.messageId, row.id);
      }
      return map;
    },

    handlers: { [SCHEDULED_SEND_JOB]: runSchedule } as Record<string, JobHandler>,
  };
}

export type DraftService = ReturnType<typeof createDraftService>;
