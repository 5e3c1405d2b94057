/**
 * @module domains/domain-writes
 * The domain service's writes (./domain-service.ts): register, change and remove a domain, and register the domains
 * of `AGENTPOST_DOMAINS` as verified.
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import type { Domain } from '../schemas/domains.js';
import { resumeDomainSending } from './domain-reputation.js';
import { checkTrialDepth, isTrialAddress, oneWithReputation, requireDomain, type DomainState } from './domain-state.js';

/**
 * Registers a domain. `*.<AGENTPOST_TRIAL_DOMAIN>` is a trial domain, usable at once; any other is custom
 * and waits for DNS verification. An address can belong to one application only (409).
 */
export async function createDomain(
  state: DomainState,
  principal: Principal,
  input: { name: string; domain_address: string; warm_up?: boolean | undefined },
): Promise<Domain> {
  const { db, config, newId, randomBytes } = state;
  const address = input.domain_address.toLowerCase();
  checkTrialDepth(state, address);
  const branded = isTrialAddress(state, address);
  const at = state.now();
  // Warm-up by default for a custom domain (unless the schedule is `off`); a trial domain is established.
  const warmUp = input.warm_up ?? (!branded && config.deliverability.warmUpSchedule !== 'off');
  return db
    .write(async (tx) => {
      const taken = await tx.query.domains.findFirst({ where: eq(tables.domains.domainAddress, address) });
      if (taken)
        throw new AppError('conflict', `domain_address: ${address} is already registered.`, {
          field: 'domain_address',
        });
      const [row] = await tx
        .insert(tables.domains)
        .values({
          id: newId(),
          applicationId: principal.applicationId,
          name: input.name,
          domainAddress: address,
          branded,
          verifiedOwnership: branded,
          verifiedMx: branded,
          verifiedSpf: branded,
          verifiedDkim: branded,
          verificationToken: randomBytes(18).toString('base64url'),
          ...(warmUp ? { warmUp: true, warmUpStartedAt: at } : {}),
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      return oneWithReputation(state, row!, tx);
    })
    .catch((error: unknown) => {
      // Another process registered the same address between our check and our insert.
      if (String((error as { cause?: unknown })?.cause ?? error).includes('UNIQUE')) {
        throw new AppError('conflict', `domain_address: ${address} is already registered.`, {
          field: 'domain_address',
        });
      }
      throw error;
    });
}

/**
 * Renames a domain (the address itself never changes), puts it on its warm-up ramp (`warm_up: true`, starting
 * today unless it is on it already) or off it (`false`), or resumes its paused sending (`sending.status:
 * "active"`, recorded with `requestId` as the actor; `domain.updated` goes out).
 */
export async function updateDomain(
  state: DomainState,
  principal: Principal,
  input: {
    domain_id: string;
    name?: string | undefined;
    warm_up?: boolean | undefined;
    sending?: { status: 'active' } | undefined;
  },
  context: { requestId?: string | undefined } = {},
): Promise<Domain> {
  const { db, clock, newId, windowDays } = state;
  const current = await requireDomain(state, principal, input.domain_id);
  const at = state.now();
  const warmUp =
    input.warm_up === undefined || input.warm_up === current.warmUp
      ? {}
      : input.warm_up
        ? { warmUp: true, warmUpStartedAt: at }
        : { warmUp: false, warmUpStartedAt: null };
  return db.write(async (tx) => {
    const resumed =
      input.sending?.status === 'active'
        ? await resumeDomainSending(tx, newId, current.id, {
            actor: context.requestId ?? `local:${principal.via}`,
            now: clock.now(),
            windowDays,
          })
        : undefined;
    const [row] = await tx
      .update(tables.domains)
      .set({ ...(input.name !== undefined ? { name: input.name } : {}), ...warmUp, updatedAt: at })
      .where(eq(tables.domains.id, current.id))
      .returning();
    const domain = await oneWithReputation(state, row!, tx);
    if (resumed)
      await state.record(tx, {
        applicationId: principal.applicationId,
        type: 'domain.updated',
        objectId: row!.id,
        object: domain,
        createdAt: at,
      });
    return domain;
  });
}

/** Removes a domain. Accounts on it keep their mail but no new ones can be made on it. */
export async function destroyDomain(state: DomainState, principal: Principal, domainId: string): Promise<void> {
  const current = await requireDomain(state, principal, domainId);
  await state.db.write((tx) => tx.delete(tables.domains).where(eq(tables.domains.id, current.id)));
}

/** Registers `AGENTPOST_DOMAINS` as verified domains of an application (idempotent). */
export async function ensureVerified(
  state: DomainState,
  applicationId: string,
  addresses: readonly string[],
): Promise<void> {
  if (addresses.length === 0) return;
  const at = state.now();
  await state.db.write(async (tx) => {
    for (const address of addresses) {
      const existing = await tx.query.domains.findFirst({ where: eq(tables.domains.domainAddress, address) });
      if (existing && existing.applicationId !== applicationId) {
        throw new AppError('conflict', `AGENTPOST_DOMAINS: ${address} is registered to another application.`);
      }
      const flags = { verifiedOwnership: true, verifiedMx: true, verifiedSpf: true, verifiedDkim: true };
      if (existing) {
        await tx
          .update(tables.domains)
          .set({ ...flags, updatedAt: at })
          .where(eq(tables.domains.id, existing.id));
      } else {
        await tx.insert(tables.domains).values({
          id: state.newId(),
          applicationId,
          name: address,
          domainAddress: address,
          branded: isTrialAddress(state, address),
          ...flags,
          verificationToken: state.randomBytes(18).toString('base64url'),
          createdAt: at,
          updatedAt: at,
        });
      }
    }
  });
}
