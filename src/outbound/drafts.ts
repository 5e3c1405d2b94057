/**
 * @module outbound/drafts
 * Drafts: create, list, read, update, delete and send. Each version of a draft is written by draft-versions.ts;
 * sending a draft goes through the normal send flow (submission.ts) and removes the draft in the same
 * transaction; a draft whose `send_at` is ahead is scheduled instead (scheduled-sends.ts).
 */
import { and, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { SendContext } from './contracts.js';
import { provenanceOf } from './provenance.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { GrantService } from '../grants/contracts.js';
import type { JobQueue } from '../jobs/index.js';
import { presentMessages, type MailStore, messageConditions, selectFields } from '../messages/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type {
  CreateDraftInput,
  Draft,
  DraftRefInput,
  ListDraftsInput,
  SendDraftInput,
  UpdateDraftInput,
} from '../schemas/drafts.js';
import type { SendMessageResult, SendResult } from '../schemas/send.js';
import type {
  AcceptOptions,
  Composer,
  Composition,
  DraftRecord,
  DraftService,
  DraftVersions,
  IdempotencyStore,
  OutboundStage,
} from './contracts.js';
import { createDraftVersions, StaleError } from './draft-versions.js';
import type { SendGate } from './send-gate.js';
import { createScheduledSends } from './scheduled-sends.js';
import type { Providers } from '../providers/index.js';

/** What the draft service borrows from the send flow. */
export interface DraftParts {
  grants: GrantService;
  store: MailStore;
  jobs: JobQueue;
  idempotency: IdempotencyStore;
  prepare: Composer['prepare'];
  build: Composer['build'];
  accept: (composition: Composition, options: AcceptOptions) => Promise<SendResult>;
  stage: OutboundStage;
  /** The mailbox providers: a connected account's drafts are kept on its server too. */
  providers: Providers;
  /** Oversight on the send path (./send-gate.ts). */
  sendGate: SendGate;
}

/** Drafts as the API answers them: the current version's message, with the draft's own fields. */
async function presentDrafts(db: CoreDeps['db'], records: DraftRecord[], select?: string): Promise<Draft[]> {
  const messages = await presentMessages(
    db.orm,
    records.map((record) => record.row),
  );
  return records.map(({ details }, index) => {
    const {
      object: _object,
      raw_mime: _raw,
      headers: _headers,
      delivery_status: _status,
      ...message
    } = messages[index]!;
    const draft: Draft = {
      ...message,
      id: details.id,
      object: 'draft',
      ...(details.replyToMessageId !== null ? { reply_to_message_id: details.replyToMessageId } : {}),
      ...(details.trackingOptions !== null ? { tracking_options: details.trackingOptions } : {}),
      ...(details.customHeaders !== null && details.customHeaders.length > 0
        ? { custom_headers: details.customHeaders }
        : {}),
      ...(details.isPlaintext ? { is_plaintext: true } : {}),
      ...(details.sendAt !== null ? { send_at: details.sendAt } : {}),
    };
    return select === undefined ? draft : (selectFields(draft, select) as Draft);
  });
}

/** Creates the draft service (with the scheduled sends, which hold their message as a draft). */
export function createDraftService(deps: CoreDeps, parts: DraftParts): DraftService {
  const { db, clock, newId } = deps;
  const { grants, store, jobs, idempotency, prepare, build, accept, stage, providers } = parts;
  const now = () => unixSeconds(clock.now());
  const versions = createDraftVersions(deps, { store, prepare, providers });
  const { requireDraft, assertCurrent, compositionOf, writeVersion } = versions;
  const scheduled = createScheduledSends(deps, {
    grants,
    store,
    jobs,
    idempotency,
    versions,
    build,
    accept,
    stage,
    providers,
  });
  const { schedule, removeDraft, listScheduled, findScheduled, stopScheduled } = scheduled;

  const present = (records: DraftRecord[], select?: string) => presentDrafts(db, records, select);

  return {
    schedule,
    /** Creates a draft in the `drafts` folder (and in the thread of the message it answers). */
    async create(principal: Principal, input: CreateDraftInput): Promise<Draft> {
      const grant = await grants.require(principal, input.grant_id);
      const { grant_id: _grant, starred, send_at: sendAt, claim_token: claimToken, ...request } = input;
      const composition = await prepare(principal, grant, request, 'draft');
      await parts.sendGate.assertUnclaimed(composition, claimToken, principal);
      const built = await build(
        composition,
        `${newId()}@${grant.email.slice(grant.email.lastIndexOf('@') + 1)}`,
        clock.now(),
      );
      const record = await db.write((tx) =>
        writeVersion(tx, composition, built, undefined, {
          starred: starred ?? false,
          unread: false,
          sendAt: sendAt ?? null,
        }),
      );
      const [draft] = await present([record]);
      return draft!;
    },

    /** A page of drafts, newest first. */
    async list(principal: Principal, input: ListDraftsInput): Promise<{ data: Draft[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const conditions: (SQL | undefined)[] = [
        ...messageConditions(grant.id, input),
        eq(tables.draftDetails.grantId, grant.id),
      ];
      const after = decodeCursor(input.page_token, 2) as [number, number] | undefined;
      if (after) {
        const [date, seq] = after;
        conditions.push(
          or(lt(tables.messages.date, date), and(eq(tables.messages.date, date), lt(tables.messages.seq, seq))),
        );
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
      return {
        data: await present(page, input.select),
        ...(rows.length > limit && last ? { next_cursor: encodeCursor([last.row.date, last.row.seq]) } : {}),
      };
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
      const {
        grant_id: _grant,
        draft_id: _draft,
        starred,
        unread,
        send_at: sendAt,
        claim_token: claimToken,
        ...changes
      } = input;
      const composition = await compositionOf(principal, grant, record, changes, 'draft');
      await parts.sendGate.assertUnclaimed(composition, claimToken, principal);
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
    async send(principal: Principal, input: SendDraftInput, context: SendContext = {}): Promise<SendMessageResult> {
      const claim = idempotency.claim(
        principal.applicationId,
        context.idempotencyKey,
        'send_draft',
        input,
        context.onIdempotentReplay,
      );
      const replay = await idempotency.find(db.orm, claim);
      if (replay) return replay.response as SendResult;
      const grant = await grants.require(principal, input.grant_id);
      const record = await requireDraft(grant.id, input.draft_id);
      const prepared = await compositionOf(principal, grant, record, {}, 'send');
      const provenance = provenanceOf(principal, context);
      const gated = await parts.sendGate.check(principal, context, prepared, 'draft', {
        allowAutomatedReply: input.allow_automated_reply,
        claimToken: input.claim_token,
      });
      const { verdict, composition } = gated;
      await parts.sendGate.announce(gated);
      if (verdict.outcome === 'refuse') throw verdict.error;
      if (verdict.outcome === 'approve')
        return parts.sendGate.hold(composition, verdict.requests, {
          claim,
          provenance,
          principal,
          attempt: gated.attempt!,
          draft: heldDraft(record),
        });
      if (verdict.outcome === 'queue')
        return schedule(composition, { sendAt: verdict.sendAt, useDraft: true, claim, existing: record, provenance });
      if (record.details.sendAt !== null && record.details.sendAt > now()) {
        return schedule(composition, {
          sendAt: record.details.sendAt,
          useDraft: true,
          claim,
          existing: record,
          provenance,
        });
      }
      const review = verdict.monitored ? parts.sendGate.reviewAfter(composition, provenance) : undefined;
      const after = (tx: Tx, sentMessageId: string) => removeDraft(tx, record).then(() => review?.(tx, sentMessageId));
      const { headerMessageId } = record.details;
      const sent = await accept(composition, {
        claim,
        provenance,
        headerMessageId,
        before: (tx) => assertCurrent(tx, record),
        after,
      });
      await parts.sendGate.settle(gated);
      return sent;
    },

    heldHooks: (grantId, draftId, draftMessageId) =>
      heldHooks({ db, versions, removeDraft }, grantId, draftId, draftMessageId),

    listScheduled,
    findScheduled,
    stopScheduled,

    draftIdsOf: (messageIds) => draftIdsOf(db, messageIds),
    draftsOf: (messageIds) => draftsOf(db, messageIds),

    handlers: scheduled.handlers,
    runDueScheduled: scheduled.runDue,
    nextScheduledDue: scheduled.nextDue,
  };
}

/** Ids of the drafts among the given message rows (for threads' draft_ids). */
async function draftIdsOf(db: CoreDeps['db'], messageIds: string[]): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for (let index = 0; index < messageIds.length; index += 500) {
    const rows = await db.orm
      .select({ id: tables.draftDetails.id, messageId: tables.draftDetails.messageId })
      .from(tables.draftDetails)
      .where(inArray(tables.draftDetails.messageId, messageIds.slice(index, index + 500)));
    for (const row of rows) map.set(row.messageId, row.id);
  }
  return map;
}

/** The drafts whose current version is one of the given message rows, by row id (a thread's latest_draft_or_message). */
async function draftsOf(db: CoreDeps['db'], messageIds: string[]): Promise<Map<string, Draft>> {
  if (messageIds.length === 0) return new Map();
  const records = await db.orm
    .select({ details: tables.draftDetails, row: tables.messages })
    .from(tables.draftDetails)
    .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
    .where(inArray(tables.draftDetails.messageId, messageIds));
  const drafts = await presentDrafts(db, records);
  return new Map(records.map((record, index) => [record.row.id, drafts[index]!]));
}

/** The hooks of an approved draft's send (see {@link DraftService.heldHooks}). */
async function heldHooks(
  {
    db,
    versions,
    removeDraft,
  }: {
    db: CoreDeps['db'];
    versions: DraftVersions;
    removeDraft: (tx: Tx, record: DraftRecord) => Promise<void>;
  },
  grantId: string,
  draftId: string,
  draftMessageId: string | undefined,
): Promise<Pick<AcceptOptions, 'before' | 'after'>> {
  const record = await versions.findDraft(db.orm, grantId, draftId);
  if (!record || record.row.id !== draftMessageId)
    throw new StaleError(
      `Draft ${draftId} was edited or deleted after approval was asked; nothing was sent. Send it again to ask for a new approval.`,
    );
  return { before: (tx) => versions.assertCurrent(tx, record), after: (tx) => removeDraft(tx, record) };
}

/** The draft a held send came from: its id, its current version and its Message-ID. */
const heldDraft = (record: DraftRecord) => ({
  id: record.details.id,
  messageId: record.row.id,
  headerMessageId: record.details.headerMessageId,
});
