/**
 * @module domains/domain-reputation
 * The reputation of a sending domain (issue 23 part 3): what receiving providers judge is the domain, so the bounce
 * and complaint rates of everything sent from a registered domain (all its grants and its transactional sends) are
 * kept per domain and UTC day beside the grant's, over the same rolling window, and judged on the domain's totals.
 *
 * - Counting: every accepted send adds its recipients to the domain's day (`domain_daily_sends.sent` for warm-up,
 *   `rated_sent` for the rates: ./send-gates.ts); every bounce or complaint recorded against a message sent from the
 *   domain (the domain of its From) adds to the same day ({@link recordDomainReport}, from sending health's listener).
 * - Pausing: when the domain's hard-bounce or complaint rate reaches its threshold (`AGENTPOST_DOMAIN_PAUSE_*`, each
 *   defaulting to the grant's `AGENTPOST_PAUSE_*`), the domain's sending is paused in the report's transaction
 *   (`domains.sending_paused_at` and reason, a `domain_sending_state_changes` row with actor `service`) and a
 *   `domain.updated` event goes out. Every send from the domain is then refused with 403 `sending_paused` naming the
 *   domain (./sending-health.ts's gate); grants on other domains send on.
 * - Resuming: `PUT /v3/admin/domains/{id}` with `{"sending": {"status": "active"}}` ({@link resumeDomainSending}):
 *   the pause is cleared, the rate counters of the window are set to zero (the warm-up count stays), and the change is
 *   recorded with the request id; `domain.updated` goes out.
 */
import { and, eq, gte, isNotNull, isNull } from 'drizzle-orm';
import { tables, type Orm, type Tx } from '../../storage/index.js';
import type { IdGenerator } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { Domain } from '../schemas/domains.js';
import type { WindowTotals } from '../deliverability/contracts.js';
import { windowStartDay } from '../time.js';

// The daily counters of a domain (domain_daily_sends) are read and written in ./domain-sends-store.ts.
export { domainWindowTotals, recordDomainReport } from './domain-sends-store.js';

type DomainRow = typeof tables.domains.$inferSelect;

/** How a caller resumes a paused domain, as error messages and docs say it. */
export const DOMAIN_RESUME_HINT = 'PUT /v3/admin/domains/{domain_id} with {"sending": {"status": "active"}}';

/** The domain's `reputation` on the wire. */
export type DomainReputation = NonNullable<Domain['reputation']>;

/** The domain of an address (after the last `@`), lower-cased. */
export const domainOfAddress = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** The wire `sending` of a domain row. */
export function domainSendingOf(row: Pick<DomainRow, 'sendingPausedAt' | 'sendingPausedReason'>): Domain['sending'] {
  if (row.sendingPausedAt === null) return { status: 'active' };
  return { status: 'paused', reason: row.sendingPausedReason ?? 'sending is paused', paused_at: row.sendingPausedAt };
}

/** The wire `reputation` of window totals. Pure. */
export function reputationOf(totals: WindowTotals & { softBounces: number }, windowDays: number): DomainReputation {
  const rate = (count: number) => (totals.sent === 0 ? 0 : Number((count / totals.sent).toFixed(6)));
  return {
    sent: totals.sent,
    hard_bounces: totals.hardBounces,
    soft_bounces: totals.softBounces,
    complaints: totals.complaints,
    bounce_rate: rate(totals.hardBounces),
    complaint_rate: rate(totals.complaints),
    window_days: windowDays,
  };
}

/** The registered domain of an application a From address is on, if any (inside the caller's transaction). */
export async function sendingDomainOf(
  tx: Orm | Tx,
  applicationId: string,
  from: string,
): Promise<DomainRow | undefined> {
  const [row] = await tx
    .select()
    .from(tables.domains)
    .where(
      and(eq(tables.domains.domainAddress, domainOfAddress(from)), eq(tables.domains.applicationId, applicationId)),
    )
    .limit(1);
  return row;
}

/** Pauses a domain's sending unless it is paused already, and records the change. Returns the updated row, or undefined. */
export async function pauseDomainSending(
  tx: Tx,
  newId: IdGenerator,
  domainId: string,
  reason: string,
  at: number,
): Promise<DomainRow | undefined> {
  const [row] = await tx
    .update(tables.domains)
    .set({ sendingPausedAt: at, sendingPausedReason: reason, updatedAt: at })
    .where(and(eq(tables.domains.id, domainId), isNull(tables.domains.sendingPausedAt)))
    .returning();
  if (row)
    await tx
      .insert(tables.domainSendingStateChanges)
      .values({ id: newId(), domainId, state: 'paused', reason, actor: 'service', at });
  return row;
}

/**
 * Resumes a paused domain's sending in the caller's transaction: clears the pause, sets the rate counters of the
 * window ending today to zero (the warm-up count `sent` stays) and records the change with `actor`. Returns the updated
 * row, or undefined when the domain was not paused.
 */
export async function resumeDomainSending(
  tx: Tx,
  newId: IdGenerator,
  domainId: string,
  options: { actor: string; now: Date; windowDays: number },
): Promise<DomainRow | undefined> {
  const at = Math.floor(options.now.getTime() / 1000);
  const [row] = await tx
    .update(tables.domains)
    .set({ sendingPausedAt: null, sendingPausedReason: null, updatedAt: at })
    .where(and(eq(tables.domains.id, domainId), isNotNull(tables.domains.sendingPausedAt)))
    .returning();
  if (!row) return undefined;
  await tx
    .update(tables.domainDailySends)
    .set({ ratedSent: 0, hardBounces: 0, softBounces: 0, complaints: 0 })
    .where(
      and(
        eq(tables.domainDailySends.domainId, domainId),
        gte(tables.domainDailySends.day, windowStartDay(options.now.getTime(), options.windowDays)),
      ),
    );
  await tx
    .insert(tables.domainSendingStateChanges)
    .values({ id: newId(), domainId, state: 'active', reason: 'resumed through the API', actor: options.actor, at });
  return row;
}

/** The refusal of a send from a paused domain (403 `sending_paused`, naming the domain). */
export function domainPausedError(
  row: Pick<DomainRow, 'id' | 'domainAddress' | 'sendingPausedAt' | 'sendingPausedReason'>,
): AppError {
  const reason = row.sendingPausedReason ?? 'sending is paused';
  const at = row.sendingPausedAt ?? 0;
  return new AppError(
    'forbidden',
    `Sending from the domain ${row.domainAddress} is paused since ${new Date(at * 1000).toISOString()}: the domain's ${reason}. Every mailbox on ${row.domainAddress} is paused; other domains are not. Nothing was sent. Remove the addresses that bounce or complain, then resume the domain with ${DOMAIN_RESUME_HINT.replace('{domain_id}', row.id)}.`,
    { reason, paused_at: at, domain: row.domainAddress, domain_id: row.id },
    { type: 'sending_paused' },
  );
}
