/**
 * @module mail/inbound-recipients
 * Where inbound mail goes (./inbound.ts): whether an address is a hosted mailbox here (exact, or subaddressed), a
 * relay asked of us, or an unknown mailbox of a hosted domain; found mailboxes remembered for a moment.
 */
import { eq } from 'drizzle-orm';
import { findGrantByEmail, tables } from '../../storage/index.js';
import { HOSTED_PROVIDER } from '../providers/index.js';
import type { InboundState, RecipientCheck } from './inbound-state.js';

/**
 * How long a mailbox found for an address is remembered: an SMTP session looks its recipients up at RCPT TO and
 * again when the data is in, and bulk senders repeat the same few addresses. Only found mailboxes are remembered,
 * so a new one is reachable at once. A mailbox deleted in this window is not: its message fails to store (its rows
 * refer to the grant), the sender gets 451 and, retrying later, 550.
 */
const RECIPIENT_MEMORY_MS = 1_000;
/** Addresses remembered at most (the memory is emptied when full). */
const RECIPIENT_MEMORY_SIZE = 10_000;

/** Splits at the last `@`. */
function splitAddress(address: string): { local: string; domain: string } | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/**
 * Whether `address` is a hosted mailbox here. Given the envelope (the SMTP listener at RCPT TO), the `smtp_rcpt`
 * stage runs too: the recipient's rules and the limits known this early may refuse it (`reason: 'policy'`).
 * Rejects when that evaluation cannot complete (the listener answers 451 4.3.0).
 */
export async function checkRecipient(
  inbound: InboundState,
  address: string,
  envelope?: { mailFrom: string; size?: number | undefined },
): Promise<RecipientCheck> {
  const normalized = address.trim().toLowerCase();
  const now = performance.now();
  inbound.lastMail = now;
  const known = inbound.found.get(normalized);
  let check: RecipientCheck;
  if (known && now - known.at < RECIPIENT_MEMORY_MS) check = known.check;
  else {
    check = await lookUpRecipient(inbound, normalized);
    if (check.ok) {
      if (inbound.found.size >= RECIPIENT_MEMORY_SIZE) inbound.found.clear();
      inbound.found.set(normalized, { check, at: now });
    }
  }
  if (!check.ok || !envelope) return check;
  const refusal = await inbound.pipeline.admitRecipient(check.grant, {
    mailFrom: envelope.mailFrom,
    recipient: normalized,
    size: envelope.size,
  });
  return refusal ? { ok: false, reason: 'policy', message: refusal.message, refusal } : check;
}

async function lookUpRecipient(inbound: InboundState, normalized: string): Promise<RecipientCheck> {
  const parts = splitAddress(normalized);
  // `user%other@host`, `host!user@host`, quoted `"a@b"@host` and source routes ask us to forward elsewhere.
  if (!parts || /[%!@"]/.test(parts.local) || normalized.startsWith('@') || parts.domain.startsWith('[')) {
    return {
      ok: false,
      reason: 'relay',
      message: 'Relay access denied: this server only accepts mail for its own mailboxes',
    };
  }
  const exact = await findGrantByEmail(inbound.db.orm, normalized);
  if (exact && exact.provider === HOSTED_PROVIDER) return { ok: true, grant: exact };
  // Subaddressing: `agent+tag@domain` reaches `agent@domain`.
  const plus = parts.local.indexOf('+');
  if (!exact && plus > 0) {
    const base = await findGrantByEmail(inbound.db.orm, `${parts.local.slice(0, plus)}@${parts.domain}`);
    if (base && base.provider === HOSTED_PROVIDER) return { ok: true, grant: base };
  }
  const domain = await inbound.db.orm.query.domains.findFirst({
    where: eq(tables.domains.domainAddress, parts.domain),
    columns: { id: true },
  });
  if (!domain)
    return { ok: false, reason: 'relay', message: `Relay access denied: ${parts.domain} is not a hosted domain` };
  return { ok: false, reason: 'unknown', message: `Unknown mailbox: ${normalized} does not exist` };
}
