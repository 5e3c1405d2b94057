/**
 * @module oversight/approvals
 * The approval queue (issue 37, item 2): sends that wait for a person, read and decided through `/v3/approvals` by a
 * key with `approvals.decide` that is not the key that asked. Approving releases the exact message held (the
 * outbound area's `release`, given at construction); rejecting or expiring drops it. Every decision is one
 * conditional state change with its `approval.decided` outbox event, so two deciders never both win.
 */
import type { Principal } from '../access.js';
import type { CoreDeps, Notifier } from '../ports/index.js';
import { releaseBlobs, type GrantRow, type Tx } from '../../storage/index.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import { unixSeconds } from '../time.js';
import type { Approval } from '../schemas/oversight.js';
import type { ApprovalService } from './contracts.js';
import {
  approvalById,
  approvalRow,
  approvalRows,
  expiredApprovals,
  moveApproval,
  type ApprovalRow,
} from './approval-store.js';
import { mailReviewers, readReviewToken } from './review-links.js';
import { pageOf } from './paging.js';
import type { TokenSigner } from '../deliverability/contracts.js';
import { EXCEPTED_HEADERS } from './held-mime.js';

/** Sends an approved message: the outbound area's release of a held send. Resolves the sent copy's id. */
export type ReleaseHeld = (row: ApprovalRow) => Promise<{ messageId: string }>;

/** Parts of the approval queue. */
export interface ApprovalParts {
  /** A grant the principal may reach, by id or address (404 otherwise). */
  requireGrant: (principal: Principal, ref: string) => Promise<GrantRow>;
  release: ReleaseHeld;
  /** The installation's signer (review links) and the service's own mail (the reviewers' notice). */
  signer: () => Promise<TokenSigner>;
  notifier: Notifier;
}

/** Expired approvals handled in one pass at most. */
const EXPIRE_BATCH = 200;

/** The wire form of an approval row. Pure. */
export function toApproval(row: ApprovalRow): Approval {
  const held = row.composition;
  return {
    id: row.id,
    object: 'approval',
    grant_id: row.grantId,
    status: row.status as Approval['status'],
    kind: row.kind as Approval['kind'],
    draft_id: row.draftId,
    checks: row.checks,
    sha256: row.sha256,
    excepted_headers: [...EXCEPTED_HEADERS],
    message_id_header: row.headerMessageId,
    subject: row.subject,
    from: [held.from],
    to: held.to,
    cc: held.cc,
    bcc: held.bcc,
    body: held.body,
    is_plaintext: held.isPlaintext,
    attachments: held.attachments.map((file) => ({
      filename: file.filename,
      content_type: file.contentType,
      size: file.size,
    })),
    reply_to_message_id: row.replyToMessageId,
    thread_id: row.threadId,
    requested_by: {
      api_key_id: row.requestedByKeyId,
      face: row.provenance?.face ?? null,
      tool: row.provenance?.tool ?? null,
    },
    decided_by:
      row.decidedByKeyId !== null || row.decidedByName !== null
        ? { api_key_id: row.decidedByKeyId, name: row.decidedByName }
        : null,
    decision_reason: row.decisionReason,
    sent_message_id: row.sentMessageId,
    error: row.error,
    expires_at: row.expiresAt,
    decided_at: row.decidedAt,
    created_at: row.createdAt,
  };
}

/** The blobs a held send keeps (its MIME and its attachments), released once it is decided. */
export function heldBlobs(row: Pick<ApprovalRow, 'rawHash' | 'composition'>): string[] {
  return [row.rawHash, ...row.composition.attachments.map((file) => file.blobHash)];
}

/** Creates the approval queue. */
export function createApprovals(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'config' | 'logger'>,
  parts: ApprovalParts,
): ApprovalService {
  const { db, clock, newId } = deps;
  const record = eventRecorder({ newId, clock });

  /** The approval, when the principal may see it (an approval of a grant outside its scope is a 404). */
  async function visible(principal: Principal, id: string): Promise<ApprovalRow> {
    const row = await approvalRow(db, principal.applicationId, id);
    if (!row || (principal.grantIds && !principal.grantIds.has(row.grantId))) throw notFound('Approval', id);
    return row;
  }

  async function decided(tx: Tx, row: ApprovalRow): Promise<void> {
    const current = (await approvalRow(tx, row.applicationId, row.id))!;
    await record(tx, {
      applicationId: row.applicationId,
      grantId: row.grantId,
      type: 'approval.decided',
      objectId: row.id,
      object: toApproval(current),
    });
  }

  /** Closes a pending approval (rejected or expired) and drops what it held; false when it was no longer pending. */
  async function close(row: ApprovalRow, status: 'rejected' | 'expired', changes: Partial<ApprovalRow>) {
    const at = unixSeconds(clock.now());
    return db.write(async (tx) => {
      if (!(await moveApproval(tx, row.id, 'pending', { status, decidedAt: at, updatedAt: at, ...changes })))
        return false;
      await releaseBlobs(tx, heldBlobs(row));
      await decided(tx, row);
      return true;
    });
  }

  return {
    list: (principal, input) =>
      pageOf(
        principal,
        input,
        parts.requireGrant,
        (filters, before, limit) => approvalRows(db, principal.applicationId, filters, before, limit),
        toApproval,
      ),

    async find(principal, approvalId) {
      return toApproval(await visible(principal, approvalId));
    },

    async decide(principal, input, decision, reviewer) {
      const row = await visible(principal, input.approval_id);
      if (row.requestedByKeyId !== null && principal.key?.id === row.requestedByKeyId)
        throw new AppError(
          'forbidden',
          'A send cannot be approved or rejected with the key that asked for it: use another key that has the permission approvals.decide.',
          { permission: 'approvals.decide' },
        );
      const at = unixSeconds(clock.now());
      if (row.status === 'pending' && row.expiresAt <= at) {
        await close(row, 'expired', {});
        throw new AppError('conflict', `Approval ${row.id} expired at ${row.expiresAt}; send the message again.`);
      }
      if (row.status !== 'pending')
        throw new AppError('conflict', `Approval ${row.id} is ${row.status} already; only a pending one is decided.`);
      const by = {
        decidedByKeyId: principal.key?.id ?? null,
        decidedByName: reviewer ?? principal.key?.name ?? principal.via,
      };
      const reason = input.reason ?? null;
      if (decision === 'reject') {
        if (!(await close(row, 'rejected', { ...by, decisionReason: reason })))
          throw new AppError('conflict', `Approval ${row.id} was decided meanwhile.`);
        return toApproval((await approvalRow(db, row.applicationId, row.id))!);
      }
      const approved = await db.write(async (tx) => {
        if (
          !(await moveApproval(tx, row.id, 'pending', {
            status: 'approved',
            decidedAt: at,
            updatedAt: at,
            decisionReason: reason,
            ...by,
          }))
        )
          return false;
        await decided(tx, row);
        return true;
      });
      if (!approved) throw new AppError('conflict', `Approval ${row.id} was decided meanwhile.`);
      const current = (await approvalRow(db, row.applicationId, row.id))!;
      try {
        const { messageId } = await parts.release(current);
        await db.write(async (tx) => {
          await moveApproval(tx, row.id, 'approved', { status: 'sent', sentMessageId: messageId, updatedAt: at });
          await releaseBlobs(tx, heldBlobs(row));
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await db.write(async (tx) => {
          await moveApproval(tx, row.id, 'approved', {
            status: 'failed',
            error: message.slice(0, 1000),
            updatedAt: at,
          });
          await releaseBlobs(tx, heldBlobs(row));
        });
      }
      return toApproval((await approvalRow(db, row.applicationId, row.id))!);
    },

    async notify(row, reviewers) {
      if (reviewers.length === 0) return;
      try {
        await mailReviewers(
          { signer: parts.signer, notifier: parts.notifier, publicUrl: deps.config.publicUrl },
          row,
          reviewers,
        );
      } catch (error) {
        deps.logger.warn('approval: the reviewers could not be mailed', {
          approval_id: row.id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    },

    async byReviewToken(token) {
      const named = readReviewToken(await parts.signer(), token);
      if (!named) return undefined;
      const row = await approvalById(db, named.approvalId);
      return row
        ? { approval: toApproval(row), reviewer: named.reviewer, applicationId: row.applicationId }
        : undefined;
    },

    async decideByReviewToken(token, decision, reason) {
      const named = readReviewToken(await parts.signer(), token);
      const row = named ? await approvalById(db, named.approvalId) : undefined;
      if (!named || !row) throw new AppError('not_found', 'This review link is not valid.');
      const principal: Principal = { applicationId: row.applicationId, via: 'local' };
      return this.decide(principal, { approval_id: row.id, ...(reason ? { reason } : {}) }, decision, named.reviewer);
    },

    async expire() {
      const rows = await expiredApprovals(db, unixSeconds(clock.now()), EXPIRE_BATCH);
      const expired: { id: string; applicationId: string; grantId: string }[] = [];
      for (const row of rows)
        if (await close(row, 'expired', {}))
          expired.push({ id: row.id, applicationId: row.applicationId, grantId: row.grantId });
      return expired;
    },
  };
}
