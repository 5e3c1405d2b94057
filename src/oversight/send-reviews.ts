/**
 * @module oversight/send-reviews
 * Sends made under `monitored` (issue 37, item 1): they went out, and each is listed for a person to mark `ok` or
 * `flagged` afterwards (`/v3/send-reviews`).
 */
import { and, eq } from 'drizzle-orm';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { tables, type GrantRow } from '../../storage/index.js';
import { notFound } from '../errors.js';
import { unixSeconds } from '../time.js';
import type { SendReview } from '../schemas/oversight.js';
import type { SendReviewService } from './contracts.js';
import { reviewRows, type SendReviewRow } from './approval-store.js';
import { pageOf } from './paging.js';

/** The wire form of a review row. Pure. */
export function toSendReview(row: SendReviewRow): SendReview {
  return {
    id: row.id,
    object: 'send_review',
    grant_id: row.grantId,
    message_id: row.messageId,
    subject: row.subject,
    recipients: row.recipients,
    status: row.status as SendReview['status'],
    note: row.note,
    requested_by: { api_key_id: row.provenance?.api_key_id ?? null, face: row.provenance?.face ?? null },
    reviewed_at: row.reviewedAt,
    created_at: row.createdAt,
  };
}

/** Creates the review list. */
export function createSendReviews(
  deps: Pick<CoreDeps, 'db' | 'clock'>,
  parts: { requireGrant: (principal: Principal, ref: string) => Promise<GrantRow> },
): SendReviewService {
  const { db, clock } = deps;
  return {
    list: (principal, input) =>
      pageOf(
        principal,
        input,
        parts.requireGrant,
        (filters, before, limit) => reviewRows(db, principal.applicationId, filters, before, limit),
        toSendReview,
      ),

    async mark(principal, input) {
      const { sendReviews } = tables;
      const where = and(eq(sendReviews.applicationId, principal.applicationId), eq(sendReviews.id, input.review_id));
      const [row] = await db.orm.select().from(sendReviews).where(where).limit(1);
      if (!row || (principal.grantIds && !principal.grantIds.has(row.grantId)))
        throw notFound('Send review', input.review_id);
      const [updated] = await db.write((tx) =>
        tx
          .update(sendReviews)
          .set({
            status: input.status,
            note: input.note ?? row.note,
            reviewedByKeyId: principal.key?.id ?? null,
            reviewedAt: unixSeconds(clock.now()),
          })
          .where(where)
          .returning(),
      );
      return toSendReview(updated!);
    },
  };
}
