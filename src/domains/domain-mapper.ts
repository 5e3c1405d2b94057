/**
 * @module domains/domain-mapper
 * A domain row in wire form (secrets such as the DKIM private key stay inside), and whether a domain can carry
 * Agent Accounts.
 */
import type { tables } from '../../storage/index.js';
import type { Domain } from '../schemas/domains.js';
import { domainSendingOf, type DomainReputation } from './domain-reputation.js';

export type DomainRow = typeof tables.domains.$inferSelect;

/** A domain can carry Agent Accounts when it is a trial subdomain or its ownership is verified. */
export function isDomainUsable(domain: Pick<DomainRow, 'branded' | 'verifiedOwnership'>): boolean {
  return domain.branded || domain.verifiedOwnership;
}

/**
 * Maps a row to the wire form (secrets such as the DKIM private key stay inside), with its `reputation` when given
 * (src/domains/domain-reputation.ts).
 */
export function toDomain(row: DomainRow, reputation?: DomainReputation): Domain {
  return {
    id: row.id,
    name: row.name,
    domain_address: row.domainAddress,
    organization_id: row.applicationId,
    branded: row.branded,
    region: row.region,
    verified_ownership: row.verifiedOwnership,
    verified_mx: row.verifiedMx,
    verified_spf: row.verifiedSpf,
    verified_feedback: row.verifiedFeedback,
    verified_dkim: row.verifiedDkim,
    verified_dmarc: row.verifiedDmarc,
    verified_arc: row.verifiedArc,
    warm_up: row.warmUp,
    ...(row.warmUp && row.warmUpStartedAt !== null ? { warm_up_started_at: row.warmUpStartedAt } : {}),
    sending: domainSendingOf(row),
    ...(reputation ? { reputation } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
