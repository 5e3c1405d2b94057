/**
 * @module trust/authentication
 * SPF, DKIM and DMARC as the `trust` block names them, from what ingest kept: the stored verdict of the inbound
 * authentication stage (`messages.verdict.authentication`, written by src/mail/stages/authentication.ts with mailauth),
 * or else the topmost `Authentication-Results` field of the message when a trusted authserv-id wrote it (this
 * service prepends one to every message it authenticates; a connected provider writes its own).
 */
import type {
  AuthenticationInput,
  AuthenticationVerdicts,
  StoredAuthentication,
  TrustAuthResult,
} from './contracts.js';

/**
 * mailauth's and RFC 8601's result words → the seven the block uses. `temperr`/`permerr` are mailauth spellings;
 * `hardfail` an old SPF one; `policy` (signed, but not acceptable to the verifier, e.g. a short key) proves nothing,
 * so `neutral`. Anything else is not a verdict: `none`.
 */
const RESULT_WORDS: Readonly<Record<string, TrustAuthResult>> = {
  pass: 'pass',
  fail: 'fail',
  hardfail: 'fail',
  softfail: 'softfail',
  neutral: 'neutral',
  policy: 'neutral',
  none: 'none',
  temperror: 'temperror',
  temperr: 'temperror',
  permerror: 'permerror',
  permerr: 'permerror',
};

/** One result word as the block names it. */
export function authResultOf(word: string | undefined): TrustAuthResult {
  return (word !== undefined && RESULT_WORDS[word.trim().toLowerCase()]) || 'none';
}

/**
 * Of several DKIM signatures, the one that decides: any pass passes (RFC 6376 6.1: a verifier reports each, and one
 * valid signature authenticates its domain); otherwise the strongest failure, then the errors.
 */
const DKIM_ORDER: readonly TrustAuthResult[] = [
  'pass',
  'fail',
  'softfail',
  'permerror',
  'temperror',
  'neutral',
  'none',
];

/** The deciding verdict of several signatures' results. */
export function combinedDkim(results: readonly TrustAuthResult[]): TrustAuthResult {
  let best = DKIM_ORDER.length - 1;
  for (const result of results) best = Math.min(best, DKIM_ORDER.indexOf(result));
  return DKIM_ORDER[best]!;
}

/** The stored verdict → the block's three words. */
export function verdictsFromStored(stored: StoredAuthentication): AuthenticationVerdicts {
  return {
    spf: authResultOf(stored.spf?.result),
    dkim: combinedDkim((stored.dkim ?? []).map((row) => authResultOf(row.result))),
    dmarc: authResultOf(stored.dmarc?.result),
  };
}

/** Longest `Authentication-Results` value read; real ones are well under 4 KB (a few results per method). */
const MAX_HEADER_CHARS = 16_384;

/** A parsed `Authentication-Results` value: its authserv-id and each `method=result`, in order. */
export interface ParsedAuthenticationResults {
  authservId: string;
  results: { method: string; result: string }[];
}

/**
 * Reads an `Authentication-Results` value (RFC 8601 2.2): `authserv-id [version] ; method=result props ; …`, with
 * comments in parentheses (nested) and quoted strings skipped. One pass over at most {@link MAX_HEADER_CHARS}.
 */
export function parseAuthenticationResults(value: string): ParsedAuthenticationResults {
  const text = value.length > MAX_HEADER_CHARS ? value.slice(0, MAX_HEADER_CHARS) : value;
  // Split on top-level semicolons, dropping comments.
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (quoted) {
      if (char === '\\') at++;
      else if (char === '"') quoted = false;
      continue;
    }
    if (depth > 0) {
      if (char === '\\') at++;
      else if (char === '(') depth++;
      else if (char === ')') depth--;
      continue;
    }
    if (char === '(') depth = 1;
    else if (char === '"') quoted = true;
    else if (char === ';') {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  const authservId = (parts[0] ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  const results: ParsedAuthenticationResults['results'] = [];
  for (const part of parts.slice(1)) {
    const match = /^\s*([A-Za-z0-9_.-]{1,64})\s*=\s*([A-Za-z]{1,32})/.exec(part);
    if (match) results.push({ method: match[1]!.toLowerCase(), result: match[2]!.toLowerCase() });
  }
  return { authservId, results };
}

/** The block's three words from an `Authentication-Results` value (methods absent from it are `none`). */
export function verdictsFromHeader(parsed: ParsedAuthenticationResults): AuthenticationVerdicts {
  const of = (method: string) => parsed.results.filter((row) => row.method === method).map((row) => row.result);
  const spf = of('spf');
  const dmarc = of('dmarc');
  return {
    spf: authResultOf(spf[0]),
    dkim: combinedDkim(of('dkim').map(authResultOf)),
    dmarc: authResultOf(dmarc[0]),
  };
}

const NONE: AuthenticationVerdicts = { spf: 'none', dkim: 'none', dmarc: 'none' };

/**
 * SPF, DKIM and DMARC of a message: from the stored verdict when ingest made one, else from the topmost
 * `Authentication-Results` field when its authserv-id is trusted, else `none` for each (nothing to believe).
 */
export function authenticationVerdicts(input: AuthenticationInput | undefined): AuthenticationVerdicts {
  if (!input) return { ...NONE };
  if (input.stored) return verdictsFromStored(input.stored);
  const topmost = input.headers?.[0];
  if (topmost === undefined) return { ...NONE };
  const parsed = parseAuthenticationResults(topmost);
  const trusted = (input.trustedAuthservIds ?? []).some((id) => id.toLowerCase() === parsed.authservId);
  return trusted ? verdictsFromHeader(parsed) : { ...NONE };
}
