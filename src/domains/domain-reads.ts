/**
 * @module domains/domain-reads
 * The domain service's reads (./domain-service.ts): a page of the application's domains, one domain, and a domain's
 * sending day by day.
 */
import { and, asc, eq, gt, or } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { Domain, DomainSendingDays, ListDomainSendingDaysInput } from '../schemas/domains.js';
import { unixDayOfMs } from '../time.js';
import { domainDays } from './domain-sends-store.js';
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

/** Days a sending-days read covers when not told. */
const DEFAULT_SENDING_DAYS = 30;

/**
 * A domain's sending per UTC day over the last `days` days (today included), oldest first, every day present.
 * The rates are of that day's own counts; a resume of the domain's sending zeroes the counters of its window, so
 * the days before a resume read as zeros.
 */
export async function sendingDays(
  state: DomainState,
  principal: Principal,
  input: ListDomainSendingDaysInput,
): Promise<DomainSendingDays> {
  const domain = await requireDomain(state, principal, input.domain_id);
  const today = unixDayOfMs(state.clock.now().getTime());
  const from = today - (input.days ?? DEFAULT_SENDING_DAYS) + 1;
  const rows = new Map((await domainDays(state.db.orm, domain.id, from, today)).map((row) => [row.day, row]));
  const rate = (count: number, sent: number) => (sent > 0 ? Math.round((count / sent) * 10_000) / 10_000 : 0);
  const data = [];
  for (let day = from; day <= today; day++) {
    const row = rows.get(day);
    const sent = row?.sent ?? 0;
    data.push({
      day: new Date(day * 86_400_000).toISOString().slice(0, 10),
      sent,
      hard_bounces: row?.hardBounces ?? 0,
      soft_bounces: row?.softBounces ?? 0,
      complaints: row?.complaints ?? 0,
      bounce_rate: rate(row?.hardBounces ?? 0, sent),
      complaint_rate: rate(row?.complaints ?? 0, sent),
    });
  }
  return { data };
}
