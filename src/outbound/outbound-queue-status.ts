/**
 * @module outbound/outbound-queue-status
 * What the outbound queue (./outbound-queue.ts) knows of sent messages: each recipient's delivery state, its latest
 * bounce and complaint, and the tracking options.
 */
import { reportsOf, sentStateOf } from './outbound-store.js';
import type { SentState } from './contracts.js';
import type { QueueState } from './outbound-queue-state.js';

/** Delivery state of each recipient, and the tracking options, of the given sender's copies, by message id. */
export async function statusOf(queueState: QueueState, messageIds: string[]): Promise<Map<string, SentState>> {
  const byMessage = new Map<string, SentState>();
  if (messageIds.length === 0) return byMessage;
  const rows = await sentStateOf(queueState.db.orm, { ids: JSON.stringify(messageIds) });
  for (const { messageId, trackingOptions, provenance, recipient } of rows) {
    const state: SentState = byMessage.get(messageId!) ?? {
      deliveryStatus: [],
      trackingOptions: trackingOptions ?? undefined,
      provenance: provenance ?? undefined,
    };
    state.deliveryStatus.push({
      email: recipient.email,
      status: recipient.status,
      attempts: recipient.attempts,
      ...(recipient.lastCode !== null ? { code: recipient.lastCode } : {}),
      ...(recipient.lastResponse !== null ? { response: recipient.lastResponse } : {}),
      ...(recipient.nextAttemptAt !== null ? { next_attempt_at: Math.floor(recipient.nextAttemptAt / 1000) } : {}),
      updated_at: Math.floor(recipient.updatedAt / 1000),
    });
    byMessage.set(messageId!, state);
  }
  if (byMessage.size === 0) return byMessage;
  // Later reports overwrite earlier ones: each recipient shows its latest bounce and complaint.
  for (const { messageId, report } of await reportsOf(queueState.db.orm, {
    ids: JSON.stringify([...byMessage.keys()]),
  })) {
    const status = byMessage.get(messageId!)?.deliveryStatus.find((entry) => entry.email === report.recipient);
    if (!status) continue;
    const at = Math.floor(report.at / 1000);
    if (report.kind === 'complaint') status.complaint = { type: report.reason, complained_at: at };
    else if (report.source !== 'arf') {
      status.bounce = {
        type: report.bounceType ?? 'soft',
        ...(report.statusCode !== null ? { code: report.statusCode } : {}),
        ...(report.smtpCode !== null ? { smtp_code: report.smtpCode } : {}),
        reason: report.reason,
        source: report.source,
        bounced_at: at,
      };
    }
  }
  return byMessage;
}
