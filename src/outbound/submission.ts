/**
 * @module outbound/submission
 * Submitting a composed message: in ONE transaction store the sender's copy in `sent` (in its thread), queue every
 * recipient, collect the recipients as contacts and keep the Idempotency-Key answer; then deliver to the mailboxes
 * of this service at once (the others are the workers' job, outbound-queue.ts). Calendar invitations (the
 * {@link InvitationSender} of the event service) and the service's own emails (the {@link Notifier}) are
 * submitted the same way, without a sender's copy.
 */
import { blobHash, type Tx } from '../../storage/index.js';
import type { InvitationSender } from '../calendar/index.js';
import type { CoreDeps, Notifier } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import type { ContactService } from '../contacts/contracts.js';
import { MAX_MESSAGE_BYTES } from '../mail/index.js';
import type { MailStore } from '../messages/index.js';
import type { SendResult, SentMessage } from '../schemas/send.js';
import { oneLine, type ComposeInput } from './compose.js';
import { ownCopy, type Composer, type Composition } from './composition.js';
import type { IdempotencyClaim, IdempotencyStore } from './idempotency.js';
import type { OutboundQueue } from './outbound-queue.js';
import type { OutboundStage } from './outbound-stage.js';
import type { SendCandidate } from './send-policy.js';
import {
  type GatedSend,
  type SendGates,
  recordTrackedSend,
  trackedBody,
  tracksAnything,
  type SigningKeys,
} from '../deliverability/index.js';
import { domainOf } from './routing.js';

/** The extra wire fields of a sent message. */
function sentExtras(composition: Composition): Partial<SentMessage> {
  return {
    ...(composition.replyToMessageId !== undefined ? { reply_to_message_id: composition.replyToMessageId } : {}),
    ...(composition.trackingOptions !== undefined ? { tracking_options: composition.trackingOptions } : {}),
  };
}

/** What the outbound stage looks at in a composed message of a grant. */
export function sendCandidateOf(composition: Composition, rawBytes: number): SendCandidate {
  return {
    from: composition.grant.email,
    recipients: [...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email),
    reply: composition.replyToMessageId !== undefined || composition.inReplyTo !== undefined,
    sizeBytes: rawBytes,
    attachments: composition.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      size: attachment.content.length,
    })),
  };
}

/** Options of {@link accept}. */
export interface AcceptOptions {
  claim?: IdempotencyClaim | undefined;
  /** Message-ID to use (a draft keeps its own). */
  headerMessageId?: string | undefined;
  /** Runs inside the transaction before anything is written; throw to abort (a stale draft or schedule). */
  before?: ((tx: Tx) => Promise<void>) | undefined;
  /** Runs inside the transaction after the sender's copy was stored (remove the draft, close the schedule). */
  after?: ((tx: Tx, sentMessageId: string) => Promise<void>) | undefined;
}

/** Parts a submission uses. */
export interface SubmissionParts {
  store: MailStore;
  contacts: ContactService;
  queue: OutboundQueue;
  idempotency: IdempotencyStore;
  composer: Pick<Composer, 'build' | 'signedMime'>;
  /** The outbound stage (rules, quota, size), run before anything is stored or queued. */
  stage: OutboundStage;
  /** Deliverability's checks (suppression, paused sending, warm-up) and counters, run in the send's transaction. */
  gates: SendGates;
  /** The installation's signing key: tracked sends carry signed pixel and link URLs. */
  signing: Pick<SigningKeys, 'signer'>;
}

/** Each address once, lower-cased. */
function uniqueAddresses(entries: readonly { email: string }[]): string[] {
  return [...new Set(entries.map((entry) => entry.email.toLowerCase()))];
}

/** Creates the submission step: accept a composition now, and the detached senders (invitations, system mail). */
export function createSubmission(deps: CoreDeps, parts: SubmissionParts) {
  const { db, clock, newId, config } = deps;
  const { store, contacts, queue, idempotency, composer, stage, gates, signing } = parts;

  /**
   * Sends a composition now: composes, then in one transaction passes the outbound stage (rules, daily quota, size:
   * a refusal stores nothing), stores the sender's copy in `sent`, queues every recipient, collects them as
   * contacts, records the evaluation and keeps the idempotency answer; then delivers to the mailboxes of this
   * service before returning (the others are the workers' job).
   */
  async function accept(requested: Composition, options: AcceptOptions = {}): Promise<SendResult> {
    const { grant } = requested;
    const date = clock.now();
    const headerMessageId = options.headerMessageId ?? `${newId()}@${domainOf(requested.from.email)}`;
    // A tracked send's id is in its pixel and links, so it is made before the message is composed; the body that is
    // composed (and so both the MIME delivered and the copy in `sent`) is the tracked one.
    const trackingId = tracksAnything(requested.trackingOptions) ? newId() : undefined;
    let composition = requested;
    let trackedLinks: string[] = [];
    if (trackingId !== undefined) {
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
    const built = await composer.build(composition, headerMessageId, date);
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
        const answer: SendResult = { data: { ...copy.message, ...sentExtras(composition) } };
        await idempotency.save(tx, options.claim, { status: 200, response: answer });
        return { result: answer, inline: queued.inline };
      }),
    );
    await queue.runInline(inline);
    return result;
  }

  /**
   * Queues a message that has no sender's copy (invitations, system mail, transactional sends), then delivers
   * locally at once. Returns the outbound record's id (none when there was nobody to send to).
   */
  async function sendDetached(spec: {
    applicationId: string | null;
    grantId: string | null;
    kind: 'invitation' | 'system' | 'transactional';
    input: ComposeInput;
    envelopeFrom: string;
  }): Promise<{ outboundId: string | undefined }> {
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
  function plainMessage(
    fields: Pick<ComposeInput, 'from' | 'to' | 'subject' | 'customHeaders' | 'calendar'> & { text: string },
  ): ComposeInput {
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

  /** iMIP invitations, updates, cancellations and replies of the event service. */
  const invitations: InvitationSender = {
    async send(invitation) {
      const from = invitation.from.name
        ? { name: oneLine(invitation.from.name), email: invitation.from.email }
        : { email: invitation.from.email };
      await sendDetached({
        applicationId: invitation.applicationId,
        grantId: invitation.grantId,
        kind: 'invitation',
        envelopeFrom: invitation.from.email,
        input: plainMessage({
          from,
          to: invitation.to.map((entry) =>
            entry.name ? { name: oneLine(entry.name), email: entry.email } : { email: entry.email },
          ),
          subject: invitation.subject,
          text: invitation.text,
          customHeaders: [],
          calendar: { method: invitation.method, ics: invitation.ics },
        }),
      });
    },
  };

  /** The service's own emails (webhook failure alerts), from `AGENTPOST_SYSTEM_FROM`. */
  const notifier: Notifier = {
    async send(email) {
      await sendDetached({
        applicationId: null,
        grantId: null,
        kind: 'system',
        envelopeFrom: config.systemFrom,
        input: plainMessage({
          from: { name: 'Agentpost', email: config.systemFrom },
          to: email.to.map((address) => ({ email: address })),
          subject: email.subject,
          text: email.text,
          customHeaders: [{ name: 'Auto-Submitted', value: 'auto-generated' }],
        }),
      });
    },
  };

  return { accept, sendDetached, plainMessage, invitations, notifier };
}
