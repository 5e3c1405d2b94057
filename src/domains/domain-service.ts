/**
 * @module domains/domain-service
 * Domains an application sends and receives on. A trial subdomain of the service's own domain is usable at
 * once; a custom domain becomes usable when its ownership TXT record is verified through DNS.
 *
 * A custom domain registered here starts on its warm-up ramp (src/deliverability/warm-up.ts) unless
 * `AGENTPOST_WARMUP_SCHEDULE` is `off` or the request says `warm_up: false`; trial subdomains and the domains of
 * `AGENTPOST_DOMAINS` count as established (no ramp) unless `warm_up: true` is asked for. Every domain object shows
 * its sending state and its reputation (the bounce and complaint rates of everything sent from it:
 * src/domains/domain-reputation.ts); `sending.status: "active"` on update resumes a paused domain.
 *
 * The service is plain functions over a small state made here: its reads (./domain-reads.ts), its writes
 * (./domain-writes.ts), its verification (./domain-verification.ts) of the records it asks for
 * (./domain-records.ts), what they share (./domain-state.ts) and the wire form of a row (./domain-mapper.ts).
 */
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { Domain, DomainVerificationResult, VerificationType } from '../schemas/domains.js';
import type { DomainService } from './contracts.js';
import { findDomain, listDomains } from './domain-reads.js';
import type { DomainState } from './domain-state.js';
import { verificationInfo, verifyDomain } from './domain-verification.js';
import { createDomain, destroyDomain, ensureVerified, updateDomain } from './domain-writes.js';

/** Creates the domain service. */
export function createDomainService({ db, clock, newId, randomBytes, dns, config, secrets }: CoreDeps): DomainService {
  const state: DomainState = {
    db,
    clock,
    newId,
    randomBytes,
    dns,
    config,
    secrets,
    now: () => unixSeconds(clock.now()),
    record: eventRecorder({ newId, clock }),
    windowDays: config.deliverability.domain.pauseWindowDays,
  };

  return {
    /** A page of the application's domains, oldest first. */
    list: (principal: Principal, input: { limit?: number | undefined; page_token?: string | undefined }) =>
      listDomains(state, principal, input),

    /** One domain of the application. */
    find: (principal: Principal, domainId: string): Promise<Domain> => findDomain(state, principal, domainId),

    /**
     * Registers a domain. `*.<AGENTPOST_TRIAL_DOMAIN>` is a trial domain, usable at once; any other is custom
     * and waits for DNS verification. An address can belong to one application only (409).
     */
    create: (
      principal: Principal,
      input: { name: string; domain_address: string; warm_up?: boolean | undefined },
    ): Promise<Domain> => createDomain(state, principal, input),

    /**
     * Renames a domain (the address itself never changes), puts it on its warm-up ramp (`warm_up: true`, starting
     * today unless it is on it already) or off it (`false`), or resumes its paused sending (`sending.status:
     * "active"`, recorded with `requestId` as the actor; `domain.updated` goes out).
     */
    update: (
      principal: Principal,
      input: {
        domain_id: string;
        name?: string | undefined;
        warm_up?: boolean | undefined;
        sending?: { status: 'active' } | undefined;
      },
      context?: { requestId?: string | undefined },
    ): Promise<Domain> => updateDomain(state, principal, input, context),

    /** Removes a domain. Accounts on it keep their mail but no new ones can be made on it. */
    destroy: (principal: Principal, domainId: string): Promise<void> => destroyDomain(state, principal, domainId),

    /** The DNS record to publish for a verification type, and whether it is verified already. */
    info: (
      principal: Principal,
      input: { domain_id: string; type: VerificationType },
    ): Promise<DomainVerificationResult> => verificationInfo(state, principal, input),

    /** Looks the record up in DNS now; on success the domain's flag is set. */
    verify: (
      principal: Principal,
      input: { domain_id: string; type: VerificationType },
    ): Promise<DomainVerificationResult> => verifyDomain(state, principal, input),

    /** Registers `AGENTPOST_DOMAINS` as verified domains of an application (idempotent). */
    ensureVerified: (applicationId: string, addresses: readonly string[]): Promise<void> =>
      ensureVerified(state, applicationId, addresses),
  };
}
