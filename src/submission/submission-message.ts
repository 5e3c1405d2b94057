/**
 * @module submission/submission-message
 * A message submitted over SMTP as the input of an API send (`send_message`), so that it takes the one outbound path:
 * the recipients are the envelope's (To and Cc as the headers name them, the rest Bcc), the body and attachments
 * are the parsed message's, `X-` headers are kept as custom headers, and the service writes the rest (Message-ID,
 * Date, DKIM). Pure: the caller parsed the message and checked the sender.
 */
import { AppError } from '../errors.js';
import type { ParsedMessage, RawHeader } from '../mime/index.js';
import {
  MAX_CUSTOM_HEADERS,
  MAX_RECIPIENTS,
  RESERVED_HEADERS,
  type Recipient,
  type SendMessageInput,
} from '../schemas/send.js';

/** A header the service writes for every send: a submitted one of these names is not kept. */
const CUSTOM_HEADER = /^X-[!-9;-~]{1,74}$/i;
/** One line of at most 998 characters (RFC 5322 2.1.1), as a custom header value must be. */
const HEADER_VALUE = /^[^\r\n\0]{0,998}$/;

/** What the message is sent as: the grant's address, and the name its From header gives. */
export interface SubmittedSender {
  grantId: string;
  email: string;
}

/** The envelope of a submission (the addresses of MAIL FROM and RCPT TO). */
export interface SubmissionEnvelope {
  mailFrom: string;
  recipients: readonly string[];
}

/** Refuses a submission with 550 5.7.1 (the sender may not send this). */
export const notYourAddress = (message: string) =>
  new AppError('forbidden', message, { smtp: { code: 550, enhanced: '5.7.1' } });

/**
 * Whether the message says it is HTML: a `text/html` part anywhere. Without one, the parsed body is plain text the
 * parser wrapped as HTML, and it is sent as plain text again.
 */
export function declaresHtml(raw: Buffer): boolean {
  return /content-type:[ \t]*(\r?\n[ \t]+)?text\/html/i.test(raw.toString('latin1'));
}

/** The plain text the parser wrapped as HTML (mime/normalize.ts textToHtml), unwrapped exactly. */
export function unwrapText(html: string): string {
  const inner = html.startsWith('<div>') && html.endsWith('</div>') ? html.slice(5, -6) : html;
  return inner
    .replaceAll('<br>\n', '\n')
    .replaceAll('&quot;', '"')
    .replaceAll('&gt;', '>')
    .replaceAll('&lt;', '<')
    .replaceAll('&amp;', '&');
}

/** The sender check: exactly one From address, the grant's own; anything else is refused 550 5.7.1. */
export function checkFrom(parsed: ParsedMessage, sender: SubmittedSender): Recipient {
  const from = parsed.from;
  if (from.length !== 1 || from[0]!.email.toLowerCase() !== sender.email.toLowerCase()) {
    throw notYourAddress(
      `From must be ${sender.email}, the address of the grant this app password is for (it names ${from.map((address) => address.email).join(', ') || 'nobody'})`,
    );
  }
  const name = from[0]!.name?.replace(/[\r\n\0]/g, ' ').slice(0, 256);
  return name ? { name, email: sender.email } : { email: sender.email };
}

/** The send input of a submitted message (see the module). Throws 550 5.7.1 when From is not the grant's address. */
export function sendInputOf(
  parsed: ParsedMessage,
  headers: readonly RawHeader[],
  raw: Buffer,
  envelope: SubmissionEnvelope,
  sender: SubmittedSender,
): SendMessageInput {
  const from = checkFrom(parsed, sender);
  const pending = new Map(envelope.recipients.map((address) => [address.toLowerCase(), address] as const));
  // A header address that is not an envelope recipient gets nothing: only RCPT TO says who receives the message.
  const take = (addresses: readonly { name?: string; email: string }[]): Recipient[] =>
    addresses.flatMap((address) => {
      const key = address.email.toLowerCase();
      if (!pending.has(key)) return [];
      pending.delete(key);
      const name = address.name?.replace(/[\r\n\0]/g, ' ').slice(0, 256);
      return [name ? { name, email: address.email } : { email: address.email }];
    });
  const to = take(parsed.to);
  const cc = take(parsed.cc);
  const bcc = [...pending.values()].map((email) => ({ email }));
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS)
    throw new AppError('invalid_request', `at most ${MAX_RECIPIENTS} recipients per message`, {
      smtp: { code: 452, enhanced: '4.5.3' },
    });
  const html = declaresHtml(raw);
  const replyTo = parsed.replyTo.slice(0, 10).map((address) => ({ email: address.email }));
  const custom = headers
    .filter(
      ({ name, value }) =>
        CUSTOM_HEADER.test(name) && !RESERVED_HEADERS.has(name.toLowerCase()) && HEADER_VALUE.test(value),
    )
    .slice(0, MAX_CUSTOM_HEADERS)
    .map(({ name, value }) => ({ name, value }));
  return {
    grant_id: sender.grantId,
    from: [from],
    ...(to.length ? { to } : {}),
    ...(cc.length ? { cc } : {}),
    ...(bcc.length ? { bcc } : {}),
    ...(replyTo.length ? { reply_to: replyTo } : {}),
    subject: parsed.subject.replace(/[\r\n\0]+/g, ' ').slice(0, 998),
    body: html ? parsed.body : unwrapText(parsed.body),
    ...(html ? {} : { is_plaintext: true }),
    ...(parsed.attachments.length
      ? {
          attachments: parsed.attachments.map((attachment) => ({
            filename: (attachment.filename || 'attachment').replace(/[\r\n\0]/g, ' ').slice(0, 255),
            content_type: attachment.contentType,
            content: attachment.content.toString('base64'),
            ...(attachment.contentId && attachment.isInline
              ? { content_id: attachment.contentId.replace(/[\r\n\0<>]/g, '').slice(0, 255), is_inline: true }
              : {}),
          })),
        }
      : {}),
    ...(custom.length ? { custom_headers: custom } : {}),
  };
}
