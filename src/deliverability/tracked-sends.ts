/**
 * @module deliverability/tracked-sends
 * The record of a send with tracking on (`tracked_messages`), written in the send's own transaction
 * (src/outbound/submission.ts `accept`): what is tracked, the label, and how replies will find it (its Message-ID,
 * its thread). Its id is made before the message is composed, because the pixel and the rewritten links carry it.
 */
import { tables, type Tx } from '../../storage/index.js';
import type { StoredTrackingOptions } from '../../storage/schema/outbound.js';
import type { TokenSigner } from './signing.js';
import { rewriteForTracking } from './tracking-rewrite.js';

/** The signing purpose of pixel tokens (payload: the tracking id). */
export const OPEN_TOKEN_PURPOSE = 'tracking-open';
/** The signing purpose of link tokens (payload: `<tracking id>.<link index>`). */
export const CLICK_TOKEN_PURPOSE = 'tracking-click';
/** Path prefixes of the tracking routes (server/routes/tracking.ts), under the tracking URL. */
export const OPEN_PATH = '/t/o/';
export const CLICK_PATH = '/t/l/';

/** The pixel URL of a tracked message. */
export function pixelUrl(signer: TokenSigner, trackingUrl: string, trackingId: string): string {
  return `${trackingUrl}${OPEN_PATH}${signer.sign(OPEN_TOKEN_PURPOSE, trackingId)}`;
}

/** The redirect URL of link `index` (0-based, body order) of a tracked message. */
export function linkUrl(signer: TokenSigner, trackingUrl: string, trackingId: string, index: number): string {
  return `${trackingUrl}${CLICK_PATH}${signer.sign(CLICK_TOKEN_PURPOSE, `${trackingId}.${index}`)}`;
}

/** A link token's tracking id and link index, or undefined when it is not a valid link token of this key. */
export function readLinkToken(
  signer: TokenSigner,
  token: string,
): { trackingId: string; linkIndex: number } | undefined {
  const payload = signer.verify(CLICK_TOKEN_PURPOSE, token);
  if (payload === undefined) return undefined;
  const dot = payload.lastIndexOf('.');
  const index = payload.slice(dot + 1);
  if (dot <= 0 || !/^(0|[1-9][0-9]{0,5})$/.test(index)) return undefined;
  return { trackingId: payload.slice(0, dot), linkIndex: Number(index) };
}

/**
 * The body to send for a tracked message, and the original URLs of its rewritten links. An HTML body gets the
 * pixel (opens) at its end and its http(s) links rewritten (links), see ./tracking-rewrite.ts. A plain-text body is
 * sent as written: there is no image to load in it, and a redirect URL in place of a link the reader can read would
 * change what they see (its replies are still tracked).
 */
export function trackedBody(
  signer: TokenSigner,
  trackingUrl: string,
  trackingId: string,
  options: StoredTrackingOptions,
  body: string,
  isPlaintext: boolean,
): { body: string; links: string[] } {
  if (isPlaintext || (options.opens !== true && options.links !== true)) return { body, links: [] };
  const rewritten = rewriteForTracking(body, {
    pixelUrl: options.opens === true ? pixelUrl(signer, trackingUrl, trackingId) : undefined,
    linkUrl: options.links === true ? (index) => linkUrl(signer, trackingUrl, trackingId, index) : undefined,
  });
  return { body: rewritten.html, links: rewritten.links };
}

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
    await tx
      .insert(tables.trackingLinks)
      .values(
        send.links
          .slice(start, start + 200)
          .map((url, offset) => ({ messageId: send.id, linkIndex: start + offset, url })),
      );
  }
}
