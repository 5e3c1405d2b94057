/**
 * @module outbound/composition-mime
 * A {@link Composition} composed once into MIME (./composition.ts): Message-ID and Date as given, DKIM for verified
 * custom domains, within the 40 MB limit.
 */
import { eq } from 'drizzle-orm';
import { blobHash, tables } from '../../storage/index.js';
import { AppError } from '../errors.js';
import { openStored } from '../secrets/index.js';
import { MAX_MESSAGE_BYTES } from '../mail/index.js';
import { dkimSign } from '../system/smtp-client.js';
import { composeMime, type ComposeInput } from './compose.js';
import type { Built, Composition } from './contracts.js';
import type { ComposerState } from './composition-state.js';
import { domainOf } from './routing.js';

/** Signs with the sender domain's DKIM key when the domain has one and its DKIM record is verified. */
export async function sign(state: ComposerState, raw: Buffer, fromEmail: string): Promise<Buffer> {
  const { db, secrets } = state;
  const domain = domainOf(fromEmail);
  const [row] = await db.orm.select().from(tables.domains).where(eq(tables.domains.domainAddress, domain)).limit(1);
  if (!row?.verifiedDkim || !row.dkimPrivateKeyPem || !row.dkimSelector) return raw;
  // Sealed at rest; the box keeps what it opened, so a send costs no decryption after the domain's first.
  return dkimSign(raw, {
    domainName: domain,
    keySelector: row.dkimSelector,
    privateKey: openStored(secrets, row.dkimPrivateKeyPem),
  });
}

/** What the composer is given for a composition, with its Message-ID and date. Pure. */
export function composeInputOf(composition: Composition, headerMessageId: string, date: Date): ComposeInput {
  return {
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
}

/** Composes the MIME of a composition (with the given Message-ID and date). 413 over 40 MB. */
export async function build(
  state: ComposerState,
  composition: Composition,
  headerMessageId: string,
  date: Date,
): Promise<Built> {
  const input = composeInputOf(composition, headerMessageId, date);
  const attachmentBytes = composition.attachments.reduce((total, attachment) => total + attachment.content.length, 0);
  // Base64 makes attachments a third larger: refuse early what cannot fit.
  if (Math.ceil(attachmentBytes / 3) * 4 + composition.body.length > MAX_MESSAGE_BYTES) {
    throw new AppError(
      'payload_too_large',
      `attachments: ${attachmentBytes} bytes of attachments (${Math.ceil(attachmentBytes / 3) * 4} once Base64-encoded) exceed the 40 MB (${MAX_MESSAGE_BYTES} bytes) limit of a message; send fewer or smaller files.`,
    );
  }
  const raw = await signedMime(state, input);
  if (raw.length > MAX_MESSAGE_BYTES) {
    throw new AppError(
      'payload_too_large',
      `The composed message is ${raw.length} bytes; the limit is 40 MB (${MAX_MESSAGE_BYTES} bytes). Send fewer or smaller attachments.`,
    );
  }
  return { input, raw, rawHash: blobHash(raw) };
}

/** The MIME of a message, DKIM-signed when its sender's domain can sign. */
export async function signedMime(state: ComposerState, input: ComposeInput): Promise<Buffer> {
  return sign(state, await composeMime(input), input.from.email);
}
