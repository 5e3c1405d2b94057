/**
 * @module outbound/outbound-queue-state
 * What the parts of the outbound queue (./outbound-queue.ts) share: the state made once by `createOutboundQueue`, a
 * message to queue, and the events and the release of a message whose recipients are all final.
 */
import { eq } from 'drizzle-orm';
import { releaseBlobs, tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { eventRecorder } from '../outbox/index.js';
import type { JobQueue } from '../jobs/index.js';
import type { ReportIntake } from '../deliverability/index.js';
import type { Providers } from '../providers/index.js';
import type { DeliveryAttempts, OutboundRow, RecipientRow } from './contracts.js';

/** The job kind of a delivery attempt. */
export const DELIVER_JOB = 'mail.deliver';
/** Lease of a first attempt run by the request that accepted the message (the worker takes over after it). */
export const INLINE_LEASE_MS = 60_000;

/** What the functions of the queue share, made once by `createOutboundQueue`. */
export interface QueueState {
  db: CoreDeps['db'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  config: CoreDeps['config'];
  deps: CoreDeps;
  jobs: JobQueue;
  /** Permanent failures become bounce reports; remote delivery asks it for each recipient's VERP return path. */
  reports: Pick<ReportIntake, 'recordDeliveryFailure' | 'returnPaths'>;
  providers: Providers | undefined;
  recordOutboxEvent: ReturnType<typeof eventRecorder>;
  nowMs: () => number;
  deliverLocal: DeliveryAttempts['deliverLocal'];
  deliverRemote: DeliveryAttempts['deliverRemote'];
}

export function eventObject(
  outbound: OutboundRow,
  rows: Pick<RecipientRow, 'email' | 'status' | 'lastCode' | 'lastResponse'>[],
) {
  return {
    id: outbound.messageId ?? outbound.id,
    grant_id: outbound.grantId,
    object: 'message',
    subject: outbound.subject,
    message_id_header: `<${outbound.headerMessageId}>`,
    recipients: rows.map((row) => ({
      email: row.email,
      status: row.status,
      code: row.lastCode ?? 0,
      diagnostic_code: row.lastResponse ?? '',
    })),
    // Who made the send (extension; issue 36).
    ...(outbound.provenance ? { provenance: outbound.provenance } : {}),
  };
}

/** Records `type` for the message when it belongs to an application. */
export async function emit(
  state: QueueState,
  tx: Tx,
  outbound: OutboundRow,
  type: 'message.send_failed' | 'message.send_success',
  rows: Parameters<typeof eventObject>[1],
) {
  if (!outbound.applicationId || rows.length === 0) return;
  await state.recordOutboxEvent(tx, {
    applicationId: outbound.applicationId,
    grantId: outbound.grantId ?? undefined,
    type,
    objectId: outbound.messageId ?? outbound.id,
    object: eventObject(outbound, rows),
  });
}

/** Once every recipient is final: the queue lets go of the raw message (the sender's copy, if any, keeps it). */
export async function finishIfDone(state: QueueState, tx: Tx, outbound: OutboundRow): Promise<void> {
  const rows = await tx
    .select()
    .from(tables.outboundRecipients)
    .where(eq(tables.outboundRecipients.outboundId, outbound.id));
  if (rows.some((row) => row.status === 'queued' || row.status === 'deferred')) return;
  await tx
    .update(tables.outboundMessages)
    .set({ pendingRawHash: null, updatedAt: state.nowMs() })
    .where(eq(tables.outboundMessages.id, outbound.id));
  await releaseBlobs(tx, [outbound.rawHash]);
  if (outbound.kind === 'message')
    await emit(
      state,
      tx,
      outbound,
      'message.send_success',
      rows.filter((row) => row.status === 'delivered'),
    );
}
