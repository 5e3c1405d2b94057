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
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { DomainService } from './contracts.js';
import { findDomain, listDomains, sendingDays } from './domain-reads.js';
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

  // Each method is typed and documented by DomainService (./contracts.ts) and its function.
  return {
    list: (principal, input) => listDomains(state, principal, input),
    find: (principal, domainId) => findDomain(state, principal, domainId),
    create: (principal, input) => createDomain(state, principal, input),
    update: (principal, input, context) => updateDomain(state, principal, input, context),
    destroy: (principal, domainId) => destroyDomain(state, principal, domainId),
    info: (principal, input) => verificationInfo(state, principal, input),
    verify: (principal, input) => verifyDomain(state, principal, input),
    ensureVerified: (applicationId, addresses) => ensureVerified(state, applicationId, addresses),
    sendingDays: (principal, input) => sendingDays(state, principal, input),
  };
}
