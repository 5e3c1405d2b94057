/**
 * @module outbound/outbound-service
 * Hosted mail out (the Outbound flow of ARCHITECTURE.md): validate → compose the MIME once (Message-ID on the
 * sender's domain, Date from the clock, In-Reply-To and the whole References chain of the message answered,
 * DKIM for verified custom domains) → in ONE transaction store the sender's copy in `sent` (in its thread),
 * queue every recipient, collect the recipients as contacts and keep the Idempotency-Key answer → deliver:
 * mailboxes of this service at once through the inbound path, all others through the durable queue
 * (outbound-queue.ts). Drafts and scheduled sends (drafts.ts) end in the same flow. The same queue carries
 * calendar invitations (the {@link InvitationSender} of the event service) and the service's own emails (the
 * {@link Notifier}).
 */
import { and, eq } from 'drizzle-orm';
import { blobHash, readBlob, tables, type GrantRow, type StoredAddress, type Tx } from '../../storage/index.js';
import type { Principal } from '../applications/application-service.js';
import type { InvitationSender } from '../calendar/invitation-message.js';
import type { CoreDeps, Notifier } from '../deps.js';
import { unixSeconds } from '../deps.js';
import { AppError, invalid } from '../errors.js';
import type { GrantService } from '../grants/grant-service.js';
import type { ContactService } from '../contacts/contact-service.js';
import type { InboundService } from '../mail/inbound.js';
import { MAX_MESSAGE_BYTES } from '../mail/inbound.js';
import { createSmtpClient, dkimSign, type SmtpClient } from '../mail/outbound-smtp.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { MailStore } from '../messages/mail-store.js';
import type { OperationContext } from '../operations/define-operation.js';
import type { AttachmentInput, SendMessageInput, SendResult, SentMessage } from '../schemas/send.js';
import { MAX_RECIPIENTS } from '../schemas/send.js';
import type { StoredHeader, StoredTrackingOptions } from '../../storage/schema/outbound.js';
import { composeMime, oneLine, type ComposeInput, type OutgoingAttachment } from './compose.js';
import { createDraftService, ownCopy, type DraftRecord } from './drafts.js';
import { createIdempotencyStore, type IdempotencyClaim } from './idempotency.js';
import { createOutboundQueue } from './outbound-queue.js';

/** References kept on a reply (the newest ones; a chain longer than this is cut from the oldest end). */
const MAX_REFERENCES = 50;

/** The fields a message to send is made of, as on the wire (send and draft requests share them). */
export type ComposeRequest = Omit<SendMessageInput, 'grant_id' | 'send_at' | 'use_draft'>;

/** A message to send, validated and resolved: addresses, attachment bytes, threading headers. */
export interface Composition
  extends Pick<ComposeInput, 'from' | 'to' | 'cc' | 'bcc' | 'replyTo' | 'subject' | 'body' | 'isPlaintext' | 'attachments' | 'inReplyTo' | 'references'> {
  grant: GrantRow;
  /** The message answered (its id in this mailbox). */
  replyToMessageId: string | undefined;
  customHeaders: StoredHeader[];
  trackingOptions: StoredTrackingOptions | undefined;
  metadata: Record<string, unknown>;
}

/** A composed message: the MIME and what the store keeps of it. */
export interface Built {
  input: ComposeInput;
  raw: Buffer;
  rawHash: string;
}

/** Parts the outbound service uses. */
export interface OutboundParts {
  grants: GrantService;
  store: MailStore;
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  jobs: JobQueue;
  contacts: ContactService;
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

function stored(list: { name?: string | undefined; email: string }[] | undefined): StoredAddress[] {
  return (list ?? []).map((entry) => (entry.name ? { name: entry.name, email: entry.email } : { email: entry.email }));
}

/** The extra wire fields of a sent message. */
function sentExtras(composition: Composition): Partial<SentMessage> {
  return {
    ...(composition.replyToMessageId !== undefined ? { reply_to_message_id: composition.replyToMessageId } : {}),
    ...(composition.trackingOptions !== undefined ? { tracking_options: composition.trackingOptions } : {}),
  };
}

/** Creates the outbound service. */
export function createOutboundService(deps: CoreDeps, parts: OutboundParts) {
  const { db, clock, newId, config, logger } = deps;
  const { grants, store, jobs, contacts } = parts;
  const smtp: SmtpClient = deps.smtp ?? createSmtpClient({ heloName: config.mxHost, logger });
  const queue = createOutboundQueue(deps, { inbound: parts.inbound, jobs, smtp });
  const idempotency = createIdempotencyStore({ clock });

  async function planOf(applicationId: string): Promise<string | undefined> {
    const [row] = await db.orm.select({ plan: tables.applications.plan }).from(tables.applications).where(eq(tables.applications.id, applicationId)).limit(1);
    return row?.plan;
  }

  /** Resolves attachments: Base64 content, or an attachment of this mailbox by id (another mailbox's id is a 404). */
  async function resolveAttachments(grant: GrantRow, inputs: AttachmentInput[]): Promise<OutgoingAttachment[]> {
    const out: OutgoingAttachment[] = [];
    for (const [index, input] of inputs.entries()) {
      const contentId = input.content_id?.replace(/^<|>$/g, '') || undefined;
      const disposition = input.content_disposition?.trim().toLowerCase();
      if (input.id !== undefined) {
        const [row] = await db.orm
          .select()
          .from(tables.attachments)
          .where(and(eq(tables.attachments.grantId, grant.id), eq(tables.attachments.id, input.id)))
          .limit(1);
        if (!row) throw new AppError('not_found', `attachments[${index}].id: there is no attachment ${JSON.stringify(input.id)} in this mailbox.`, { field: `attachments.${index}.id` });
        const content = await readBlob(db.orm, row.blobHash);
        if (!content) throw new AppError('internal', `The bytes of attachment ${row.id} are missing from the store.`);
        const cid = contentId ?? row.contentId ?? undefined;
        out.push({
          filename: input.filename ?? row.filename,
          contentType: input.content_type ?? row.contentType,
          content,
          contentId: cid,
          inline: input.is_inline ?? (disposition ? disposition.startsWith('inline') : row.isInline && cid !== undefined),
        });
        continue;
      }
      out.push({
        filename: input.filename ?? `attachment-${index + 1}`,
        contentType: input.content_type ?? 'application/octet-stream',
        content: Buffer.from(input.content ?? '', 'base64'),
        contentId,
        inline: input.is_inline ?? (disposition ? disposition.startsWith('inline') : contentId !== undefined),
      });
    }
    return out;
  }

  /**
   * Validates and resolves a send or draft request for `grant`. `mode: 'send'` also requires a recipient.
   * Errors name the field and say what to do.
   */
  async function prepare(principal: Principal, grant: GrantRow, input: ComposeRequest, mode: 'send' | 'draft'): Promise<Composition> {
    const sender = input.from?.[0];
    if (sender && sender.email.toLowerCase() !== grant.email.toLowerCase()) {
      throw invalid('from', `this mailbox sends as ${grant.email} only; leave from out, or give that address (with any display name).`);
    }
    const recipients = new Set([...(input.to ?? []), ...(input.cc ?? []), ...(input.bcc ?? [])].map((entry) => entry.email.toLowerCase()));
    if (recipients.size > MAX_RECIPIENTS) {
      throw invalid('to', `${recipients.size} recipients; a message may have at most ${MAX_RECIPIENTS} (to, cc and bcc together). Split the list into several messages.`);
    }
    if (mode === 'send' && recipients.size === 0) throw invalid('to', 'give at least one recipient in to, cc or bcc.');
    if (input.tracking_options !== undefined && (await planOf(principal.applicationId)) === 'trial') {
      throw invalid('tracking_options', 'tracking options are not allowed for trial applications; send without tracking_options, or use a production application.');
    }
    let replyTo: { id: string; subject: string; inReplyTo: string | undefined; references: string[] } | undefined;
    if (input.reply_to_message_id !== undefined) {
      const [row] = await db.orm
        .select()
        .from(tables.messages)
        .where(and(eq(tables.messages.grantId, grant.id), eq(tables.messages.id, input.reply_to_message_id)))
        .limit(1);
      if (!row) throw new AppError('not_found', `reply_to_message_id: there is no message ${JSON.stringify(input.reply_to_message_id)} in this mailbox; list messages to find the one to answer.`, { field: 'reply_to_message_id' });
      const chain = [...row.references, ...(row.headerMessageId ? [row.headerMessageId] : [])];
      replyTo = { id: row.id, subject: row.subject, inReplyTo: row.headerMessageId ?? undefined, references: [...new Set(chain)].slice(-MAX_REFERENCES) };
    }
    const subject = input.subject ?? (replyTo ? (/^re:/i.test(replyTo.subject) ? replyTo.subject : `Re: ${replyTo.subject}`) : '');
    return {
      grant,
      from: { email: grant.email, ...((sender?.name ?? grant.name) ? { name: (sender?.name ?? grant.name)! } : {}) },
      to: stored(input.to),
      cc: stored(input.cc),
      bcc: stored(input.bcc),
      replyTo: stored(input.reply_to),
      subject,
      body: input.body ?? '',
      isPlaintext: input.is_plaintext ?? false,
      attachments: await resolveAttachments(grant, input.attachments ?? []),
      replyToMessageId: replyTo?.id,
      inReplyTo: replyTo?.inReplyTo,
      references: replyTo?.references ?? [],
      customHeaders: (input.custom_headers ?? []).map(({ name, value }) => ({ name, value })),
      trackingOptions: input.tracking_options,
      metadata: input.metadata ?? {},
    };
  }

  /** Signs with the sender domain's DKIM key when the domain has one and its DKIM record is verified. */
  async function sign(raw: Buffer, fromEmail: string): Promise<Buffer> {
    const domain = domainOf(fromEmail);
    const [row] = await db.orm.select().from(tables.domains).where(eq(tables.domains.domainAddress, domain)).limit(1);
    if (!row?.verifiedDkim || !row.dkimPrivateKeyPem || !row.dkimSelector) return raw;
    return dkimSign(raw, { domainName: domain, keySelector: row.dkimSelector, privateKey: row.dkimPrivateKeyPem });
  }

  /** Composes the MIME of a composition (with the given Message-ID and date). 413 over 40 MB. */
  async function build(composition: Composition, headerMessageId: string, date: Date): Promise<Built> {
    const input: ComposeInput = {
      from: composition.from,
      to: composition.to,
      cc: composition.cc,
      bcc: composition.bcc,
      replyTo: composition.replyTo,
      subject: composition.subject,
      body: composition.body,
      isPlaintext: composition.isPlaintext,
      attachments: composition.attachments,
      messageId: headerMessageId,
      date,
      inReplyTo: composition.inReplyTo,
      references: composition.references,
      customHeaders: composition.customHeaders,
    };
    const attachmentBytes = composition.attachments.reduce((total, attachment) => total + attachment.content.length, 0);
    // Base64 makes attachments a third larger: refuse early what cannot fit.
    if (Math.ceil(attachmentBytes / 3) * 4 + composition.body.length > MAX_MESSAGE_BYTES) {
      throw new AppError('payload_too_large', `attachments: ${attachmentBytes} bytes of attachments (${Math.ceil(attachmentBytes / 3) * 4} once Base64-encoded) exceed the 40 MB (${MAX_MESSAGE_BYTES} bytes) limit of a message; send fewer or smaller files.`);
    }
    const raw = await sign(await composeMime(input), composition.from.email);
    if (raw.length > MAX_MESSAGE_BYTES) {
      throw new AppError('payload_too_large', `The composed message is ${raw.length} bytes; the limit is 40 MB (${MAX_MESSAGE_BYTES} bytes). Send fewer or smaller attachments.`);
    }
    return { input, raw, rawHash: blobHash(raw) };
  }

  /** Options of {@link accept}. */
  interface AcceptOptions {
    claim?: IdempotencyClaim | undefined;
    /** Message-ID to use (a draft keeps its own). */
    headerMessageId?: string | undefined;
    /** Runs inside the transaction before anything is written; throw to abort (a stale draft or schedule). */
    before?: ((tx: Tx) => Promise<void>) | undefined;
    /** Runs inside the transaction after the sender's copy was stored (remove the draft, close the schedule). */
    after?: ((tx: Tx, sentMessageId: string) => Promise<void>) | undefined;
  }

  /**
   * Sends a composition now: composes, then in one transaction stores the sender's copy in `sent`, queues every
   * recipient, collects them as contacts and keeps the idempotency answer; then delivers to the mailboxes of this
   * service before returning (the others are the workers' job).
   */
  async function accept(composition: Composition, options: AcceptOptions = {}): Promise<SendResult> {
    const { grant } = composition;
    const date = clock.now();
    const headerMessageId = options.headerMessageId ?? `${newId()}@${domainOf(composition.from.email)}`;
    const built = await build(composition, headerMessageId, date);
    const recipients = await queue.route([...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email));
    const { result, inline } = await db.write(async (tx) => {
      const replay = await idempotency.find(tx, options.claim);
      if (replay) return { result: replay.response as SendResult, inline: undefined };
      await options.before?.(tx);
      const copy = await store.insert(tx, ownCopy(composition, built, { folders: ['sent'], unread: false, date: unixSeconds(date), envelopeFrom: grant.email }));
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
      await contacts.collect(grant, [...composition.to, ...composition.cc, ...composition.bcc], tx);
      const answer: SendResult = { data: { ...copy.message, ...sentExtras(composition) } };
      await idempotency.save(tx, options.claim, { status: 200, response: answer });
      return { result: answer, inline: queued.inline };
    });
    await queue.runInline(inline);
    return result;
  }

  /** Queues a message that has no sender's copy (invitations, system mail), then delivers locally at once. */
  async function sendDetached(spec: { applicationId: string | null; grantId: string | null; kind: 'invitation' | 'system'; input: ComposeInput; envelopeFrom: string }): Promise<void> {
    const raw = await sign(await composeMime(spec.input), spec.input.from.email);
    if (raw.length > MAX_MESSAGE_BYTES) throw new AppError('payload_too_large', `The composed message is ${raw.length} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes.`);
    const recipients = await queue.route([...spec.input.to, ...spec.input.cc].map((entry) => entry.email));
    if (recipients.length === 0) return;
    const { inline } = await db.write((tx) =>
      queue.queue(
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
      ),
    );
    await queue.runInline(inline);
  }

  const drafts = createDraftService(deps, { grants, store, jobs, idempotency, prepare, build, accept });

  /** iMIP invitations, updates, cancellations and replies of the event service. */
  const invitations: InvitationSender = {
    async send(invitation) {
      const from = invitation.from.name ? { name: oneLine(invitation.from.name), email: invitation.from.email } : { email: invitation.from.email };
      await sendDetached({
        applicationId: invitation.applicationId,
        grantId: invitation.grantId,
        kind: 'invitation',
        envelopeFrom: invitation.from.email,
        input: {
          from,
          to: invitation.to.map((entry) => (entry.name ? { name: oneLine(entry.name), email: entry.email } : { email: entry.email })),
          cc: [],
          bcc: [],
          replyTo: [],
          subject: invitation.subject,
          body: invitation.text,
          isPlaintext: true,
          attachments: [],
          messageId: `${newId()}@${domainOf(invitation.from.email)}`,
          date: clock.now(),
          inReplyTo: undefined,
          references: [],
          customHeaders: [],
          calendar: { method: invitation.method, ics: invitation.ics },
        },
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
        input: {
          from: { name: 'Agentpost', email: config.systemFrom },
          to: email.to.map((address) => ({ email: address })),
          cc: [],
          bcc: [],
          replyTo: [],
          subject: email.subject,
          body: email.text,
          isPlaintext: true,
          attachments: [],
          messageId: `${newId()}@${domainOf(config.systemFrom)}`,
          date: clock.now(),
          inReplyTo: undefined,
          references: [],
          customHeaders: [{ name: 'Auto-Submitted', value: 'auto-generated' }],
        },
      });
    },
  };

  return {
    /**
     * Sends a message (`send_at`: schedules it). With an Idempotency-Key, a repeat of the same request answers the
     * first answer again and sends nothing; the key with another request is a 409.
     */
    async send(principal: Principal, input: SendMessageInput, context: Pick<OperationContext, 'idempotencyKey'> = {}): Promise<SendResult> {
      const claim = idempotency.claim(principal.applicationId, context.idempotencyKey, 'send_message', input);
      const replay = await idempotency.find(db.orm, claim);
      if (replay) return replay.response as SendResult;
      const grant = await grants.require(principal, input.grant_id);
      const { grant_id: _grant, send_at: sendAt, use_draft: useDraft, ...request } = input;
      const composition = await prepare(principal, grant, request, 'send');
      if (sendAt !== undefined) return drafts.schedule(composition, { sendAt, useDraft: useDraft ?? false, claim });
      return accept(composition, { claim });
    },

    /** Delivery state of each recipient, and tracking options, of sent messages, by message id. */
    sentState: queue.statusOf,

    drafts,
    invitations,
    notifier,
    /** Job handlers: delivery attempts and scheduled sends. */
    handlers: { ...queue.handlers, ...drafts.handlers },
    /** Closes pooled SMTP connections. */
    close: () => smtp.close(),
  };
}

export type OutboundService = ReturnType<typeof createOutboundService>;
export type { DraftRecord };
