/**
 * @module grants/grant-reads
 * The grant service's reads (./grant-service.ts): the application's grants a page at a time, and one grant.
 */
import { and, asc, desc, eq, gte, inArray, lt, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { Grant, ListGrantsInput } from '../schemas/grants.js';
import { HOSTED_PROVIDER } from '../providers/index.js';
import { accountsOf, grantOf, toGrant } from './grant-mapper.js';
import { requireGrant, type GrantState } from './grant-state.js';

/** Lists the application's grants with offset pagination (as `GET /v3/grants` does in Nylas v3). */
export async function listGrants(
  { db }: GrantState,
  principal: Principal,
  input: ListGrantsInput,
): Promise<{ data: Grant[]; limit: number; offset: number }> {
  const limit = input.limit ?? 10;
  const offset = input.offset ?? 0;
  const conditions: SQL[] = [eq(tables.grants.applicationId, principal.applicationId)];
  // A key scoped to grants or workspaces lists only the grants it reaches (issue 36).
  if (principal.grantIds) conditions.push(inArray(tables.grants.id, [...principal.grantIds]));
  if (input.email) conditions.push(eq(tables.grants.email, input.email.trim().toLowerCase()));
  if (input.grant_status) conditions.push(eq(tables.grants.grantStatus, input.grant_status));
  if (input.provider)
    conditions.push(eq(tables.grants.provider, input.provider === 'hosted' ? HOSTED_PROVIDER : input.provider));
  if (input.workspace_id) conditions.push(eq(tables.grants.workspaceId, input.workspace_id));
  if (input.since !== undefined) conditions.push(gte(tables.grants.createdAt, input.since));
  if (input.before !== undefined) conditions.push(lt(tables.grants.createdAt, input.before));
  const column = input.sort_by === 'updated_at' ? tables.grants.updatedAt : tables.grants.createdAt;
  const order = input.order_by === 'asc' ? asc : desc;
  const rows = await db.orm
    .select()
    .from(tables.grants)
    .where(and(...conditions))
    .orderBy(order(column), order(tables.grants.id))
    .limit(limit)
    .offset(offset);
  const accounts = await accountsOf(db.orm, rows);
  return { data: rows.map((row) => toGrant(row, accounts.get(row.id))), limit, offset };
}

/** One grant by id or email address. */
export async function findGrant(state: GrantState, principal: Principal, ref: string): Promise<Grant> {
  return grantOf(state.db.orm, await requireGrant(state, principal, ref));
}
