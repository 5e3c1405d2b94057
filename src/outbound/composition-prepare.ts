/**
 * @module outbound/composition-prepare
 * A send or draft request validated and resolved into a {@link Composition} (./composition.ts): the sender checked
 * against the mailbox, recipients counted, attachments read, the message answered found with its References chain.
 */
import { and, eq } from 'drizzle-orm';
import { readBlob, tables, type GrantRow, type StoredAddress } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError, invalid } from '../errors.js';
import type { AttachmentInput } from '../schemas/send.js';
import { MAX_RECIPIENTS } from '../schemas/send.js';
import type { OutgoingAttachment } from './compose.js';
import type { ComposeRequest, Composition } from './contracts.js';
import type { ComposerState } from './composition-state.js';

/** References kept on a reply (the newest ones; a chain longer than this is cut from the oldest end). */
const MAX_REFERENCES = 50;

function stored(list: { name?: string | undefined; email: string }[] | undefined): StoredAddress[] {
  return (list ?? []).map((entry) => (entry.name ? { name: entry.name, email: entry.email } : { email: entry.email }));
}

async function planOf(state: ComposerState, applicationId: string): Promise<string | undefined> {
  const { db } = state;
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
export async function resolveAttachments(
  state: ComposerState,
  grant: GrantRow | undefined,
  inputs: AttachmentInput[],
): Promise<OutgoingAttachment[]> {
  const { db, uploads } = state;
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
export async function prepare(
  state: ComposerState,
  principal: Principal,
  grant: GrantRow,
  input: ComposeRequest,
  mode: 'send' | 'draft',
): Promise<Composition> {
  const { db } = state;
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
  if (input.tracking_options !== undefined && (await planOf(state, principal.applicationId)) === 'trial') {
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
    attachments: await resolveAttachments(state, grant, input.attachments ?? []),
    replyToMessageId: replyTo?.id,
    inReplyTo: replyTo?.inReplyTo,
    references: replyTo?.references ?? [],
    customHeaders: (input.custom_headers ?? []).map(({ name, value }) => ({ name, value })),
    trackingOptions: input.tracking_options,
    metadata: input.metadata ?? {},
  };
}
