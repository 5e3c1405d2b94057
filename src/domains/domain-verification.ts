/**
 * @module domains/domain-verification
 * The domain service's verification (./domain-service.ts): the record to publish for a verification type, and its
 * look-up in DNS that sets the domain's flag.
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { DomainVerificationResult, VerificationType } from '../schemas/domains.js';
import type { DomainRow } from './domain-mapper.js';
import { ensureDkimKey, expectedRecord, type ExpectedRecord } from './domain-records.js';
import { requireDomain, type DomainState } from './domain-state.js';

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

/**
 * Looks the record up and says whether it is there as expected. "No such name / no such record" is an empty
 * answer; any other DNS failure (SERVFAIL, REFUSED, a timeout) is reported as `error` with its code, never thrown.
 */
async function check(
  state: DomainState,
  row: DomainRow,
  type: VerificationType,
  expected: ExpectedRecord,
): Promise<{ ok: boolean; found: string[]; error?: string }> {
  const { dns, config } = state;
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
  state: DomainState,
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
    created_at: state.now(),
    message,
    ...(details ? { details } : {}),
  };
}

/** The DNS record to publish for a verification type, and whether it is verified already. */
export async function verificationInfo(
  state: DomainState,
  principal: Principal,
  input: { domain_id: string; type: VerificationType },
): Promise<DomainVerificationResult> {
  let row = await requireDomain(state, principal, input.domain_id);
  if (input.type === 'dkim') row = await ensureDkimKey(state, row);
  const expected = expectedRecord(state, row, input.type);
  const done = row[FLAG_OF[input.type]];
  return result(
    state,
    row,
    input.type,
    expected,
    done ? 'done' : 'pending',
    done ? `${input.type} is verified.` : `Publish a ${expected.type} record at ${expected.host}: ${expected.value}`,
  );
}

/** Looks the record up in DNS now; on success the domain's flag is set. */
export async function verifyDomain(
  state: DomainState,
  principal: Principal,
  input: { domain_id: string; type: VerificationType },
): Promise<DomainVerificationResult> {
  let row = await requireDomain(state, principal, input.domain_id);
  if (input.type === 'dkim') row = await ensureDkimKey(state, row);
  const expected = expectedRecord(state, row, input.type);
  if (row.branded) return result(state, row, input.type, expected, 'done', 'Trial domains need no DNS records.');
  const { ok, found, error } = await check(state, row, input.type, expected);
  if (error !== undefined) {
    const why = DNS_TROUBLE[error] ?? 'the look-up failed';
    return result(
      state,
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
      state,
      row,
      input.type,
      expected,
      'failed',
      `No matching ${expected.type} record at ${expected.host}; publish: ${expected.value}`,
      { found },
    );
  }
  const [updated] = await state.db.write((tx) =>
    tx
      .update(tables.domains)
      .set({ [FLAG_OF[input.type]]: true, updatedAt: state.now() })
      .where(eq(tables.domains.id, row.id))
      .returning(),
  );
  return result(state, updated!, input.type, expected, 'done', `${input.type} is verified.`, { found });
}
