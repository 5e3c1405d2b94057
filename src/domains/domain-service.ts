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
 */
import { generateKeyPairSync } from 'node:crypto';
import { and, asc, eq, gt, or } from 'drizzle-orm';
import { tables, type Orm, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { DomainService } from './contracts.js';
import {
  domainSendingOf,
  domainWindowTotals,
  reputationOf,
  resumeDomainSending,
  type DomainReputation,
} from './domain-reputation.js';
import { eventRecorder } from '../outbox/index.js';
import type { Domain, DomainVerificationResult, VerificationType } from '../schemas/domains.js';

type DomainRow = typeof tables.domains.$inferSelect;

/**
 * The local part of the address DMARC aggregate reports are asked for (`rua=mailto:dmarc-reports@<domain>`). The
 * SMTP listener takes mail to it on every registered domain for the DMARC intake (src/domains/dmarc-reports.ts), so it
 * is not a mailbox name on those domains.
 */
export const DMARC_RUA_LOCAL_PART = 'dmarc-reports';

/** The DMARC record suggested for a domain: monitoring only (`p=none`), aggregate reports to the service. */
export function dmarcRecordFor(domain: string): string {
  return `v=DMARC1; p=none; rua=mailto:${DMARC_RUA_LOCAL_PART}@${domain}`;
}

/** DKIM selector published for custom domains. */
export const DKIM_SELECTOR = 'agentpost';

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

const FLAG_OF = {
  ownership: 'verifiedOwnership',
  mx: 'verifiedMx',
  spf: 'verifiedSpf',
  dkim: 'verifiedDkim',
  feedback: 'verifiedFeedback',
  dmarc: 'verifiedDmarc',
} as const satisfies Record<VerificationType, keyof DomainRow>;

/** What the `node:dns` codes of a failed look-up mean, for the message of a failed check. */
const DNS_TROUBLE: Record<string, string> = {
  ESERVFAIL: 'the resolver answered SERVFAIL',
  EREFUSED: 'the resolver refused the query',
  ETIMEOUT: 'no answer from the resolver in time',
  ECONNREFUSED: 'the resolver could not be reached',
  ECANCELLED: 'the query was cancelled',
};

/** The DNS record a verification type asks the owner to publish. */
interface ExpectedRecord {
  host: string;
  type: 'TXT' | 'MX';
  value: string;
  priority?: number;
}

/** Creates the domain service. */
export function createDomainService({ db, clock, newId, randomBytes, dns, config, secrets }: CoreDeps): DomainService {
  const now = () => unixSeconds(clock.now());
  const record = eventRecorder({ newId, clock });
  const windowDays = config.deliverability.domain.pauseWindowDays;

  /** Rows to the wire, each with its reputation over the window (one grouped read). */
  async function withReputation(rows: DomainRow[], tx: Tx | Orm = db.orm): Promise<Domain[]> {
    const totals = await domainWindowTotals(
      tx,
      rows.map((row) => row.id),
      clock.now().getTime(),
      windowDays,
    );
    const zero = { sent: 0, hardBounces: 0, softBounces: 0, complaints: 0 };
    return rows.map((row) => toDomain(row, reputationOf(totals.get(row.id) ?? zero, windowDays)));
  }
  const oneWithReputation = async (row: DomainRow, tx?: Tx): Promise<Domain> => (await withReputation([row], tx))[0]!;

  /** `<label>.<AGENTPOST_TRIAL_DOMAIN>`: one label under the service's own domain. */
  function isTrialAddress(address: string): boolean {
    const suffix = `.${config.trialDomain}`;
    return address.endsWith(suffix) && !address.slice(0, -suffix.length).includes('.');
  }

  /** Deeper names under the trial domain would let one application squat below another's trial domain. */
  function checkTrialDepth(address: string): void {
    if (address.endsWith(`.${config.trialDomain}`) && !isTrialAddress(address)) {
      throw new AppError(
        'invalid_request',
        `domain_address: a trial domain is one label under ${config.trialDomain}, such as my-team.${config.trialDomain}.`,
        { field: 'domain_address' },
      );
    }
  }

  async function requireDomain(principal: Principal, domainId: string): Promise<DomainRow> {
    const row = await db.orm.query.domains.findFirst({
      where: and(eq(tables.domains.id, domainId), eq(tables.domains.applicationId, principal.applicationId)),
    });
    if (!row) throw notFound('Domain', domainId);
    return row;
  }

  /** Makes the DKIM key pair on first use (RSA 2048, published as `p=`). */
  async function ensureDkimKey(row: DomainRow): Promise<DomainRow> {
    if (row.dkimPublicKey) return row;
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const [updated] = await db.write((tx) =>
      tx
        .update(tables.domains)
        .set({
          dkimSelector: DKIM_SELECTOR,
          dkimPublicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
          // Sealed at rest; outbound signing opens it (src/outbound/composition.ts).
          dkimPrivateKeyPem: secrets.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
          updatedAt: now(),
        })
        .where(eq(tables.domains.id, row.id))
        .returning(),
    );
    return updated!;
  }

  function expectedRecord(row: DomainRow, type: VerificationType): ExpectedRecord {
    switch (type) {
      case 'ownership':
        return {
          host: `_agentpost.${row.domainAddress}`,
          type: 'TXT',
          value: `agentpost-verification=${row.verificationToken}`,
        };
      case 'mx':
        return { host: row.domainAddress, type: 'MX', value: config.mxHost, priority: 10 };
      case 'spf':
        return { host: row.domainAddress, type: 'TXT', value: `v=spf1 a:${config.mxHost} ~all` };
      case 'dkim':
        return {
          host: `${DKIM_SELECTOR}._domainkey.${row.domainAddress}`,
          type: 'TXT',
          value: `v=DKIM1; k=rsa; p=${row.dkimPublicKey ?? ''}`,
        };
      case 'feedback':
        return { host: `feedback.${row.domainAddress}`, type: 'MX', value: config.mxHost, priority: 10 };
      case 'dmarc':
        return { host: `_dmarc.${row.domainAddress}`, type: 'TXT', value: dmarcRecordFor(row.domainAddress) };
    }
  }

  /**
   * Looks the record up and says whether it is there as expected. "No such name / no such record" is an empty
   * answer; any other DNS failure (SERVFAIL, REFUSED, a timeout) is reported as `error` with its code, never thrown.
   */
  async function check(
    row: DomainRow,
    type: VerificationType,
    expected: ExpectedRecord,
  ): Promise<{ ok: boolean; found: string[]; error?: string }> {
    try {
      if (expected.type === 'MX') {
        const records = await dns.resolveMx(expected.host);
        const found = records.map((record) => record.exchange.toLowerCase().replace(/\.$/, ''));
        return { ok: found.includes(expected.value.toLowerCase()), found };
      }
      const found = (await dns.resolveTxt(expected.host)).map((chunks) => chunks.join(''));
      const ok = found.some((text) => {
        const normalized = text.trim();
        if (type === 'spf')
          return /^v=spf1\s/i.test(normalized) && normalized.toLowerCase().includes(config.mxHost.toLowerCase());
        if (type === 'dkim') return normalized.replace(/\s+/g, '').includes(`p=${row.dkimPublicKey}`);
        // Any published DMARC policy counts (RFC 7489 6.4: `v=DMARC1` first); the owner may report elsewhere too.
        if (type === 'dmarc') return /^v\s*=\s*DMARC1\s*(;|$)/i.test(normalized);
        return normalized === expected.value;
      });
      return { ok, found };
    } catch (error) {
      const code = String((error as NodeJS.ErrnoException | undefined)?.code ?? '');
      if (code === 'ENOTFOUND' || code === 'ENODATA') return { ok: false, found: [] };
      return { ok: false, found: [], error: code || (error instanceof Error ? error.message : String(error)) };
    }
  }

  function result(
    row: DomainRow,
    type: VerificationType,
    expected: ExpectedRecord,
    status: DomainVerificationResult['status'],
    message: string,
    details?: Record<string, unknown>,
  ): DomainVerificationResult {
    return {
      domain_id: row.id,
      attempt: { type, options: expected },
      status,
      created_at: now(),
      message,
      ...(details ? { details } : {}),
    };
  }

  return {
    /** A page of the application's domains, oldest first. */
    async list(principal: Principal, input: { limit?: number | undefined; page_token?: string | undefined }) {
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const rows = await db.orm
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
      return { ...page, data: await withReputation(page.data) };
    },

    /** One domain of the application. */
    async find(principal: Principal, domainId: string): Promise<Domain> {
      return oneWithReputation(await requireDomain(principal, domainId));
    },

    /**
     * Registers a domain. `*.<AGENTPOST_TRIAL_DOMAIN>` is a trial domain, usable at once; any other is custom
     * and waits for DNS verification. An address can belong to one application only (409).
     */
    async create(
      principal: Principal,
      input: { name: string; domain_address: string; warm_up?: boolean | undefined },
    ): Promise<Domain> {
      const address = input.domain_address.toLowerCase();
      checkTrialDepth(address);
      const branded = isTrialAddress(address);
      const at = now();
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
          return oneWithReputation(row!, tx);
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
    },

    /**
     * Renames a domain (the address itself never changes), puts it on its warm-up ramp (`warm_up: true`, starting
     * today unless it is on it already) or off it (`false`), or resumes its paused sending (`sending.status:
     * "active"`, recorded with `requestId` as the actor; `domain.updated` goes out).
     */
    async update(
      principal: Principal,
      input: {
        domain_id: string;
        name?: string | undefined;
        warm_up?: boolean | undefined;
        sending?: { status: 'active' } | undefined;
      },
      context: { requestId?: string | undefined } = {},
    ): Promise<Domain> {
      const current = await requireDomain(principal, input.domain_id);
      const at = now();
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
        const domain = await oneWithReputation(row!, tx);
        if (resumed)
          await record(tx, {
            applicationId: principal.applicationId,
            type: 'domain.updated',
            objectId: row!.id,
            object: domain,
            createdAt: at,
          });
        return domain;
      });
    },

    /** Removes a domain. Accounts on it keep their mail but no new ones can be made on it. */
    async destroy(principal: Principal, domainId: string): Promise<void> {
      const current = await requireDomain(principal, domainId);
      await db.write((tx) => tx.delete(tables.domains).where(eq(tables.domains.id, current.id)));
    },

    /** The DNS record to publish for a verification type, and whether it is verified already. */
    async info(
      principal: Principal,
      input: { domain_id: string; type: VerificationType },
    ): Promise<DomainVerificationResult> {
      let row = await requireDomain(principal, input.domain_id);
      if (input.type === 'dkim') row = await ensureDkimKey(row);
      const expected = expectedRecord(row, input.type);
      const done = row[FLAG_OF[input.type]];
      return result(
        row,
        input.type,
        expected,
        done ? 'done' : 'pending',
        done
          ? `${input.type} is verified.`
          : `Publish a ${expected.type} record at ${expected.host}: ${expected.value}`,
      );
    },

    /** Looks the record up in DNS now; on success the domain's flag is set. */
    async verify(
      principal: Principal,
      input: { domain_id: string; type: VerificationType },
    ): Promise<DomainVerificationResult> {
      let row = await requireDomain(principal, input.domain_id);
      if (input.type === 'dkim') row = await ensureDkimKey(row);
      const expected = expectedRecord(row, input.type);
      if (row.branded) return result(row, input.type, expected, 'done', 'Trial domains need no DNS records.');
      const { ok, found, error } = await check(row, input.type, expected);
      if (error !== undefined) {
        const why = DNS_TROUBLE[error] ?? 'the look-up failed';
        return result(
          row,
          input.type,
          expected,
          'failed',
          `DNS look-up of ${expected.type} ${expected.host} failed: ${why} (${error}); try again later`,
          { found, dns_error: error },
        );
      }
      if (!ok) {
        return result(
          row,
          input.type,
          expected,
          'failed',
          `No matching ${expected.type} record at ${expected.host}; publish: ${expected.value}`,
          { found },
        );
      }
      const [updated] = await db.write((tx) =>
        tx
          .update(tables.domains)
          .set({ [FLAG_OF[input.type]]: true, updatedAt: now() })
          .where(eq(tables.domains.id, row.id))
          .returning(),
      );
      return result(updated!, input.type, expected, 'done', `${input.type} is verified.`, { found });
    },

    /** Registers `AGENTPOST_DOMAINS` as verified domains of an application (idempotent). */
    async ensureVerified(applicationId: string, addresses: readonly string[]): Promise<void> {
      if (addresses.length === 0) return;
      const at = now();
      await db.write(async (tx) => {
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
              id: newId(),
              applicationId,
              name: address,
              domainAddress: address,
              branded: isTrialAddress(address),
              ...flags,
              verificationToken: randomBytes(18).toString('base64url'),
              createdAt: at,
              updatedAt: at,
            });
          }
        }
      });
    },
  };
}

export type { DomainService } from './contracts.js';
