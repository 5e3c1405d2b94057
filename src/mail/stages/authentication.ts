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
 * mailauth's DKIM verifier (lib/dkim/dkim-verifier.js, the class `dkimVerify` streams a message into): the package has
 * no exports map, and mailauth is pinned to one version in package.json. We drive it ourselves (see verifyDkim)
 * because its own header reader (`parseHeaders` of lib/tools.js, which `dkimVerify` calls) is quadratic in the lines
 * of a folded field: one field folded over 30,000 lines held the event loop for 4.5 s.
 */
const mailauthInternals = createRequire(import.meta.url);
interface MailauthHeaders {
  parsed: { key: string | null; casedKey: string | undefined; line: Buffer }[];
  original: Buffer;
}
const { DkimVerifier } = mailauthInternals('mailauth/lib/dkim/dkim-verifier.js') as {
  DkimVerifier: new (options: object) => {
    messageHeaders(headers: MailauthHeaders): Promise<void>;
    nextChunk(chunk: Buffer): Promise<void>;
    finalChunk(): Promise<void>;
    writeAsync(chunk: Buffer): Promise<void>;
    state: string;
    lastByte: number | undefined;
    headers: MailauthHeaders | false;
    headerFrom: string[];
    envelopeFrom: string | false;
    results: DkimResult['results'];
    arc: unknown;
  };
};

/**
 * The header fields of a header section as mailauth's `parseHeaders` gives them (its tests' shape: `key` lower-cased,
 * `casedKey` as written, `line` the whole field with its folds, lines joined by CRLF), in linear time. A line that
 * starts with white space (`\s`, as mailauth tests it) continues the field before it.
 */
export function parseHeaderFields(section: Buffer): MailauthHeaders {
  const text = section.toString('binary');
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 0x0a || text.charCodeAt(end - 1) === 0x0d)) end--;
  const parsed: MailauthHeaders['parsed'] = [];
  let field: string[] = [];
  const close = () => {
    const row = field.join('\r\n');
    const name = /^[^:]+/.exec(row);
    const casedKey = name ? name[0].trim() : undefined;
    parsed.push({
      key: casedKey === undefined ? null : casedKey.toLowerCase(),
      casedKey,
      line: Buffer.from(row, 'binary'),
    });
  };
  let at = 0;
  for (;;) {
    const lf = text.indexOf('\n', at);
    const stop = lf < 0 || lf >= end ? end : lf;
    const line = text.slice(at, stop > at && text.charCodeAt(stop - 1) === 0x0d && stop !== end ? stop - 1 : stop);
    if (field.length > 0 && /^\s/.test(line)) field.push(line);
    else {
      if (field.length > 0) close();
      field = [line];
    }
    if (stop >= end) break;
    at = stop + 1;
  }
  close();
  return { parsed, original: section };
}

/** Body bytes hashed between two turns of the event loop, so a 40 MB signed message never holds it for long. */
const BODY_SLICE_BYTES = 1024 * 1024;

/**
 * Signature fields verified at most per message (RFC 6376 6.1 lets a verifier limit them): each costs a DNS query and
 * a hash of the body, so more would make a message's cost grow with its signatures times its size. Further
 * `DKIM-Signature` fields are not verified (as if absent).
 */
export const MAX_DKIM_SIGNATURES = 10;
/**
 * Header fields a signature may sign (its `h=` list) to be verified: mailauth finds each listed field by a scan of the
 * whole header, so a long list over a long header costs their product. Real signers list a few dozen.
 */
export const MAX_SIGNED_FIELDS = 256;

/** A signature field whose `h=` names more than {@link MAX_SIGNED_FIELDS} fields. */
function signsTooMany(line: Buffer): boolean {
  const text = line.toString('latin1');
  const tag = /[;:\s]h\s*=([^;]*)/i.exec(text);
  if (!tag) return false;
  let colons = 0;
  for (let at = tag[1]!.indexOf(':'); at >= 0 && colons <= MAX_SIGNED_FIELDS; at = tag[1]!.indexOf(':', at + 1))
    colons++;
  return colons >= MAX_SIGNED_FIELDS;
}

/** The header fields with the signatures past the bounds above left out. */
function boundedSignatures(headers: MailauthHeaders): MailauthHeaders {
  let signatures = 0;
  let dropped = false;
  const parsed = headers.parsed.filter((field) => {
    if (field.key !== 'dkim-signature' && field.key !== 'arc-message-signature') return true;
    if (signsTooMany(field.line)) {
      dropped = true;
      return false;
    }
    if (field.key === 'arc-message-signature') return true;
    signatures++;
    if (signatures <= MAX_DKIM_SIGNATURES) return true;
    dropped = true;
    return false;
  });
  return dropped ? { parsed, original: headers.original } : headers;
}

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
 * DKIM verification of a message, as mailauth's `dkimVerify` gives it, through the same verifier steps: the header
 * (read by {@link parseHeaderFields}) to `messageHeaders`, which reads the signatures, the From addresses DMARC needs
 * and the ARC chain; the body, its line breaks made CRLF as `dkimVerify` makes them, to the body hashes, a slice per
 * turn of the event loop; then `finalChunk`, which checks each signature (`none` when there is none). A message whose
 * header holds no signature field (most mail from small senders, and every message of a load generator) has no body
 * to hash.
 */
export async function verifyDkim(
  raw: Buffer,
  options: { resolver: DNSResolver; sender: string | undefined; minBitLength: number },
): Promise<DkimResult> {
  const end = headerEnd(raw);
  const header = end < 0 ? raw : raw.subarray(0, end);
  const verifier = new DkimVerifier(options);
  const headers = boundedSignatures(parseHeaderFields(header));
  verifier.state = 'body';
  if (end < 0) {
    // A message with no empty line is all header: as dkimVerify does at the end of such a stream, the signatures are
    // checked before the header is read (so none is), then the header is read for the From addresses and ARC.
    await verifier.finalChunk();
    verifier.headers = headers;
    await verifier.messageHeaders(headers);
    return dkimResultOf(verifier);
  }
  verifier.headers = headers;
  await verifier.messageHeaders(headers);
  if (SIGNATURE_FIELD.test(header.toString('latin1'))) {
    // The line-break state of the stream dkimVerify writes: the last byte before the body that is not a LF.
    let last = end - 1;
    while (last >= 0 && raw[last] === 0x0a) last--;
    if (last >= 0) verifier.lastByte = raw[last];
    for (let at = end; at < raw.length; at += BODY_SLICE_BYTES) {
      if (at > end) await new Promise((resolve) => setImmediate(resolve));
      await verifier.writeAsync(raw.subarray(at, Math.min(raw.length, at + BODY_SLICE_BYTES)));
    }
  }
  await verifier.finalChunk();
  return dkimResultOf(verifier);
}

/** The result of a verifier as `dkimVerify` gives it. */
function dkimResultOf(verifier: InstanceType<typeof DkimVerifier>): DkimResult {
  const result = {
    headerFrom: verifier.headerFrom,
    envelopeFrom: verifier.envelopeFrom,
    results: verifier.results,
  } as DkimResult;
  // As dkimVerify sets it: not enumerable, read by `arc()`.
  Object.defineProperty(result, 'arc', {
    enumerable: false,
    configurable: false,
    writable: false,
    value: verifier.arc,
  });
  return result;
}

/** Results kept at most per kind (the memo is emptied when full), as the DNS cache keeps questions. */
const MEMO_ENTRIES = 10_000;

/**
 * Keeps what `compute` resolves for a key for `ttlMs` (an age: performance.now(), not the clock), unless `keep` says
 * it must not be kept (a temporary DNS failure: the next message asks again). A key asked while it is computed shares
 * that answer. `ttlMs` 0 keeps nothing (and makes no key).
 */
function memo<T>(
  ttlMs: number,
  keep: (value: T) => boolean,
): (keyOf: () => string, compute: () => Promise<T>) => Promise<T> {
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
  async function checkSpf(
    ip: string,
    helo: string,
    sender: string,
  ): Promise<CheckResult<NonNullable<AuthenticationVerdict['spf']>>> {
    const spfResult = await spf({ resolver, ip, helo, sender, mta: authservId });
    return {
      verdict: { result: resultOf(spfResult.status), ...(spfResult.domain ? { domain: spfResult.domain } : {}) },
      info: clean(spfResult.info),
    };
  }

  /** DMARC of the From domain (a function of mailauth's inputs below, of which ARC's only by its result, and DNS). */
  async function checkDmarc(
    input: Omit<Parameters<typeof dmarc>[0], 'resolver'>,
  ): Promise<CheckResult<NonNullable<AuthenticationVerdict['dmarc']>> | undefined> {
    const dmarcResult = await dmarc({ ...input, resolver });
    if (!dmarcResult) return undefined;
    return {
      verdict: {
        result: resultOf(dmarcResult.status),
        ...(dmarcResult.domain ? { domain: dmarcResult.domain } : {}),
        ...(dmarcResult.policy ? { policy: dmarcResult.policy } : {}),
      },
      info: clean(dmarcResult.info),
    };
  }

  return async function authenticate(mail: StageMail): Promise<AuthenticationVerdict> {
    const dkimResult = await verifyDkim(mail.raw, {
      resolver,
      sender: mail.mailFrom || undefined,
      minBitLength: MIN_KEY_BITS,
    });
    const results: string[] = [];
    const dkim = (dkimResult.results ?? []).map((row) => {
      const bodyAltered = row.status.result === 'neutral' && row.status.comment === BODY_HASH_MISMATCH;
      const info = clean(bodyAltered ? row.info.replace(/^dkim=neutral\b/, 'dkim=fail') : row.info);
      if (info) results.push(info);
      return {
        result: bodyAltered ? 'fail' : resultOf(row.status),
        ...(row.signingDomain ? { domain: row.signingDomain } : {}),
        ...(row.selector ? { selector: row.selector } : {}),
      };
    });

    // SPF needs the SMTP client; mail this service delivered to itself has none.
    let spfVerdict: AuthenticationVerdict['spf'] = { result: 'none' };
    let spfPassDomain: string | undefined;
    if (mail.client) {
      const ip = mail.client.address;
      const helo = mail.client.helo || ip;
      const sender = mail.mailFrom || `postmaster@${helo}`;
      const spfCheck = await spfMemo(
        () => `${ip}\n${helo}\n${sender}`,
        () => checkSpf(ip, helo, sender),
      );
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
          .map((row) => ({
            ...(row.id ? { id: row.id } : {}),
            domain: row.signingDomain,
            ...(row.status.aligned !== undefined ? { aligned: row.status.aligned } : {}),
            ...(row.status.underSized !== undefined ? { underSized: row.status.underSized } : {}),
          })),
        arcResult,
      };
      const keyOf = () =>
        JSON.stringify([input.headerFrom, input.spfDomains, input.dkimDomains, arcResult.status?.result]);
      const dmarcCheck = await dmarcMemo(keyOf, () => checkDmarc(input));
      if (dmarcCheck) {
        dmarcVerdict = dmarcCheck.verdict;
        if (dmarcCheck.info) results.push(dmarcCheck.info);
      }
    }

    const header = `Authentication-Results: ${authservId}${results.length > 0 ? `${RESULT_SEPARATOR}${results.join(RESULT_SEPARATOR)}` : '; none'}`;
    return {
      spf: { ...spfVerdict },
      dkim,
      dmarc: { ...dmarcVerdict },
      arc: { result: resultOf(arcResult.status) },
      header,
    };
  };
}
