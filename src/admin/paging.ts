/**
 * @module admin/paging
 * The keyset page of an application's policies, rules or lists, or of a list's items: oldest first (`created_at`,
 * then id), `limit` rows, and the cursor of the next page.
 */
import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { tables, type Executor } from '../../storage/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';

/** The columns a page is ordered by. */
export interface PagedColumns {
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
}

/** Where a page of the rows within `scope` starts, and how many rows to fetch (one more than the page). */
export function pageQuery(
  columns: PagedColumns,
  scope: SQL,
  input: { limit?: number | undefined; page_token?: string | undefined },
) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
  const conditions: SQL[] = [scope];
  if (after)
    conditions.push(
      or(gt(columns.createdAt, after[0]), and(eq(columns.createdAt, after[0]), gt(columns.id, after[1])))!,
    );
  return { where: and(...conditions)!, orderBy: [asc(columns.createdAt), asc(columns.id)], fetch: limit + 1, limit };
}

/** The page of rows fetched with {@link pageQuery}. */
export function pageOfRows<Row extends { createdAt: number; id: string }, Item>(
  rows: Row[],
  limit: number,
  map: (row: Row) => Item,
) {
  return toPage(rows, limit, (row) => [row.createdAt, row.id], map);
}

/** A page of an application's policies, rules or lists, mapped to wire form. */
export async function pageOfOwned<T extends typeof tables.policies | typeof tables.rules | typeof tables.lists, Item>(
  db: Executor,
  table: T,
  applicationId: string,
  input: { limit?: number | undefined; page_token?: string | undefined },
  map: (row: T['$inferSelect']) => Item,
) {
  const owned = table;
  const page = pageQuery(owned, eq(owned.applicationId, applicationId), input);
  const rows = (await db
    .select()
    .from(owned)
    .where(page.where)
    .orderBy(...page.orderBy)
    .limit(page.fetch)) as T['$inferSelect'][];
  return pageOfRows(rows, page.limit, map);
}
