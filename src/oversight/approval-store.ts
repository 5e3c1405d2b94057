/**
 * @module oversight/approval-store
 * The approval queue's rows: a page of an application's approvals, one by id, the pending ones past their expiry,
 * and the state changes (each conditional on the state it leaves, so two deciders never both win).
 */
import { and, desc, eq, inArray, lt, lte, or, type SQL } from 'drizzle-orm';
import { tables, type Database, type Tx } from '../../storage/index.js';

const { approvals, sendReviews } = tables;

export type { ApprovalRow } from './contracts.js';
import type { ApprovalRow } from './contracts.js';
export type NewApprovalRow = typeof approvals.$inferInsert;
export type SendReviewRow = typeof sendReviews.$inferSelect;

/** A page of approvals newest first, before `beforeCreated`/`beforeId` when given. */
export function approvalRows(
  db: Database,
  applicationId: string,
  filters: { grantIds?: readonly string[] | undefined; status?: string | undefined },
  before: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<ApprovalRow[]> {
  const conditions: (SQL | undefined)[] = [eq(approvals.applicationId, applicationId)];
  if (filters.grantIds) conditions.push(inArray(approvals.grantId, [...filters.grantIds]));
  if (filters.status) conditions.push(eq(approvals.status, filters.status));
  if (before)
    conditions.push(
      or(
        lt(approvals.createdAt, before.createdAt),
        and(eq(approvals.createdAt, before.createdAt), lt(approvals.id, before.id)),
      ),
    );
  return db.orm
    .select()
    .from(approvals)
    .where(and(...conditions))
    .orderBy(desc(approvals.createdAt), desc(approvals.id))
    .limit(limit);
}

export async function approvalRow(db: Database | Tx, applicationId: string, id: string) {
  const executor = 'orm' in db ? db.orm : db;
  const [row] = await executor
    .select()
    .from(approvals)
    .where(and(eq(approvals.applicationId, applicationId), eq(approvals.id, id)))
    .limit(1);
  return row;
}

/** Moves an approval from `from` to the state of `changes`; whether it was still in `from`. */
export async function moveApproval(
  tx: Tx,
  id: string,
  from: string,
  changes: Partial<NewApprovalRow>,
): Promise<boolean> {
  const moved = await tx
    .update(approvals)
    .set(changes)
    .where(and(eq(approvals.id, id), eq(approvals.status, from)))
    .returning({ id: approvals.id });
  return moved.length > 0;
}

/** Pending approvals whose expiry has passed (up to `limit`). */
export function expiredApprovals(db: Database, nowSeconds: number, limit: number): Promise<ApprovalRow[]> {
  return db.orm
    .select()
    .from(approvals)
    .where(and(eq(approvals.status, 'pending'), lte(approvals.expiresAt, nowSeconds)))
    .limit(limit);
}

/** A page of send reviews newest first. */
export function reviewRows(
  db: Database,
  applicationId: string,
  filters: { grantIds?: readonly string[] | undefined; status?: string | undefined },
  before: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<SendReviewRow[]> {
  const conditions: (SQL | undefined)[] = [eq(sendReviews.applicationId, applicationId)];
  if (filters.grantIds) conditions.push(inArray(sendReviews.grantId, [...filters.grantIds]));
  if (filters.status) conditions.push(eq(sendReviews.status, filters.status));
  if (before)
    conditions.push(
      or(
        lt(sendReviews.createdAt, before.createdAt),
        and(eq(sendReviews.createdAt, before.createdAt), lt(sendReviews.id, before.id)),
      ),
    );
  return db.orm
    .select()
    .from(sendReviews)
    .where(and(...conditions))
    .orderBy(desc(sendReviews.createdAt), desc(sendReviews.id))
    .limit(limit);
}
