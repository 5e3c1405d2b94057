/**
 * @module domains/domain-reads
 * The domain service's reads (./domain-service.ts): a page of the application's domains, and one domain.
 */
import { and, asc, eq, gt, or } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { Domain } from '../schemas/domains.js';
import { oneWithReputation, requireDomain, withReputation, type DomainState } from './domain-state.js';

/** A page of the application's domains, oldest first. */
export async function listDomains(
  state: DomainState,
  principal: Principal,
  input: { limit?: number | undefined; page_token?: string | undefined },
) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
  const rows = await state.db.orm
    .select()
    .from(tables.domains)
    .where(
      and(
        eq(tables.domains.applicationId, principal.applicationId),
        after
          ? or(
              gt(tables.domains.createdAt, after[0]),
              and(eq(tables.domains.createdAt, after[0]), gt(tables.domains.id, after[1])),
            )
          : undefined,
      ),
    )
    .orderBy(asc(tables.domains.createdAt), asc(tables.domains.id))
    .limit(limit + 1);
  const page = toPage(
    rows,
    limit,
    (row) => [row.createdAt, row.id],
    (row) => row,
  );
  return { ...page, data: await withReputation(state, page.data) };
}

/** One domain of the application. */
export async function findDomain(state: DomainState, principal: Principal, domainId: string): Promise<Domain> {
  return oneWithReputation(state, await requireDomain(state, principal, domainId));
}
