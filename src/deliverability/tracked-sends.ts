/**
 * @module deliverability/tracked-sends
 * The record of a send with tracking on (`tracked_messages`), written in the send's own transaction
 * (src/outbound/submission.ts `accept`): what is tracked, the label, and how replies will find it (its Message-ID,
 * its thread). Its id is made before the message is composed, because the pixel and the rewritten links carry it.
 */
import { tables, type Tx } from '../../storage/index.js';
import type { StoredTrackingOptions } from '../../storage/schema/outbound.js';

/** Whether tracking options ask for anything to be tracked (a label alone tracks nothing). */
export function tracksAnything(options: StoredTrackingOptions | undefined): options is StoredTrackingOptions {
  return options !== undefined && (options.opens === true || options.links === true || options.thread_replies === true);
}

/** A tracked send, as recorded. */
export interface TrackedSend {
  /** The tracking id (made before composing). */
  id: string;
  applicationId: string;
  grantId: string;
  /** The sender's copy. */
  messageId: string;
  threadId: string;
  outboundId: string;
  /** Normalised Message-ID (lower case, no angle brackets). */
  headerMessageId: string;
  options: StoredTrackingOptions;
  /** The links of the HTML body as written, in order, when links are tracked. */
  links: string[];
  /** Unix milliseconds of the send. */
  sentAt: number;
}

/** Writes the record of a tracked send (and its links) in the send's transaction. */
export async function recordTrackedSend(tx: Tx, send: TrackedSend): Promise<void> {
  await tx.insert(tables.trackedMessages).values({
    id: send.id,
    messageId: send.messageId,
    applicationId: send.applicationId,
    grantId: send.grantId,
    outboundId: send.outboundId,
    headerMessageId: send.headerMessageId.toLowerCase(),
    threadId: send.threadId,
    opens: send.options.opens === true,
    links: send.options.links === true,
    threadReplies: send.options.thread_replies === true,
    label: send.options.label ?? null,
    sentAt: send.sentAt,
  });
  for (let start = 0; start < send.links.length; start += 200) {
    await tx.insert(tables.trackingLinks).values(send.links.slice(start, start + 200).map((url, offset) => ({ messageId: send.id, linkIndex: start + offset, url })));
  }
}
