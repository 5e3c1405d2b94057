/**
 * @module outbound/outbound-queue-accept
 * Acceptance into the outbound queue (./outbound-queue.ts), inside the caller's transaction: the ledger rows, the
 * failures known at once, and the `mail.deliver` jobs (the first one leased to the caller).
 */
import { eq } from 'drizzle-orm';
import { putBlobs, releaseBlobs, tables, type Tx } from '../../storage/index.js';
import type { Job } from '../jobs/index.js';
import type { OutboundSpec, RoutedRecipient } from './contracts.js';
import { DELIVER_JOB, emit, INLINE_LEASE_MS, type QueueState } from './outbound-queue-state.js';
import { rememberCorrespondents } from './outbound-store.js';

/**
 * Queues a composed message inside the caller's transaction: the ledger rows, one job for the local recipients
 * (returned, already leased to the caller, who runs it at once with {@link runInline} after the commit) and one
 * per remote domain (the workers take those).
 */
export async function queue(
  state: QueueState,
  tx: Tx,
  spec: OutboundSpec,
  recipients: RoutedRecipient[],
): Promise<{ outboundId: string; inline: Job | undefined }> {
  const at = state.nowMs();
  const id = state.newId();
  const open = recipients.some((recipient) => !recipient.failed);
  // The sender's copy stored the same bytes already in this transaction.
  if (spec.messageId === null) await putBlobs(tx, [{ bytes: spec.raw, hash: spec.rawHash }], Math.floor(at / 1000));
  const [outbound] = await tx
    .insert(tables.outboundMessages)
    .values({
      id,
      applicationId: spec.applicationId,
      grantId: spec.grantId,
      messageId: spec.messageId,
      kind: spec.kind,
      headerMessageId: spec.headerMessageId,
      subject: spec.subject.slice(0, 998),
      envelopeFrom: spec.envelopeFrom,
      rawHash: spec.rawHash,
      pendingRawHash: open ? spec.rawHash : null,
      rawSize: spec.raw.length,
      trackingOptions: spec.trackingOptions ?? null,
      provenance: spec.provenance ?? null,
      acceptedAt: at,
      updatedAt: at,
    })
    .returning();
  const rows = recipients.map((recipient) => ({
    outboundId: id,
    email: recipient.email,
    domain: recipient.domain,
    route: recipient.route,
    status: recipient.failed ? ('failed' as const) : ('queued' as const),
    lastCode: recipient.failed?.code ?? null,
    lastResponse: recipient.failed?.response ?? null,
    updatedAt: at,
    finalAt: recipient.failed ? at : null,
  }));
  for (let index = 0; index < rows.length; index += 100)
    await tx.insert(tables.outboundRecipients).values(rows.slice(index, index + 100));
  if (spec.grantId) await rememberCorrespondents(tx, spec.grantId, rows, at);
  const failedAtOnce = rows.filter((row) => row.status === 'failed');
  await emit(state, tx, outbound!, 'message.send_failed', failedAtOnce);
  // An unknown mailbox on a domain of ours: the synchronous 550 is a bounce too.
  for (const row of failedAtOnce)
    await state.reports.recordDeliveryFailure(tx, outbound!, {
      email: row.email,
      code: row.lastCode ?? 550,
      response: row.lastResponse ?? '',
      source: 'smtp',
    });
  if (!open) {
    await releaseBlobs(tx, [spec.rawHash]);
    return { outboundId: id, inline: undefined };
  }
  let inline: Job | undefined;
  const pending = recipients.filter((recipient) => !recipient.failed);
  // Local delivery, or a submission to the sending account's server, is tried at once by the request (a connected
  // account's recipients are all `submission`, never local or remote).
  const first = pending.some((recipient) => recipient.route === 'local')
    ? 'local'
    : pending.some((recipient) => recipient.route === 'submission')
      ? 'submission'
      : undefined;
  if (first) {
    const payload = { outbound_id: id, route: first };
    const { id: jobId } = await state.jobs.enqueueIn(tx, {
      kind: DELIVER_JOB,
      payload,
      dedupeKey: `${DELIVER_JOB}:${id}:${first}`,
    });
    const owner = `inline-${state.newId()}`;
    const leaseExpiresAt = at + INLINE_LEASE_MS;
    await tx
      .update(tables.jobs)
      .set({ leaseOwner: owner, leaseExpiresAt, attempts: 1 })
      .where(eq(tables.jobs.id, jobId));
    inline = {
      id: jobId,
      kind: DELIVER_JOB,
      payload,
      runAt: at,
      attempts: 1,
      leaseOwner: owner,
      leaseExpiresAt,
      lastError: null,
      dedupeKey: `${DELIVER_JOB}:${id}:${first}`,
      createdAt: at,
      deadAt: null,
      orderKey: null,
    };
  }
  for (const domain of new Set(
    pending.filter((recipient) => recipient.route === 'remote').map((recipient) => recipient.domain),
  )) {
    await state.jobs.enqueueIn(tx, {
      kind: DELIVER_JOB,
      payload: { outbound_id: id, route: 'remote', domain },
      dedupeKey: `${DELIVER_JOB}:${id}:${domain}`,
    });
  }
  return { outboundId: id, inline };
}
