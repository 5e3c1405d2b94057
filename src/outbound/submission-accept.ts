/**
 * @module outbound/submission-accept
 * A composition sent now (./submission.ts): composed, then accepted in one transaction (the outbound stage,
 * deliverability's gates, the sender's copy in `sent`, the queue, contacts, tracking, the idempotency answer),
 * then delivered to the mailboxes of this service at once.
 */
import { unixSeconds } from '../time.js';
import type { SendResult, SentMessage } from '../schemas/send.js';
import { type GatedSend, recordTrackedSend, trackedBody, tracksAnything } from '../deliverability/index.js';
import { ownCopy } from './composition.js';
import type { AcceptOptions, Composition } from './contracts.js';
import { domainOf } from './routing.js';
import { sendCandidateOf, uniqueAddresses, type SubmissionState } from './submission-state.js';

/** The extra wire fields of a sent message. */
function sentExtras(composition: Composition): Partial<SentMessage> {
  return {
    ...(composition.replyToMessageId !== undefined ? { reply_to_message_id: composition.replyToMessageId } : {}),
    ...(composition.trackingOptions !== undefined ? { tracking_options: composition.trackingOptions } : {}),
  };
}

/**
 * Sends a composition now: composes, then in one transaction passes the outbound stage (rules, daily quota, size:
 * a refusal stores nothing), stores the sender's copy in `sent`, queues every recipient, collects them as
 * contacts, records the evaluation and keeps the idempotency answer; then delivers to the mailboxes of this
 * service before returning (the others are the workers' job).
 */
export async function accept(
  state: SubmissionState,
  requested: Composition,
  options: AcceptOptions = {},
): Promise<SendResult> {
  const { db, clock, newId, config } = state;
  const { store, contacts, queue, idempotency, composer, stage, gates, signing } = state;
  const { grant } = requested;
  const date = clock.now();
  const headerMessageId = options.headerMessageId ?? `${newId()}@${domainOf(requested.from.email)}`;
  // A tracked send's id is in its pixel and links, so it is made before the message is composed; the body that is
  // composed (and so both the MIME delivered and the copy in `sent`) is the tracked one.
  const { prebuilt } = options;
  const trackingId = prebuilt ? prebuilt.tracking?.id : tracksAnything(requested.trackingOptions) ? newId() : undefined;
  let composition = requested;
  let trackedLinks: string[] = prebuilt?.tracking?.links ?? [];
  if (trackingId !== undefined && !prebuilt) {
    const tracked = trackedBody(
      await signing.signer(),
      config.deliverability.trackingUrl,
      trackingId,
      requested.trackingOptions!,
      requested.body,
      requested.isPlaintext,
    );
    composition = { ...requested, body: tracked.body };
    trackedLinks = tracked.links;
  }
  const built = prebuilt?.built ?? (await composer.build(composition, headerMessageId, date));
  const check = await stage.prepare(grant, sendCandidateOf(composition, built.raw.length));
  const recipients = await queue.routeFor(
    grant,
    [...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email),
  );
  const { result, inline } = await stage.settle(
    db.write(async (tx) => {
      const replay = await idempotency.find(tx, options.claim);
      if (replay) return { result: replay.response as SendResult, inline: undefined };
      await options.before?.(tx);
      const admitted = await stage.admit(tx, check, 'send');
      const gated: GatedSend = {
        applicationId: grant.applicationId,
        grant,
        from: composition.from.email.toLowerCase(),
        recipients: uniqueAddresses([...composition.to, ...composition.cc, ...composition.bcc]),
        at: date.getTime(),
      };
      await gates.check(tx, gated);
      const copy = await store.insert(
        tx,
        ownCopy(composition, built, {
          folders: ['sent'],
          unread: false,
          date: unixSeconds(date),
          envelopeFrom: grant.email,
        }),
      );
      const queued = await queue.queue(
        tx,
        {
          applicationId: grant.applicationId,
          grantId: grant.id,
          messageId: copy.row.id,
          kind: 'message',
          headerMessageId,
          subject: composition.subject,
          envelopeFrom: grant.email,
          raw: built.raw,
          rawHash: built.rawHash,
          trackingOptions: composition.trackingOptions,
          provenance: options.provenance,
        },
        recipients,
      );
      await options.after?.(tx, copy.row.id);
      await gates.count(tx, gated);
      if (trackingId !== undefined) {
        await recordTrackedSend(tx, {
          id: trackingId,
          applicationId: grant.applicationId,
          grantId: grant.id,
          messageId: copy.row.id,
          threadId: copy.row.threadId,
          outboundId: queued.outboundId,
          headerMessageId,
          options: composition.trackingOptions!,
          links: trackedLinks,
          sentAt: date.getTime(),
        });
      }
      await contacts.collect(grant, [...composition.to, ...composition.cc, ...composition.bcc], tx);
      await stage.record(tx, admitted, copy.row.id);
      const answer: SendResult = {
        data: {
          ...copy.message,
          ...sentExtras(composition),
          ...(options.provenance ? { provenance: options.provenance } : {}),
        },
      };
      await idempotency.save(tx, options.claim, { status: 200, response: answer });
      return { result: answer, inline: queued.inline };
    }),
  );
  await queue.runInline(inline);
  return result;
}
