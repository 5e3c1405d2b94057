/**
 * @module mail/stages/authentication
 * Inbound stage 2: SPF (client IP, HELO, MAIL FROM), DKIM, DMARC and ARC of a received message, with `mailauth`
 * (mailauth only here) and through the injected resolver. The verdict and an `Authentication-Results` header
 * (RFC 8601, authserv-id = the service's MX host name) are kept on the message.
 *
 * DNS failures do not reject: mailauth reports them as `temperror` in the results, and the message goes on. The
 * function rejects only when the check cannot run at all (→ 451 4.3.0 from the pipeline).
 */
import { createRequire } from 'node:module';
import { arc, dkimVerify, dmarc, spf, type AuthStatus, type DNSResolver } from 'mailauth';
import type { DnsResolver, AuthenticationVerdict, Authenticator, StageMail } from '../../ports/index.js';
import { cachedDnsQuery, dnsQuery } from './dns-query.js';

/** What {@link createAuthenticator} needs. */
export interface AuthenticatorOptions {
  dns: DnsResolver;
  /** The authserv-id of the `Authentication-Results` header: this service's host name. */
  authservId: string;
  /**
   * How long DNS answers and "no such record" are kept, in ms (`AGENTPOST_DNS_CACHE_TTL`), and SPF and DMARC results for
   * the same inputs; 0 or absent keeps none.
   */
  cacheTtlMs?: number;
}

/**
 * RSA keys shorter than this fail DKIM and ARC (RFC 8301 requires 1024 bits at least; mailauth's default too).
 */
const MIN_KEY_BITS = 1024;

/**
 * mailauth's comment when the body no longer matches the signature's body hash. It reports that as `neutral`;
 * RFC 6376 6.1.3 makes it a PERMFAIL, which RFC 8601 2.7.1 writes `fail`: the message was altered after signing.
 */
const BODY_HASH_MISMATCH = 'body hash did not verify';

/** Each result on a line of its own (a folded header), as mailauth writes it. */
const RESULT_SEPARATOR = ';\r\n ';

/** `temperr` is mailauth's spelling in a few places; the header and the API say `temperror` (RFC 8601). */
function resultOf(status: AuthStatus | undefined): string {
  const result = status?.result ?? 'none';
  return result === 'temperr' ? 'temperror' : result;
}

/** One line of a result (`dkim=pass header.d=…`), without line breaks a hostile value could smuggle in. */
function clean(info: string | undefined): string | undefined {
  const text = info?.replace(/\s+/g, ' ').trim();
  return text ? text : undefined;
}

/** A signature field that covers the body: DKIM's, or one of ARC's. */
const SIGNATURE_FIELD = /^(?:dkim-signature|arc-seal|arc-message-signature):/im;

/** What `dkimVerify` resolves (mailauth types it loosely). */
type DkimResult = Awaited<ReturnType<typeof dkimVerify>>;

/**
 * mailauth's DKIM verifier (lib/dkim/dkim-verifier.js, the class `dkimVerify` streams a message into) and its header
 * parser (lib/tools.js): the package has no exports map, and mailauth is pinned to one version in package.json.
 */
const mailauthInternals = createRequire(import.meta.url);
const { DkimVerifier } = mailauthInternals('mailauth/lib/dkim/dkim-verifier.js') as {
  DkimVerifier: new (options: object) => { messageHeaders(headers: unknown): Promise<void>; finalChunk(): Promise<void>; headerFrom: string[]; envelopeFrom: string | false; results: DkimResult['results']; arc: unknown };
};
const { parseHeaders } = mailauthInternals('mailauth/lib/tools.js') as { parseHeaders(header: Buffer): unknown };

/**
 * Where the header of a message ends as mailauth's DKIM verifier finds it: after the first empty line, a line break
 * being LF or CRLF (`\n\n` or `\n\r\n`); -1 when there is none.
 */
function headerEnd(raw: Buffer): number {
  const lf = raw.indexOf('\n\n');
  const crlf = raw.indexOf('\n\r\n');
  if (lf < 0) return crlf < 0 ? -1 : crlf + 3;
  return crlf < 0 || lf < crlf ? lf + 2 : crlf + 3;
}

/**
 * DKIM verification of a message, as mailauth's `dkimVerify` gives it. A message whose header holds no signature field
 * (most mail from small senders, and every message of a load generator) has nothing to verify: its header alone goes
 * through the same verifier steps (`messageHeaders`, which reads the From addresses DMARC needs and the ARC chain,
 * then `finalChunk`, which reports `none`), without the stream `dkimVerify` pushes the message through byte by byte.
 */
export async function verifyDkim(raw: Buffer, options: { resolver: DNSResolver; sender: string | undefined; minBitLength: number }): Promise<DkimResult> {
  const end = headerEnd(raw);
  if (end < 0 || SIGNATURE_FIELD.test(raw.toString('latin1', 0, end))) return dkimVerify(raw, options as Parameters<typeof dkimVerify>[1]);
  const verifier = new DkimVerifier(options);
  await verifier.messageHeaders(parseHeaders(raw.subarray(0, end)));
  await verifier.finalChunk();
  const result = { headerFrom: verifier.headerFrom, envelopeFrom: verifier.envelopeFrom, results: verifier.results } as DkimResult;
  // As dkimVerify sets it: not enumerable, read by `arc()`.
  Object.defineProperty(result, 'arc', { enumerable: false, configurable: false, writable: false, value: verifier.arc });
  return result;
}

/** Results kept at most per kind (the memo is emptied when full), as the DNS cache keeps questions. */
const MEMO_ENTRIES = 10_000;

/**
 * Keeps what `compute` resolves for a key for `ttlMs` (an age: performance.now(), not the clock), unless `keep` says
 * it must not be kept (a temporary DNS failure: the next message asks again). A key asked while it is computed shares
 * that answer. `ttlMs` 0 keeps nothing (and makes no key).
 */
function memo<T>(ttlMs: number, keep: (value: T) => boolean): (keyOf: () => string, compute: () => Promise<T>) => Promise<T> {
  if (ttlMs <= 0) return (_keyOf, compute) => compute();
  const kept = new Map<string, { at: number; value: Promise<T> }>();
  return (keyOf, compute) => {
    const key = keyOf();
    const now = performance.now();
    const entry = kept.get(key);
    if (entry && now - entry.at < ttlMs) return entry.value;
    if (kept.size >= MEMO_ENTRIES) kept.clear();
    const value = compute();
    kept.set(key, { at: now, value });
    const forget = () => {
      if (kept.get(key)?.value === value) kept.delete(key);
    };
    value.then((result) => {
      if (!keep(result)) forget();
    }, forget);
    return value;
  };
}

/** One check's part of the verdict and its line of the `Authentication-Results` field. */
interface CheckResult<V> {
  verdict: V;
  info: string | undefined;
}

/** Builds the {@link Authenticator} of the inbound pipeline. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const ttlMs = options.cacheTtlMs ?? 0;
  const query = cachedDnsQuery(dnsQuery(options.dns), ttlMs);
  // mailauth's resolver type names only TXT-like answers; MX and A answers pass through as they are.
  const resolver = query as unknown as DNSResolver;
  const authservId = options.authservId.replace(/[^A-Za-z0-9.:-]/g, '');
  // SPF and DMARC are functions of their inputs and of DNS answers: with the DNS cache on, their results are kept as
  // long as an answer is (temporary errors never), so a steady sender costs a look-up instead of an evaluation.
  const notTemporary = (check: CheckResult<{ result: string }> | undefined) => check?.verdict.result !== 'temperror';
  const spfMemo = memo<CheckResult<NonNullable<AuthenticationVerdict['spf']>>>(ttlMs, notTemporary);
  const dmarcMemo = memo<CheckResult<NonNullable<AuthenticationVerdict['dmarc']>> | undefined>(ttlMs, notTemporary);

  /** SPF of the client IP and HELO name for a MAIL FROM (a function of these three and DNS, `mta` being ours). */
  async function checkSpf(ip: string, helo: string, sender: string): Promise<CheckResult<NonNullable<AuthenticationVerdict['spf']>>> {
    const spfResult = await spf({ resolver, ip, helo, sender, mta: authservId } as Parameters<typeof spf>[0]);
    return { verdict: { result: resultOf(spfResult.status), ...(spfResult.domain ? { domain: spfResult.domain } : {}) }, info: clean(spfResult.info) };
  }

  /** DMARC of the From domain (a function of mailauth's inputs below, of which ARC's only by its result, and DNS). */
  async function checkDmarc(input: Omit<Parameters<typeof dmarc>[0], 'resolver'>): Promise<CheckResult<NonNullable<AuthenticationVerdict['dmarc']>> | undefined> {
    const dmarcResult = await dmarc({ ...input, resolver });
    if (!dmarcResult) return undefined;
    return {
      verdict: { result: resultOf(dmarcResult.status), ...(dmarcResult.domain ? { domain: dmarcResult.domain } : {}), ...(dmarcResult.policy ? { policy: dmarcResult.policy } : {}) },
      info: clean(dmarcResult.info),
    };
  }

  return async function authenticate(mail: StageMail): Promise<AuthenticationVerdict> {
    const dkimResult = await verifyDkim(mail.raw, { resolver, sender: mail.mailFrom || undefined, minBitLength: MIN_KEY_BITS });
    const results: string[] = [];
    const dkim = (dkimResult.results ?? []).map((row) => {
      const bodyAltered = row.status.result === 'neutral' && row.status.comment === BODY_HASH_MISMATCH;
      const info = clean(bodyAltered ? row.info.replace(/^dkim=neutral\b/, 'dkim=fail') : row.info);
      if (info) results.push(info);
      return { result: bodyAltered ? 'fail' : resultOf(row.status), ...(row.signingDomain ? { domain: row.signingDomain } : {}), ...(row.selector ? { selector: row.selector } : {}) };
    });

    // SPF needs the SMTP client; mail this service delivered to itself has none.
    let spfVerdict: AuthenticationVerdict['spf'] = { result: 'none' };
    let spfPassDomain: string | undefined;
    if (mail.client) {
      const ip = mail.client.address;
      const helo = mail.client.helo || ip;
      const sender = mail.mailFrom || `postmaster@${helo}`;
      const spfCheck = await spfMemo(() => `${ip}\n${helo}\n${sender}`, () => checkSpf(ip, helo, sender));
      spfVerdict = spfCheck.verdict;
      if (spfVerdict.result === 'pass') spfPassDomain = spfVerdict.domain;
      if (spfCheck.info) results.push(spfCheck.info);
    }

    const arcResult = await arc(dkimResult.arc as Parameters<typeof arc>[0], { resolver, minBitLength: MIN_KEY_BITS });
    const arcInfo = clean(arcResult.info);
    if (arcInfo) results.push(arcInfo);

    let dmarcVerdict: AuthenticationVerdict['dmarc'] = { result: 'none' };
    if (dkimResult.headerFrom && dkimResult.headerFrom.length > 0) {
      const input = {
        headerFrom: dkimResult.headerFrom,
        spfDomains: spfPassDomain ? [spfPassDomain] : [],
        dkimDomains: (dkimResult.results ?? [])
          .filter((row) => row.status.result === 'pass')
          .map((row) => ({ ...(row.id ? { id: row.id } : {}), domain: row.signingDomain, ...(row.status.aligned !== undefined ? { aligned: row.status.aligned } : {}), ...(row.status.underSized !== undefined ? { underSized: row.status.underSized } : {}) })),
        arcResult,
      };
      const keyOf = () => JSON.stringify([input.headerFrom, input.spfDomains, input.dkimDomains, arcResult.status?.result]);
      const dmarcCheck = await dmarcMemo(keyOf, () => checkDmarc(input));
      if (dmarcCheck) {
        dmarcVerdict = dmarcCheck.verdict;
        if (dmarcCheck.info) results.push(dmarcCheck.info);
      }
    }

    const header = `Authentication-Results: ${authservId}${results.length > 0 ? `${RESULT_SEPARATOR}${results.join(RESULT_SEPARATOR)}` : '; none'}`;
    return { spf: { ...spfVerdict }, dkim, dmarc: { ...dmarcVerdict }, arc: { result: resultOf(arcResult.status) }, header };
  };
}
