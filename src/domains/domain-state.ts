/**
 * @module domains/domain-state
 * What the domain service's reads (./domain-reads.ts), writes (./domain-writes.ts) and verification
 * (./domain-verification.ts) share: the state `createDomainService` makes, rows in wire form with their reputation,
 * a domain of the calling application, and what makes an address a trial domain.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type Orm, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, notFound } from '../errors.js';
import type { eventRecorder } from '../outbox/index.js';
import type { Domain } from '../schemas/domains.js';
import { toDomain, type DomainRow } from './domain-mapper.js';
import { domainWindowTotals, reputationOf } from './domain-reputation.js';

/** What the functions of the domain service share, made once by `createDomainService`. */
export interface DomainState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  randomBytes: CoreDeps['randomBytes'];
  dns: CoreDeps['dns'];
  config: CoreDeps['config'];
  secrets: CoreDeps['secrets'];
  /** The clock's time in unix seconds. */
  now: () => number;
  record: ReturnType<typeof eventRecorder>;
  /** The days of the reputation window (`config.deliverability.domain.pauseWindowDays`). */
  windowDays: number;
}

/** Rows to the wire, each with its reputation over the window (one grouped read). */
export async function withReputation(
  state: DomainState,
  rows: DomainRow[],
  tx: Tx | Orm = state.db.orm,
): Promise<Domain[]> {
  const { clock, windowDays } = state;
  const totals = await domainWindowTotals(
    tx,
    rows.map((row) => row.id),
    clock.now().getTime(),
    windowDays,
  );
  const zero = { sent: 0, hardBounces: 0, softBounces: 0, complaints: 0 };
  return rows.map((row) => toDomain(row, reputationOf(totals.get(row.id) ?? zero, windowDays)));
}

export const oneWithReputation = async (state: DomainState, row: DomainRow, tx?: Tx): Promise<Domain> =>
  (await withReputation(state, [row], tx))[0]!;

/** `<label>.<AGENTPOST_TRIAL_DOMAIN>`: one label under the service's own domain. */
export function isTrialAddress(state: DomainState, address: string): boolean {
  const suffix = `.${state.config.trialDomain}`;
  return address.endsWith(suffix) && !address.slice(0, -suffix.length).includes('.');
}

/** Deeper names under the trial domain would let one application squat below another's trial domain. */
export function checkTrialDepth(state: DomainState, address: string): void {
  const { config } = state;
  if (address.endsWith(`.${config.trialDomain}`) && !isTrialAddress(state, address)) {
    throw new AppError(
      'invalid_request',
      `domain_address: a trial domain is one label under ${config.trialDomain}, such as my-team.${config.trialDomain}.`,
      { field: 'domain_address' },
    );
  }
}

export async function requireDomain(state: DomainState, principal: Principal, domainId: string): Promise<DomainRow> {
  const row = await state.db.orm.query.domains.findFirst({
    where: and(eq(tables.domains.id, domainId), eq(tables.domains.applicationId, principal.applicationId)),
  });
  if (!row) throw notFound('Domain', domainId);
  return row;
}
