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
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import { unixSeconds } from '../time.js';
import type { SendReview } from '../schemas/oversight.js';
import type { SendReviewService } from './contracts.js';
import { reviewRows, type SendReviewRow } from './approval-store.js';

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
    async list(principal, input) {
      const grantIds = input.grant_id
        ? [(await parts.requireGrant(principal, input.grant_id)).id]
        : principal.grantIds
          ? [...principal.grantIds]
          : undefined;
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const rows = await reviewRows(
        db,
        principal.applicationId,
        { grantIds, status: input.status },
        after ? { createdAt: after[0], id: after[1] } : undefined,
        limit + 1,
      );
      const shown = rows.slice(0, limit);
      const last = shown.at(-1);
      return {
        data: shown.map(toSendReview),
        ...(rows.length > limit && last ? { next_cursor: encodeCursor([last.createdAt, last.id]) } : {}),
      };
    },

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
