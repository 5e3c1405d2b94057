/**
 * @module oversight/paging
 * One page of an application's approvals or reviews, newest first: the grants the caller reaches (or the one it
 * names), a cursor of (created_at, id).
 */
import type { Principal } from '../access.js';
import type { GrantRow } from '../../storage/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';

/** What a page is asked with. */
export interface PageQuery {
  limit?: number | undefined;
  page_token?: string | undefined;
  grant_id?: string | undefined;
  status?: string | undefined;
}

/** Reads `limit` rows matching the filters, before the cursor's row when given. */
export type RowsReader<Row> = (
  filters: { grantIds: readonly string[] | undefined; status: string | undefined },
  before: { createdAt: number; id: string } | undefined,
  limit: number,
) => Promise<Row[]>;

/** One page of rows as wire items, with `next_cursor` when there are more. */
export async function pageOf<Row extends { createdAt: number; id: string }, Item>(
  principal: Principal,
  input: PageQuery,
  requireGrant: (principal: Principal, ref: string) => Promise<GrantRow>,
  read: RowsReader<Row>,
  toItem: (row: Row) => Item,
): Promise<{ data: Item[]; next_cursor?: string }> {
  const grantIds = input.grant_id
    ? [(await requireGrant(principal, input.grant_id)).id]
    : principal.grantIds
      ? [...principal.grantIds]
      : undefined;
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
  const rows = await read(
    { grantIds, status: input.status },
    after ? { createdAt: after[0], id: after[1] } : undefined,
    limit + 1,
  );
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    data: shown.map(toItem),
    ...(rows.length > limit && last ? { next_cursor: encodeCursor([last.createdAt, last.id]) } : {}),
  };
}
