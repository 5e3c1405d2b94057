/**
 * @module domains/contracts
 * The domains area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type {
  DmarcReport,
  Domain,
  DomainSendingDays,
  DomainVerificationResult,
  ListDomainSendingDaysInput,
  VerificationType,
} from '../schemas/domains.js';

/** What createDomainService() returns (src/domains/domain-service.ts). */
export interface DomainService {
  /** A page of the application's domains, oldest first. */
  list(
    principal: Principal,
    input: {
      limit?: number | undefined;
      page_token?: string | undefined;
    },
  ): Promise<{
    data: {
      id: string;
      name: string;
      domain_address: string;
      organization_id: string;
      branded: boolean;
      region: string;
      verified_ownership: boolean;
      verified_mx: boolean;
      verified_spf: boolean;
      verified_feedback: boolean;
      verified_dkim: boolean;
      verified_dmarc: boolean;
      verified_arc: boolean;
      warm_up: boolean;
      sending: {
        status: 'active' | 'paused';
        reason?: string | undefined;
        paused_at?: number | undefined;
      };
      created_at: number;
      updated_at: number;
      warm_up_started_at?: number | undefined;
      reputation?:
        | {
            sent: number;
            hard_bounces: number;
            soft_bounces: number;
            complaints: number;
            bounce_rate: number;
            complaint_rate: number;
            window_days: number;
          }
        | undefined;
    }[];
    next_cursor?: string;
  }>;
  /** One domain of the application. */
  find(principal: Principal, domainId: string): Promise<Domain>;
  /**
   * Registers a domain. `*.<AGENTPOST_TRIAL_DOMAIN>` is a trial domain, usable at once; any other is custom
   * and waits for DNS verification. An address can belong to one application only (409).
   */
  create(
    principal: Principal,
    input: {
      name: string;
      domain_address: string;
      warm_up?: boolean | undefined;
    },
  ): Promise<Domain>;
  /**
   * Renames a domain (the address itself never changes), puts it on its warm-up ramp (`warm_up: true`, starting
   * today unless it is on it already) or off it (`false`), or resumes its paused sending (`sending.status:
   * "active"`, recorded with `requestId` as the actor; `domain.updated` goes out).
   */
  update(
    principal: Principal,
    input: {
      domain_id: string;
      name?: string | undefined;
      warm_up?: boolean | undefined;
      sending?:
        | {
            status: 'active';
          }
        | undefined;
    },
    context?: {
      requestId?: string | undefined;
    },
  ): Promise<Domain>;
  /** Removes a domain. Accounts on it keep their mail but no new ones can be made on it. */
  destroy(principal: Principal, domainId: string): Promise<void>;
  /** The DNS record to publish for a verification type, and whether it is verified already. */
  info(
    principal: Principal,
    input: {
      domain_id: string;
      type: VerificationType;
    },
  ): Promise<DomainVerificationResult>;
  /** Looks the record up in DNS now; on success the domain's flag is set. */
  verify(
    principal: Principal,
    input: {
      domain_id: string;
      type: VerificationType;
    },
  ): Promise<DomainVerificationResult>;
  /** Registers `AGENTPOST_DOMAINS` as verified domains of an application (idempotent). */
  ensureVerified(applicationId: string, addresses: readonly string[]): Promise<void>;
  /** A domain's sending per UTC day (sent, bounces, complaints and their rates), oldest first, empty days as zeros. */
  sendingDays(principal: Principal, input: ListDomainSendingDaysInput): Promise<DomainSendingDays>;
}

/** What the listener should answer to a RCPT TO, as far as the DMARC intake goes. */
export type RuaCheck = { kind: 'none' } | { kind: 'accept' };

/** What {@link DmarcReportIntake.receive} did. */
export interface DmarcReceiveOutcome {
  recorded: string[];
  ignored: string[];
}

/** What createDmarcReportIntake() returns (src/domains/dmarc-reports.ts): aggregate reports mailed to `rua` addresses. */
export interface DmarcReportIntake {
  /** Whether an address is the `rua` address of a registered domain (RCPT TO). */
  checkAddress(address: string): Promise<RuaCheck>;
  /**
   * Reads the report in a message to `rua` addresses (`rcptTo`: those recipients only) and stores it for the domain
   * it was mailed to when it is about that domain. Resolves after the store committed; never throws for what the
   * message says, rejects only when the store fails (the listener answers 4xx and the sender retries).
   */
  receive(message: { raw: Buffer; rcptTo: readonly string[] }): Promise<DmarcReceiveOutcome>;
  /** A page of a domain's reports, newest first; another application's domain is 404. */
  list(
    principal: Principal,
    input: { domain_id: string; limit?: number | undefined; page_token?: string | undefined },
  ): Promise<{ next_cursor?: string; data: DmarcReport[] }>;
}
