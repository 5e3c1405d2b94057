/**
 * @module webhooks/signatures
 * Signing webhook deliveries, and verifying them on the receiving side. Every delivery carries two signatures
 * made with the subscription's one `webhook_secret`:
 *
 * 1. **Nylas** (`X-Nylas-Signature`): lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret
 *    string's UTF-8 bytes, as Nylas v3 does. Receivers written for Nylas work unchanged. It has no timestamp,
 *    so it does not stop replays.
 * 2. **Standard Webhooks** (`webhook-id`, `webhook-timestamp`, `webhook-signature`, standardwebhooks.com):
 *    `v1,` + base64 HMAC-SHA256 of `"<id>.<timestamp>.<body>"`. The id is the notification id, the same on
 *    every attempt, so receivers can deduplicate; the timestamp (unix seconds) lets them reject replays.
 *
 * Secret encoding: secrets are `whsec_` + base64 of 32 random bytes, the Standard Webhooks format. For the
 * Standard Webhooks signature the key is the base64-decoded part after `whsec_` (what its verifier libraries
 * do with such a secret); for `X-Nylas-Signature` the key is the whole secret string, as Nylas receivers use
 * theirs. So one secret, pasted as is, works with both kinds of verifier.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Prefix of Standard Webhooks secrets. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** How far a Standard Webhooks timestamp may be from the receiver's clock, either way (the spec's suggestion). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

type Bytes = string | Uint8Array;

const toBuffer = (value: Bytes) =>
  typeof value === 'string'
    ? Buffer.from(value, 'utf8')
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);

/** A new secret from 32 random bytes. */
export function newWebhookSecret(random: Buffer): string {
  return `${WEBHOOK_SECRET_PREFIX}${random.toString('base64')}`;
}

/** The HMAC key of the Standard Webhooks scheme: base64-decoded after `whsec_`, else the secret's UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  return secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** `X-Nylas-Signature`: hex HMAC-SHA256 of the body, keyed with the secret string. */
export function nylasSignature(secret: string, body: Bytes): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(toBuffer(body)).digest('hex');
}

/** `webhook-signature` (one signature): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function standardSignature(secret: string, id: string, timestamp: number, body: Bytes): string {
  const mac = createHmac('sha256', standardKey(secret))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(toBuffer(body))
    .digest('base64');
  return `v1,${mac}`;
}

/** Both signatures as request headers. */
export function signatureHeaders(secret: string, id: string, timestamp: number, body: Bytes): Record<string, string> {
  return {
    'x-nylas-signature': nylasSignature(secret, body),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secret, id, timestamp, body),
  };
}

/** Request headers in any common shape: a WHATWG `Headers`, or Node's lower-cased `IncomingHttpHeaders`. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/** Constant-time comparison of two byte strings (false, without early exit, when the lengths differ). */
function sameBytes(left: Buffer, right: Buffer): boolean {
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** Options of {@link verifyWebhookSignature}. */
export interface VerifyWebhookOptions {
  /** The subscription's `webhook_secret`, exactly as returned on create or rotate. */
  secret: string;
  /** The raw request body, byte for byte as received (not re-serialised JSON). */
  body: Bytes;
  headers: HeaderSource;
  /**
   * `standard` (default): the Standard Webhooks headers, with the timestamp checked against `now` (replays
   * rejected). `nylas`: `X-Nylas-Signature` only (no replay protection). Choose one: accepting either lets an
   * attacker strip the stronger one.
   */
  scheme?: 'standard' | 'nylas';
  /** The receiver's current time; required for the `standard` scheme's timestamp check. */
  now?: Date;
  /** Accepted clock difference for `standard`, in seconds (default 300). */
  toleranceSeconds?: number;
}

/** The verdict; `reason` says why a request was rejected. */
export interface WebhookVerification {
  valid: boolean;
  scheme: 'standard' | 'nylas';
  /** The notification id (`webhook-id`) under the standard scheme: deduplicate on it. */
  id?: string;
  reason?: string;
}

/**
 * Verifies a delivery on the receiving side, comparing signatures in constant time. Returns a verdict rather
 * than throwing, so a receiver can answer 400 with the reason.
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): WebhookVerification {
  const scheme = options.scheme ?? 'standard';
  if (scheme === 'nylas') {
    const given = (header(options.headers, 'x-nylas-signature') ?? '')
      .trim()
      .replace(/^sha256=/i, '')
      .toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(given))
      return { valid: false, scheme, reason: 'missing or malformed X-Nylas-Signature header' };
    const valid = sameBytes(
      Buffer.from(given, 'hex'),
      Buffer.from(nylasSignature(options.secret, options.body), 'hex'),
    );
    return valid ? { valid, scheme } : { valid, scheme, reason: 'X-Nylas-Signature does not match the body' };
  }

  const id = header(options.headers, 'webhook-id');
  const timestampText = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestampText || !signatures)
    return { valid: false, scheme, reason: 'missing webhook-id, webhook-timestamp or webhook-signature header' };
  if (!/^\d{1,12}$/.test(timestampText))
    return { valid: false, scheme, id, reason: 'malformed webhook-timestamp header' };
  if (!options.now)
    return { valid: false, scheme, id, reason: 'no current time given to check webhook-timestamp against' };
  const timestamp = Number(timestampText);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(Math.floor(options.now.getTime() / 1000) - timestamp) > tolerance) {
    return {
      valid: false,
      scheme,
      id,
      reason: `webhook-timestamp is more than ${tolerance} s away from now (a replay or a wrong clock)`,
    };
  }
  const expected = Buffer.from(
    standardSignature(options.secret, id, timestamp, options.body).slice('v1,'.length),
    'base64',
  );
  // The header may list several space-separated signatures (e.g. during a secret rotation); one match suffices.
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    if (sameBytes(Buffer.from(value, 'base64'), expected)) matched = true;
  }
  return matched
    ? { valid: true, scheme, id }
    : { valid: false, scheme, id, reason: 'no webhook-signature matches the body' };
}
