/**
 * @module deliverability/reports-record
 * Recording reports for the intake (./reports.ts): a report and its effects inside the caller's transaction, a
 * delivery failure of the queue, and the reports of one raw report recorded once.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { putBlobs, tables, type Tx } from '../../storage/index.js';
import { unixSeconds } from '../time.js';
import { classifyBounce, codesIn } from './bounce-classification.js';
import type { RecordedReport } from './contracts.js';
import {
  bounceObject,
  complaintObject,
  MAX_REASON,
  type IntakeState,
  type NewReport,
  type OutboundRow,
} from './reports-state.js';

/** Records a report and its effects inside the caller's transaction. Returns its id (undefined for system mail). */
export async function record(state: IntakeState, tx: Tx, report: NewReport): Promise<string | undefined> {
  const { outbound } = report;
  if (!outbound.applicationId) return undefined;
  const id = state.newId();
  const at = state.clock.now().getTime();
  const reason =
    report.reason.replace(/\s+/g, ' ').trim().slice(0, MAX_REASON) ||
    (report.kind === 'complaint' ? 'abuse' : 'undeliverable');
  const stored: NewReport = { ...report, reason };
  await tx.insert(tables.deliveryReports).values({
    id,
    applicationId: outbound.applicationId,
    grantId: outbound.grantId,
    outboundId: outbound.id,
    messageId: outbound.messageId,
    recipient: report.recipient,
    kind: report.kind,
    bounceType: report.kind === 'bounce' ? (report.bounceType ?? 'soft') : null,
    statusCode: report.statusCode ?? null,
    smtpCode: report.smtpCode ?? null,
    reason,
    source: report.source,
    rawHash: report.rawHash ?? null,
    at,
  });
  if (report.kind === 'bounce' && report.source === 'dsn') {
    // The relay took it, the far end gave up: the recipient's delivery failed after all.
    await tx
      .update(tables.outboundRecipients)
      .set({ status: 'failed', finalAt: at, updatedAt: at })
      .where(
        and(
          eq(tables.outboundRecipients.outboundId, outbound.id),
          eq(tables.outboundRecipients.email, report.recipient),
          eq(tables.outboundRecipients.status, 'delivered'),
        ),
      );
  }
  if (report.kind === 'complaint' || report.bounceType === 'hard') {
    await tx
      .insert(tables.suppressions)
      .values({
        applicationId: outbound.applicationId,
        email: report.recipient,
        reason: report.kind === 'complaint' ? 'complaint' : 'hard_bounce',
        reportId: id,
        createdAt: unixSeconds(new Date(at)),
      })
      .onConflictDoNothing();
  }
  await state.recordOutboxEvent(tx, {
    applicationId: outbound.applicationId,
    grantId: outbound.grantId ?? undefined,
    type: report.kind === 'bounce' ? 'message.bounce_detected' : 'message.complaint',
    object:
      report.kind === 'bounce' ? bounceObject(outbound, stored, id, at) : complaintObject(outbound, stored, id, at),
  });
  const recorded: RecordedReport = {
    applicationId: outbound.applicationId,
    grantId: outbound.grantId,
    kind: report.kind,
    bounceType: report.kind === 'bounce' ? (report.bounceType ?? 'soft') : undefined,
    recipient: report.recipient,
    from: outbound.envelopeFrom,
    at,
  };
  for (const listener of state.options.listeners) await listener.reported(tx, recorded);
  return id;
}

/**
 * A permanent failure during delivery, as a bounce (inside the transaction that records the attempt): `smtp` for
 * a 5xx reply, `timeout` when the queue gave up (always soft).
 */
export async function recordDeliveryFailure(
  state: IntakeState,
  tx: Tx,
  outbound: OutboundRow,
  failure: { email: string; code: number; response: string; source: 'smtp' | 'timeout' },
): Promise<void> {
  const codes = codesIn(failure.response);
  const smtpCode = failure.code > 0 ? failure.code : codes.smtpCode;
  // Our own address policy refusing a domain whose mail servers are all private (outbound/routing.ts, 5.4.4) says
  // nothing about the address: soft, like the give-up of the queue.
  const ownPolicy = /have only non-public addresses/.test(failure.response);
  const bounceType =
    failure.source === 'timeout' || ownPolicy
      ? 'soft'
      : classifyBounce({ status: codes.status, smtpCode, diagnostic: failure.response });
  await record(state, tx, {
    outbound,
    recipient: failure.email,
    kind: 'bounce',
    bounceType,
    statusCode: codes.status,
    smtpCode,
    reason: failure.response,
    source: failure.source,
  });
}

/**
 * Records the reports a raw report made, with the raw report as a blob, durably (resolves once synced), leaving
 * out those already recorded from the same bytes (a sender retrying after our 4xx, the report sent twice to the
 * same path, or synced twice). Returns the ids recorded.
 */
export async function recordOnce(
  state: IntakeState,
  raw: Buffer,
  rawHash: string,
  reports: readonly NewReport[],
): Promise<string[]> {
  return state.db.durableWrite(async (tx) => {
    const again = await tx
      .select({ outboundId: tables.deliveryReports.outboundId, recipient: tables.deliveryReports.recipient })
      .from(tables.deliveryReports)
      .where(
        and(
          eq(tables.deliveryReports.rawHash, rawHash),
          inArray(
            tables.deliveryReports.outboundId,
            reports.map((report) => report.outbound.id),
          ),
        ),
      );
    const fresh = reports.filter(
      (report) => !again.some((row) => row.outboundId === report.outbound.id && row.recipient === report.recipient),
    );
    if (fresh.length === 0) return [];
    await putBlobs(tx, [{ bytes: raw, hash: rawHash }], unixSeconds(state.clock.now()));
    const ids: string[] = [];
    for (const report of fresh) {
      const id = await record(state, tx, report);
      if (id) ids.push(id);
    }
    return ids;
  });
}
