/**
 * @module outbound/submission-detached
 * Messages with no sender's copy (./submission.ts): calendar invitations, the service's own emails and transactional
 * sends, queued in a transaction of their own and delivered locally at once.
 */
import { blobHash } from '../../storage/index.js';
import { AppError } from '../errors.js';
import { MAX_MESSAGE_BYTES } from '../mail/index.js';
import type { GatedSend } from '../deliverability/index.js';
import type { ComposeInput } from './compose.js';
import type { DetachedSend } from './contracts.js';
import { domainOf } from './routing.js';
import { uniqueAddresses, type SubmissionState } from './submission-state.js';

/**
 * Queues a message that has no sender's copy (invitations, system mail, transactional sends), then delivers
 * locally at once. Returns the outbound record's id (none when there was nobody to send to).
 */
export async function sendDetached(
  state: SubmissionState,
  spec: DetachedSend,
): Promise<{ outboundId: string | undefined }> {
  const { db, clock, queue, composer, gates } = state;
  const raw = await composer.signedMime(spec.input);
  if (raw.length > MAX_MESSAGE_BYTES)
    throw new AppError(
      'payload_too_large',
      `The composed message is ${raw.length} bytes; the limit is 40 MB (${MAX_MESSAGE_BYTES} bytes). Send fewer or smaller attachments.`,
    );
  // A grant's own mail (its calendar invitations) leaves the way its sends do: a connected account's through its server.
  const emails = [...spec.input.to, ...spec.input.cc, ...spec.input.bcc].map((entry) => entry.email);
  const recipients = spec.grantId !== null ? await queue.routeFor(spec.grantId, emails) : await queue.route(emails);
  if (recipients.length === 0) return { outboundId: undefined };
  // Sends from a domain pass deliverability's gates (suppression, warm-up); they and invitations are counted
  // against their sending domain. Invitations are never refused here (they answer a calendar change); the
  // service's own mail belongs to no application.
  const gated: GatedSend | undefined =
    spec.applicationId === null
      ? undefined
      : {
          applicationId: spec.applicationId,
          grant: undefined,
          from: spec.input.from.email.toLowerCase(),
          recipients: uniqueAddresses([...spec.input.to, ...spec.input.cc, ...spec.input.bcc]),
          at: clock.now().getTime(),
        };
  const { inline, outboundId } = await db.write(async (tx) => {
    if (gated && spec.kind === 'transactional') await gates.check(tx, gated);
    if (gated) await gates.count(tx, gated);
    return queue.queue(
      tx,
      {
        applicationId: spec.applicationId,
        grantId: spec.grantId,
        messageId: null,
        kind: spec.kind,
        headerMessageId: spec.input.messageId,
        subject: spec.input.subject,
        envelopeFrom: spec.envelopeFrom,
        raw,
        rawHash: blobHash(raw),
      },
      recipients,
    );
  });
  await queue.runInline(inline);
  return { outboundId };
}

/** A plain-text message with no threading or attachments, its Message-ID on the sender's domain. */
export function plainMessage(
  state: SubmissionState,
  fields: Pick<ComposeInput, 'from' | 'to' | 'subject' | 'customHeaders' | 'calendar'> & { text: string },
): ComposeInput {
  const { clock, newId } = state;
  const { text, calendar, ...rest } = fields;
  return {
    ...rest,
    cc: [],
    bcc: [],
    replyTo: [],
    body: text,
    isPlaintext: true,
    attachments: [],
    messageId: `${newId()}@${domainOf(fields.from.email)}`,
    date: clock.now(),
    inReplyTo: undefined,
    references: [],
    ...(calendar ? { calendar } : {}),
  };
}
