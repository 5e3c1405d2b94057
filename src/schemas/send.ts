/**
 * @module schemas/send
 * Sending mail on the wire (Nylas v3 `models/drafts.ts` SendMessageRequest, `models/messages.ts` scheduled
 * messages). Every field that ends up in a header refuses CR and LF here, so no face can inject a header.
 */
import { z } from 'zod';
import { FollowUpFieldSchema } from './follow-ups.js';
import { ClaimTokenFieldSchema } from './thread-claims.js';
import { GrantIdSchema, IdSchema, MetadataSchema, UnixSecondsSchema } from './common.js';
import { MessageSchema } from './messages.js';
import { ApprovalSchema } from './oversight.js';

export { DeliveryStatusSchema, type DeliveryStatus } from './messages.js';

/** Recipients per message, to, cc and bcc together (RFC 5321 4.5.3.1.8 asks servers to take at least 100). */
export const MAX_RECIPIENTS = 100;
/** Attachments per message. */
export const MAX_ATTACHMENTS = 100;
/** Custom headers per message. */
export const MAX_CUSTOM_HEADERS = 50;

/** Refuses CR, LF and NUL: a value with a line break could start a header of its own. */
const NO_LINE_BREAK = /^[^\r\n\0]*$/;
const LINE_BREAK_MESSAGE = 'must not contain line breaks (CR or LF) or NUL characters';

/** Text that goes into a header: one line, at most `max` characters. */
export function headerText(max: number) {
  return z.string().max(max).regex(NO_LINE_BREAK, LINE_BREAK_MESSAGE);
}

/** A sender or recipient of a message to send. */
export const RecipientSchema = z.object({
  name: headerText(256).optional().describe('Display name'),
  email: z
    .email({ error: 'must be an email address such as agent@example.com' })
    .max(320)
    .regex(NO_LINE_BREAK, LINE_BREAK_MESSAGE)
    .describe('Email address'),
});
export type Recipient = z.infer<typeof RecipientSchema>;

const recipientList = (what: string) =>
  z
    .array(RecipientSchema)
    .max(
      MAX_RECIPIENTS,
      `at most ${MAX_RECIPIENTS} recipients per message (to, cc and bcc together); split the list into several messages`,
    )
    .describe(what);

/** Header names the service writes itself; a custom header may not set them. */
export const RESERVED_HEADERS = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  'return-path',
  'received',
  'dkim-signature',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'authentication-results',
]);

export const CustomHeaderSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(76)
    .regex(/^[!-9;-~]+$/, 'must be a header name: printable ASCII without spaces or colons, such as X-Campaign')
    .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), {
      message: 'is set by the service (use the matching field: from, to, subject, reply_to_message_id, …)',
    })
    .describe('Header name, such as X-Campaign-Id'),
  value: headerText(998).describe('Header value (one line)'),
});

export const TrackingOptionsSchema = z.object({
  opens: z.boolean().optional().describe('Report opens'),
  links: z.boolean().optional().describe('Report link clicks'),
  thread_replies: z.boolean().optional().describe('Report replies'),
  label: z.string().max(2048).optional().describe('Echoed in every tracking notification of this message'),
});

/** A MIME type such as `application/pdf` (parameters allowed). */
export const CONTENT_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[^\r\n\0]*)?$/;

export const AttachmentInputSchema = z
  .object({
    id: IdSchema.optional().describe(
      'Id of an attachment already in this mailbox (received or sent), or of a completed large-attachment upload session of it, instead of giving content',
    ),
    filename: headerText(255).optional().describe('File name shown to the recipient'),
    content_type: z
      .string()
      .max(255)
      .regex(CONTENT_TYPE, 'must be a MIME type such as application/pdf')
      .optional()
      .describe('MIME type, such as application/pdf'),
    content: z
      .base64({ error: 'must be Base64 (standard alphabet, with padding, no line breaks)' })
      .optional()
      .describe('The file, Base64-encoded'),
    content_id: headerText(255)
      .optional()
      .describe('Content-ID for an inline image the HTML body shows as <img src="cid:…">; makes the attachment inline'),
    content_disposition: headerText(255).optional().describe('attachment (default) or inline'),
    is_inline: z.boolean().optional().describe('Show inside the body (needs content_id)'),
    size: z.number().int().min(0).optional().describe('Size in bytes (informational)'),
  })
  .refine((attachment) => attachment.id !== undefined || attachment.content !== undefined, {
    message: 'give content (Base64) or the id of an attachment in this mailbox',
  });
export type AttachmentInput = z.infer<typeof AttachmentInputSchema>;

/** Fields shared by sending and drafts. */
export const composeFields = {
  grant_id: GrantIdSchema,
  to: recipientList('Recipients: [{email, name?}]'),
  cc: recipientList('Cc: [{email, name?}]'),
  bcc: recipientList('Bcc: [{email, name?}]'),
  reply_to: z.array(RecipientSchema).max(10).optional().describe('Where replies go, if not to the sender'),
  from: z.array(RecipientSchema).max(1).optional().describe('Sender (default: the mailbox; only the name may differ)'),
  subject: headerText(998).optional().describe('Subject line'),
  body: z
    .string()
    .max(30 * 1024 * 1024)
    .optional()
    .describe('HTML, or plain text with is_plaintext'),
  is_plaintext: z.boolean().optional().describe('The body is plain text'),
  attachments: z
    .array(AttachmentInputSchema)
    .max(MAX_ATTACHMENTS)
    .optional()
    .describe('Files: [{filename, content_type, content (Base64)}] or [{id}]'),
  reply_to_message_id: IdSchema.optional().describe('Message this answers (joins its thread)'),
  tracking_options: TrackingOptionsSchema.optional().describe('{opens, links, thread_replies} booleans'),
  custom_headers: z
    .array(CustomHeaderSchema)
    .max(MAX_CUSTOM_HEADERS)
    .optional()
    .describe('Extra headers, such as X-Campaign-Id'),
  metadata: MetadataSchema.optional().describe('Your key-value strings'),
};

/** Extension (oversight): an agent answering an automated message (an auto-reply, a bounce, a list) says it means to. */
export const AllowAutomatedReplySchema = z.boolean().optional().describe('Answer an automated message anyway');

export const SendMessageInputSchema = z
  .object({
    ...composeFields,
    to: composeFields.to.optional(),
    cc: composeFields.cc.optional(),
    bcc: composeFields.bcc.optional(),
    send_at: UnixSecondsSchema.optional().describe('Send later, at this unix time (≤ 30 days ahead)'),
    use_draft: z.boolean().optional().describe('With send_at: keep the message in drafts if the schedule is stopped'),
    dry_run: z.boolean().optional().describe('Check only; sends nothing'),
    allow_automated_reply: AllowAutomatedReplySchema,
    claim_token: ClaimTokenFieldSchema,
    follow_up: FollowUpFieldSchema,
  })
  .meta({ id: 'SendMessageInput' });
export type SendMessageInput = z.infer<typeof SendMessageInputSchema>;

/** A domain name in a path, such as `mail.example.com` (compared lower-cased). */
const DomainNameSchema = z
  .string()
  .max(253)
  .regex(
    /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/,
    'must be a domain name such as mail.example.com',
  );

/**
 * A transactional send (`POST /v3/domains/{domain_name}/messages/send`, the SDK's `transactionalSend.send`): the
 * send fields without a mailbox, so no reply threading, no attachments by id, no scheduling and no tracking.
 */
export const TransactionalSendInputSchema = z
  .object({
    domain_name: DomainNameSchema.describe('A verified domain of this application; the sender must be on it'),
    from: z
      .union([RecipientSchema, z.array(RecipientSchema).length(1)])
      .describe(
        'The sender, an address on domain_name (required): one object {email, name?} as on the Nylas wire, or a list of exactly one',
      ),
    to: composeFields.to.optional(),
    cc: composeFields.cc.optional(),
    bcc: composeFields.bcc.optional(),
    reply_to: composeFields.reply_to,
    subject: composeFields.subject,
    body: composeFields.body,
    is_plaintext: composeFields.is_plaintext,
    attachments: z
      .array(AttachmentInputSchema)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe(`Files to attach as Base64 content (at most ${MAX_ATTACHMENTS}; the whole message at most 40 MB)`),
    custom_headers: composeFields.custom_headers,
    send_at: UnixSecondsSchema.optional().describe(
      'Not supported for a send from a domain (400): send from a mailbox to schedule',
    ),
  })
  .meta({ id: 'TransactionalSendInput' });
export type TransactionalSendInput = z.infer<typeof TransactionalSendInputSchema>;

/** What a transactional send answers (`TransactionalSendResult` of the SDK). */
export const TransactionalSendResultSchema = z
  .object({
    message_id: z.string().describe("Id of the queued message (there is no sender's copy in a mailbox)"),
    message_id_header: z.string().describe('The Message-ID header of the message sent'),
  })
  .meta({ id: 'TransactionalSendResult' });
export type TransactionalSendResult = z.infer<typeof TransactionalSendResultSchema>;

/** The message as sent (or, for a scheduled send, as it will be sent). */
export const SentMessageSchema = MessageSchema.extend({
  reply_to_message_id: z.string().optional().describe('The message this one answers'),
  tracking_options: TrackingOptionsSchema.optional(),
  schedule_id: z.string().optional().describe('Set for a scheduled send: stop it with stop_scheduled_message'),
  send_at: UnixSecondsSchema.optional(),
  use_draft: z.boolean().optional(),
});
export type SentMessage = z.infer<typeof SentMessageSchema>;

/** What a dry run (`dry_run: true`) answers: whether the send would go, and the verdicts of the outbound stage. */
export const SendDryRunSchema = z
  .object({
    dry_run: z.literal(true),
    blocked: z.boolean().describe('True when the send would be refused'),
    reason: z.string().optional().describe('Why, when blocked (the error the send would get)'),
    matched_rule_ids: z.array(z.string()).describe('Outbound rules that match'),
    verdicts: z.object({
      size: z
        .object({ bytes: z.number().int(), limit: z.number().nullable(), ok: z.boolean() })
        .describe('Composed size against limit_size_total_mime'),
      attachments: z
        .object({
          count: z.number().int(),
          total_bytes: z.number().int(),
          count_limit: z.number().nullable(),
          size_limit: z.number().nullable(),
          allowed_types: z.array(z.string()).nullable(),
          outside_limits: z.array(z.object({ filename: z.string(), reason: z.string() })),
        })
        .describe('Attachments against the attachment limits (reported, not refused)'),
      quota: z
        .object({
          sent_today: z.number().int(),
          limit: z.number().nullable(),
          left_today: z.number().nullable(),
          ok: z.boolean(),
        })
        .describe('Daily send quota (UTC day); left_today includes this send'),
    }),
    refused_recipients: z
      .array(z.object({ email: z.string(), reason: z.string(), rule_id: z.string().optional() }))
      .describe('Recipients a rule blocks, or that do not exist here'),
  })
  .meta({ id: 'SendDryRun' });
export type SendDryRun = z.infer<typeof SendDryRunSchema>;

/** What a send answers: the message, and for a scheduled send the schedule also at the top level (as Nylas does). */
export const SendResultSchema = z.object({
  data: SentMessageSchema,
  schedule_id: z.string().optional().describe('Scheduled sends only'),
  send_at: UnixSecondsSchema.optional(),
  use_draft: z.boolean().optional(),
  grant_id: z.string().optional(),
});
export type SendResult = z.infer<typeof SendResultSchema>;

/** What `send_message` answers: a send's answer, or with `dry_run` the verdict (still an object, for MCP structuredContent). */
export const SendMessageResultSchema = SendResultSchema.extend({
  data: z
    .union([SentMessageSchema, SendDryRunSchema, ApprovalSchema])
    .describe('The message sent, or with dry_run the verdict, or the approval a held send waits for'),
  approval_id: z.string().optional().describe('Extension: set when the send waits for approval (HTTP 202)'),
  status: z.literal('pending').optional().describe('Extension: pending while the send waits for approval'),
  message: z.string().optional().describe('Extension: what a held send means for the caller'),
});
export type SendMessageResult = z.infer<typeof SendMessageResultSchema>;

/** The HTTP status of a send's answer: 202 for a scheduled or held send (a schedule_id or approval_id), 200 for one made now. */
export function sendResultStatus(result: unknown): 200 | 202 {
  const answer = result as { schedule_id?: unknown; approval_id?: unknown };
  return answer.schedule_id !== undefined || answer.approval_id !== undefined ? 202 : 200;
}

export const ScheduledMessageSchema = z
  .object({
    schedule_id: z.string().describe('Schedule id'),
    status: z.object({
      code: z
        .enum(['pending', 'sending', 'success', 'failed', 'cancelled'])
        .describe('pending until send_at; then success or failed; cancelled when stopped'),
      description: z.string(),
    }),
    send_at: UnixSecondsSchema.optional(),
    close_time: UnixSecondsSchema.optional().describe('When it was sent, failed or stopped'),
    draft_id: z.string().optional().describe('The draft holding the message until it is sent'),
    message_id: z.string().optional().describe('The sent message, once sent'),
  })
  .meta({ id: 'ScheduledMessage' });
export type ScheduledMessage = z.infer<typeof ScheduledMessageSchema>;

export const ListScheduledMessagesInputSchema = z.object({ grant_id: GrantIdSchema });
export const ScheduledMessageRefInputSchema = z.object({
  grant_id: GrantIdSchema,
  schedule_id: IdSchema.describe('Schedule id from the send answer'),
});
export type ScheduledMessageRefInput = z.infer<typeof ScheduledMessageRefInputSchema>;
