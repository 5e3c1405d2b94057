/**
 * @module mail/stages/policy-limits
 * Stage 4 of inbound mail: the limits of the recipient's policy. Pure: the caller supplies the usage it read.
 * - `limit_size_total_mime`: a larger message is refused with `552 5.3.4`;
 * - `limit_count_daily_message_received` (messages stored today, UTC) and `limit_storage_total` (bytes of stored raw
 *   mail, this message included): refused with `452 4.2.2` (a temporary failure: the sender retries tomorrow, or once
 *   mail was deleted);
 * - attachments larger than `limit_attachment_size_limit`, beyond `limit_attachment_count_limit`, or of a type not in
 *   `limit_attachment_allowed_types` are removed from the stored message, each named with why.
 * A limit that is absent, or negative (the wire's `-1`), does not apply.
 */
import type { StoredPolicyLimits } from '../../../storage/index.js';
import type { Refusal, RemovedAttachment } from '../contracts.js';

export type { Refusal, RemovedAttachment } from '../contracts.js';

/** What the policy limits look at: the message's size and the grant's usage (each optional: unknown is not checked). */
export interface UsageFacts {
  /** Bytes of the message (or the SIZE declared at MAIL FROM). */
  size?: number | undefined;
  /** Messages the grant received today (UTC) before this one. */
  receivedToday?: number | undefined;
  /** Bytes of the grant's stored mail before this message. */
  storedBytes?: number | undefined;
}

/** A limit's value when it applies (a non-negative number), else undefined. */
export function limitOf(limits: StoredPolicyLimits | undefined, name: keyof StoredPolicyLimits): number | undefined {
  const value = limits?.[name];
  return typeof value === 'number' && value >= 0 ? value : undefined;
}

/** Whether the limits need the grant's daily count or stored bytes (so the caller reads them only then). */
export function usageNeeded(limits: StoredPolicyLimits | undefined): { receivedToday: boolean; storedBytes: boolean } {
  return {
    receivedToday: limitOf(limits, 'limit_count_daily_message_received') !== undefined,
    storedBytes: limitOf(limits, 'limit_storage_total') !== undefined,
  };
}

/** The refusal the limits give a message, or undefined when they let it in. */
export function limitRefusal(limits: StoredPolicyLimits | undefined, facts: UsageFacts): Refusal | undefined {
  const maxSize = limitOf(limits, 'limit_size_total_mime');
  if (maxSize !== undefined && facts.size !== undefined && facts.size > maxSize) {
    return {
      code: 552,
      enhanced: '5.3.4',
      message: `Message too big for this mailbox: the limit is ${maxSize} bytes`,
      reason: 'limit_size_total_mime',
    };
  }
  const daily = limitOf(limits, 'limit_count_daily_message_received');
  if (daily !== undefined && facts.receivedToday !== undefined && facts.receivedToday >= daily) {
    return {
      code: 452,
      enhanced: '4.2.2',
      message: `Mailbox has received its ${daily} messages for today (UTC), try again tomorrow`,
      reason: 'limit_count_daily_message_received',
    };
  }
  const storage = limitOf(limits, 'limit_storage_total');
  if (storage !== undefined && facts.storedBytes !== undefined && facts.storedBytes + (facts.size ?? 0) > storage) {
    return {
      code: 452,
      enhanced: '4.2.2',
      message: `Mailbox full: its storage limit is ${storage} bytes`,
      reason: 'limit_storage_total',
    };
  }
  return undefined;
}

/**
 * Whether a content type is allowed by a list of types: exact (`application/pdf`), a whole major type (`image/*`),
 * or a file extension (`.pdf` or `pdf`) matched against the file name. Case is ignored.
 */
export function typeAllowed(allowed: readonly string[], contentType: string, filename: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const name = filename.toLowerCase();
  return allowed.some((entry) => {
    const wanted = entry.trim().toLowerCase();
    if (wanted === '*' || wanted === '*/*' || wanted === type) return true;
    if (wanted.endsWith('/*')) return type.startsWith(wanted.slice(0, -1));
    if (!wanted.includes('/')) return name.endsWith(wanted.startsWith('.') ? wanted : `.${wanted}`);
    return false;
  });
}

/**
 * Which attachments stay: one flag per attachment (in order) and the removed ones with their reason. Checked in this
 * order: type, then size; the count limit keeps the first attachments that passed both.
 */
export function decideAttachments(
  limits: StoredPolicyLimits | undefined,
  attachments: readonly { filename: string; contentType: string; size: number }[],
): { keep: boolean[]; removed: RemovedAttachment[] } {
  const maxSize = limitOf(limits, 'limit_attachment_size_limit');
  const maxCount = limitOf(limits, 'limit_attachment_count_limit');
  const allowed = limits?.limit_attachment_allowed_types;
  const removed: RemovedAttachment[] = [];
  let kept = 0;
  const keep = attachments.map((attachment) => {
    let reason: string | undefined;
    if (allowed && allowed.length > 0 && !typeAllowed(allowed, attachment.contentType, attachment.filename))
      reason = 'type not allowed (limit_attachment_allowed_types)';
    else if (maxSize !== undefined && attachment.size > maxSize)
      reason = `larger than ${maxSize} bytes (limit_attachment_size_limit)`;
    else if (maxCount !== undefined && kept >= maxCount)
      reason = `more than ${maxCount} attachments (limit_attachment_count_limit)`;
    if (reason === undefined) {
      kept++;
      return true;
    }
    removed.push({
      filename: attachment.filename,
      content_type: attachment.contentType,
      size: attachment.size,
      reason,
    });
    return false;
  });
  return { keep, removed };
}
