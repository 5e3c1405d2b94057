/**
 * @module outbound/composition
 * A message to send, from request to bytes: the request validated and resolved ({@link Composition}: the sender
 * checked against the mailbox, recipients counted, attachments read, the message answered found with its whole
 * References chain), then composed once into MIME (Message-ID on the sender's domain, Date from the clock, DKIM
 * for verified custom domains) within the 40 MB limit. Sends and drafts share it.
 */
import { and, eq } from 'drizzle-orm';
import { blobHash, readBlob, tables, type GrantRow, type StoredAddress } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, invalid } from '../errors.js';
import { openStored } from '../secrets/index.js';
import { MAX_MESSAGE_BYTES } from '../mail/index.js';
import { dkimSign } from '../system/smtp-client.js';
import type { NewMessage } from '../messages/index.js';
import type { AttachmentInput, SendMessageInput } from '../schemas/send.js';
import { MAX_RECIPIENTS } from '../schemas/send.js';
import type { StoredHeader, StoredTrackingOptions } from '../../storage/schema/outbound.js';
import type { AttachmentUploads } from './attachment-uploads.js';
import { composeMime, parsedOf, type ComposeInput, type OutgoingAttachment } from './compose.js';
import { domainOf } from './routing.js';

/** References kept on a reply (the newest ones; a chain longer than this is cut from the oldest end). */
const MAX_REFERENCES = 50;

/** The fields a message to send is made of, as on the wire (send and draft requests share them). */
export type ComposeRequest = Omit<SendMessageInput, 'grant_id' | 'send_at' | 'use_draft'>;

/** A message to send, validated and resolved: addresses, attachment bytes, threading headers. */
export interface Composition extends Pick<
  ComposeInput,
  | 'from'
  | 'to'
  | 'cc'
  | 'bcc'
  | 'replyTo'
  | 'subject'
  | 'body'
  | 'isPlaintext'
  | 'attachments'
  | 'inReplyTo'
  | 'references'
> {
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

function stored(list: { name?: string | undefined; email: string }[] | undefined): StoredAddress[] {
  return (list ?? []).map((entry) => (entry.name ? { name: entry.name, email: entry.email } : { email: entry.email }));
}

/** The sender's own copy of a composed message (the sent copy, or a draft version), for the mail store. */
export function ownCopy(
  composition: Composition,
  built: Built,
  place: Pick<NewMessage, 'folders' | 'unread' | 'date' | 'envelopeFrom'>,
): NewMessage {
  return {
    applicationId: composition.grant.applicationId,
    grantId: composition.grant.id,
    parsed: parsedOf(built.input),
    raw: built.raw,
    rawHash: built.rawHash,
    ...place,
    envelopeTo: null,
    parseError: null,
    metadata: composition.metadata,
  };
}

/** Creates the composer: requests to compositions, compositions to signed MIME. */
export function createComposer(
  deps: Pick<CoreDeps, 'db' | 'secrets'>,
  parts: { uploads?: Pick<AttachmentUploads, 'staged'> } = {},
) {
  const { db } = deps;
  const { uploads } = parts;

  async function planOf(applicationId: string): Promise<string | undefined> {
    const [row] = await db.orm
      .select({ plan: tables.applications.plan })
      .from(tables.applications)
      .where(eq(tables.applications.id, applicationId))
      .limit(1);
    return row?.plan;
  }

  /**
   * Resolves attachments: Base64 content, or by id an attachment of this mailbox or a completed upload session of
   * it (another mailbox's id is a 404).
   * Without a mailbox (a transactional send), only content is accepted.
   */
  async function resolveAttachments(
    grant: GrantRow | undefined,
    inputs: AttachmentInput[],
  ): Promise<OutgoingAttachment[]> {
    const out: OutgoingAttachment[] = [];
    for (const [index, input] of inputs.entries()) {
      const contentId = input.content_id?.replace(/^<|>$/g, '') || undefined;
      const disposition = input.content_disposition?.trim().toLowerCase();
      if (input.id !== undefined) {
        if (!grant)
          throw invalid(
            `attachments.${index}.id`,
            'a send from a domain has no mailbox to take attachments from; give the file as content (Base64), or send multipart/form-data.',
          );
        const [row] = await db.orm
          .select()
          .from(tables.attachments)
          .where(and(eq(tables.attachments.grantId, grant.id), eq(tables.attachments.id, input.id)))
          .limit(1);
        if (!row) {
          // Not an attachment of the mailbox: a completed large-attachment upload session of it, then.
          const staged = await uploads?.staged(grant, input.id, `attachments.${index}.id`);
          if (!staged)
            throw new AppError(
              'not_found',
              `attachments[${index}].id: there is no attachment or upload session ${JSON.stringify(input.id)} in this mailbox.`,
              { field: `attachments.${index}.id` },
            );
          out.push({
            filename: input.filename ?? staged.filename,
            contentType: input.content_type ?? staged.contentType,
            content: staged.content,
            contentId,
            inline: input.is_inline ?? (disposition ? disposition.startsWith('inline') : contentId !== undefined),
          });
          continue;
        }
        const content = await readBlob(db.orm, row.blobHash);
        if (!content) throw new AppError('internal', `The bytes of attachment ${row.id} are missing from the store.`);
        const cid = contentId ?? row.contentId ?? undefined;
        out.push({
          filename: input.filename ?? row.filename,
          contentType: input.content_type ?? row.contentType,
          content,
          contentId: cid,
          inline:
            input.is_inline ?? (disposition ? disposition.startsWith('inline') : row.isInline && cid !== undefined),
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
  async function prepare(
    principal: Principal,
    grant: GrantRow,
    input: ComposeRequest,
    mode: 'send' | 'draft',
  ): Promise<Composition> {
    const sender = input.from?.[0];
    if (sender && sender.email.toLowerCase() !== grant.email.toLowerCase()) {
      throw invalid(
        'from',
        `this mailbox sends as ${grant.email} only; leave from out, or give that address (with any display name).`,
      );
    }
    const recipients = new Set(
      [...(input.to ?? []), ...(input.cc ?? []), ...(input.bcc ?? [])].map((entry) => entry.email.toLowerCase()),
    );
    if (recipients.size > MAX_RECIPIENTS) {
      throw invalid(
        'to',
        `${recipients.size} recipients; a message may have at most ${MAX_RECIPIENTS} (to, cc and bcc together). Split the list into several messages.`,
      );
    }
    if (mode === 'send' && recipients.size === 0) throw invalid('to', 'give at least one recipient in to, cc or bcc.');
    if (input.tracking_options !== undefined && (await planOf(principal.applicationId)) === 'trial') {
      throw invalid(
        'tracking_options',
        'tracking options are not allowed for trial applications; send without tracking_options, or use a production application.',
      );
    }
    let replyTo: { id: string; subject: string; inReplyTo: string | undefined; references: string[] } | undefined;
    if (input.reply_to_message_id !== undefined) {
      const [row] = await db.orm
        .select()
        .from(tables.messages)
        .where(and(eq(tables.messages.grantId, grant.id), eq(tables.messages.id, input.reply_to_message_id)))
        .limit(1);
      if (!row)
        throw new AppError(
          'not_found',
          `reply_to_message_id: there is no message ${JSON.stringify(input.reply_to_message_id)} in this mailbox; list messages to find the one to answer.`,
          { field: 'reply_to_message_id' },
        );
      const chain = [...row.references, ...(row.headerMessageId ? [row.headerMessageId] : [])];
      replyTo = {
        id: row.id,
        subject: row.subject,
        inReplyTo: row.headerMessageId ?? undefined,
        references: [...new Set(chain)].slice(-MAX_REFERENCES),
      };
    }
    const subject =
      input.subject ?? (replyTo ? (/^re:/i.test(replyTo.subject) ? replyTo.subject : `Re: ${replyTo.subject}`) : '');
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
    // Sealed at rest; the box keeps what it opened, so a send costs no decryption after the domain's first.
    return dkimSign(raw, {
      domainName: domain,
      keySelector: row.dkimSelector,
      privateKey: openStored(deps.secrets, row.dkimPrivateKeyPem),
    });
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
      throw new AppError(
        'payload_too_large',
        `attachments: ${attachmentBytes} bytes of attachments (${Math.ceil(attachmentBytes / 3) * 4} once Base64-encoded) exceed the 40 MB (${MAX_MESSAGE_BYTES} bytes) limit of a message; send fewer or smaller files.`,
      );
    }
    const raw = await signedMime(input);
    if (raw.length > MAX_MESSAGE_BYTES) {
      throw new AppError(
        'payload_too_large',
        `The composed message is ${raw.length} bytes; the limit is 40 MB (${MAX_MESSAGE_BYTES} bytes). Send fewer or smaller attachments.`,
      );
    }
    return { input, raw, rawHash: blobHash(raw) };
  }

  /** The MIME of a message, DKIM-signed when its sender's domain can sign. */
  async function signedMime(input: ComposeInput): Promise<Buffer> {
    return sign(await composeMime(input), input.from.email);
  }

  return { prepare, build, signedMime, resolveAttachments };
}

/** The composer of the outbound service. */
export type Composer = ReturnType<typeof createComposer>;
