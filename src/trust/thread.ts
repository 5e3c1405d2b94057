/**
 * @module trust/thread
 * Whether a message claims a conversation this mailbox has no record of: In-Reply-To and References naming only
 * messages it never had, or a reply's subject (`Re:`, `AW:`, `SV:`, `回复:` …) with no references at all. A person
 * newly added to a real thread sees the same thing, so the verdict says "unverified thread", not "attack"; with a
 * failed DMARC or an unknown sender it is the shape of a forged reply (business email compromise).
 */
import type { ForgedThread } from './contracts.js';
import { MAX_REFERENCED_IDS } from './contracts.js';

/** What the check reads. */
export interface ThreadClaim {
  subject?: string | undefined;
  inReplyTo?: string | null | undefined;
  references?: readonly string[] | undefined;
  knownMessageId?: ((id: string) => boolean) | undefined;
}

/**
 * Reply prefixes of the common mail clients (English, German, Nordic, Dutch, Polish, Finnish, Italian, Spanish,
 * Portuguese, Turkish, Chinese, Japanese), optionally after a `[list]` tag, before `:` or a full-width `：`.
 */
const REPLY_SUBJECT =
  /^\s{0,8}(?:\[[^\]\n]{0,64}\]\s{0,4})?(?:re|aw|sv|vs|antw|odp|rif|r|res|ynt|回复|回覆|答复|返信)\s{0,2}(?:\[\d{1,4}\])?\s{0,2}[:：]/i;

/** A Message-ID as kept (`messages.in_reply_to`, `references`): lower case, without angle brackets or spaces. */
export function normaliseMessageId(id: string): string {
  return id.trim().replace(/^<|>$/g, '').trim().toLowerCase();
}

/** Whether a subject reads as a reply. */
export function isReplySubject(subject: string | undefined): boolean {
  return subject !== undefined && REPLY_SUBJECT.test(subject.slice(0, 256));
}

/**
 * The forged-thread verdict. The ids named (In-Reply-To first, then References newest first, at most
 * {@link MAX_REFERENCED_IDS}) are each asked of `knownMessageId`; detected when there are some and none is known, or
 * when there are none and the subject reads as a reply. Without a `knownMessageId` (nothing to ask), only the subject
 * rule applies.
 */
export function forgedThread(claim: ThreadClaim): ForgedThread {
  const ids: string[] = [];
  const seen = new Set<string>();
  const add = (raw: string | null | undefined) => {
    if (!raw || ids.length >= MAX_REFERENCED_IDS) return;
    const id = normaliseMessageId(raw);
    if (id.length === 0 || seen.has(id)) return;
    seen.add(id);
    ids.push(id);
  };
  add(claim.inReplyTo);
  const references = claim.references ?? [];
  for (let index = references.length - 1; index >= 0 && ids.length < MAX_REFERENCED_IDS; index--)
    add(references[index]);

  if (ids.length === 0) {
    return isReplySubject(claim.subject)
      ? { detected: true, reason: 'reply_without_references', referenced: 0, unknown: 0 }
      : { detected: false, referenced: 0, unknown: 0 };
  }
  const known = claim.knownMessageId;
  if (!known) return { detected: false, referenced: ids.length, unknown: 0 };
  let unknown = 0;
  for (const id of ids) if (!known(id)) unknown++;
  return unknown === ids.length
    ? { detected: true, reason: 'unknown_references', referenced: ids.length, unknown }
    : { detected: false, referenced: ids.length, unknown };
}
