/**
 * @module outbound/draft-versions
 * The versions of a draft. A draft is a message in the `drafts` folder (and in its thread) plus a `draft_details`
 * row with its stable id and the fields only sending uses. A new version is a new `messages` row the details
 * point to, written in the caller's transaction with the old row dropped (the draft id and Message-ID stay, so it
 * stays in its thread). A transaction that acts on a draft first checks it still holds the version it read.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { loadAttachments, loadBody, type MailStore } from '../messages/index.js';
import { createProviders, type Providers } from '../providers/index.js';
import { ownCopy } from './composition.js';
import type { Built, Composer, ComposeRequest, Composition, DraftRecord, DraftVersions } from './contracts.js';

type DetailsRow = typeof tables.draftDetails.$inferSelect;

/** Thrown inside a sending transaction when the draft or schedule changed meanwhile: nothing is written. */
export class StaleError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** Only the fields the caller gave. */
function given<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Parts the draft versions use. */
export interface DraftVersionParts {
  store: MailStore;
  prepare: Composer['prepare'];
  /** Told of each version written (a connected account keeps it on its server); default: hosted (nothing to tell). */
  providers?: Providers | undefined;
}

/** Creates the draft versions: find, check, compose from and write. */
export function createDraftVersions(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId'>,
  { store, prepare, providers = createProviders() }: DraftVersionParts,
): DraftVersions {
  const { db, clock, newId } = deps;
  const now = () => unixSeconds(clock.now());

  /** A draft with its current version, or undefined (`executor`: the database or a transaction). */
  async function findDraft(
    executor: Pick<typeof db.orm, 'select'>,
    grantId: string,
    draftId: string,
  ): Promise<DraftRecord | undefined> {
    const [found] = await executor
      .select({ details: tables.draftDetails, row: tables.messages })
      .from(tables.draftDetails)
      .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
      .where(and(eq(tables.draftDetails.grantId, grantId), eq(tables.draftDetails.id, draftId)))
      .limit(1);
    return found;
  }

  /** The draft, or a 404. */
  async function requireDraft(grantId: string, draftId: string): Promise<DraftRecord> {
    const record = await findDraft(db.orm, grantId, draftId);
    if (!record) throw notFound('Draft', draftId);
    return record;
  }

  /** Throws {@link StaleError} unless the draft's current version is still `record.row` (inside a transaction). */
  async function assertCurrent(tx: Tx, record: DraftRecord): Promise<void> {
    const current = await findDraft(tx, record.details.grantId, record.details.id);
    if (!current || current.row.id !== record.row.id)
      throw new StaleError(`Draft ${record.details.id} changed or was deleted meanwhile; read it again and retry.`);
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
      metadata: Object.fromEntries(
        Object.entries(row.metadata).map(([key, value]) => [
          key,
          typeof value === 'string' ? value : JSON.stringify(value),
        ]),
      ),
    };
  }

  /**
   * The composition of a draft, with `changes` applied. Threading stays as stored unless `changes` names another
   * message to answer (the message first answered may have been deleted since; its headers are kept).
   */
  async function compositionOf(
    principal: Principal,
    grant: GrantRow,
    record: DraftRecord,
    changes: Partial<ComposeRequest>,
    mode: 'send' | 'draft',
  ): Promise<Composition> {
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
    const copy = await store.insert(
      tx,
      ownCopy(composition, built, { folders: ['drafts'], unread: flags.unread, date: now(), envelopeFrom: null }),
    );
    await tx
      .delete(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, 'message.created'), eq(tables.outboxEvents.objectId, copy.row.id)));
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
      [details] = (await tx
        .update(tables.draftDetails)
        .set(values)
        .where(eq(tables.draftDetails.id, previous.details.id))
        .returning()) as [DetailsRow];
      await store.destroy(tx, [previous.row]);
    } else {
      [details] = (await tx
        .insert(tables.draftDetails)
        .values({ id: newId(), ...values, createdAt: now() })
        .returning()) as [DetailsRow];
    }
    await providers.of(grant).draftSaved(tx, grant, {
      draftId: details.id,
      grantId: grant.id,
      messageId: row.id,
      headerMessageId: details.headerMessageId,
    });
    return { details, row: row };
  }

  return { findDraft, requireDraft, assertCurrent, compositionOf, writeVersion };
}
