/**
 * @module schemas/messages
 * Messages and attachments on the wire, as in Nylas v3 `models/messages.ts` and `models/attachments.ts`.
 */
import { z } from 'zod';
import { TrustSchema } from './trust.js';
import {
  BodyFormatSchema,
  GrantIdSchema,
  MaxTokensSchema,
  IdSchema,
  LimitSchema,
  MetadataSchema,
  PageTokenSchema,
  UnixSecondsSchema,
} from './common.js';

/**
 * A sender or recipient as read from a message. The address is not validated: received mail may carry
 * anything (`undisclosed-recipients`, odd syntax), and it is returned as it came.
 */
export const ParticipantSchema = z.object({
  name: z.string().optional().describe('Display name'),
  email: z.string().describe('Email address'),
});
export type Participant = z.infer<typeof ParticipantSchema>;

export const AttachmentSchema = z
  .object({
    id: z
      .string()
      .describe('Attachment id; download it with GET /v3/grants/{grant_id}/attachments/{id}/download?message_id=…'),
    grant_id: z.string(),
    filename: z.string().describe('File name (may be empty for unnamed parts)'),
    content_type: z.string().describe('MIME type, such as application/pdf'),
    size: z.number().int().describe('Size in bytes'),
    is_inline: z.boolean().describe('True for parts shown inside the body (referenced by content_id)'),
    content_id: z.string().optional().describe('Content-ID the HTML body refers to as cid:…'),
    content_disposition: z.string().optional().describe('attachment or inline'),
  })
  .meta({ id: 'Attachment' });
export type Attachment = z.infer<typeof AttachmentSchema>;

/** Delivery state of one recipient of a sent message. */
export const DeliveryStatusSchema = z.object({
  email: z.string().describe('Recipient'),
  status: z
    .enum(['queued', 'deferred', 'delivered', 'failed'])
    .describe('queued: not tried yet; deferred: a temporary failure, retried; delivered; failed: for good (bounce)'),
  attempts: z.number().int().describe('Delivery attempts so far'),
  code: z.number().int().optional().describe('SMTP reply code of the last attempt (0: no connection)'),
  response: z.string().optional().describe('Reply or error of the last attempt'),
  next_attempt_at: UnixSecondsSchema.optional().describe('When a deferred recipient is tried again'),
  updated_at: UnixSecondsSchema.describe('When the state last changed'),
  bounce: z
    .object({
      type: z
        .enum(['hard', 'soft'])
        .describe('hard: the address does not work (it is now suppressed); soft: this message did not get through'),
      code: z.string().optional().describe('Enhanced status code, e.g. 5.1.1'),
      smtp_code: z.number().int().optional().describe('SMTP reply code, e.g. 550'),
      reason: z.string().describe('The diagnostic of the report or reply'),
      source: z
        .enum(['dsn', 'smtp', 'timeout'])
        .describe(
          'dsn: a delivery status notification to the return path; smtp: a permanent reply during delivery; timeout: retries gave up',
        ),
      bounced_at: UnixSecondsSchema.describe('When the bounce was recorded'),
    })
    .optional()
    .describe('Extension: the latest bounce recorded for this recipient, if any'),
  complaint: z
    .object({
      type: z.string().describe('Feedback type of the ARF report, e.g. abuse'),
      complained_at: UnixSecondsSchema.describe('When the complaint was recorded'),
    })
    .optional()
    .describe('Extension: a complaint (feedback loop) recorded for this recipient, if any'),
});
export type DeliveryStatus = z.infer<typeof DeliveryStatusSchema>;

export const MessageHeaderSchema = z.object({
  name: z.string().describe('Header name'),
  value: z.string().describe('Header value as sent'),
});

/** What `fields` selects; `raw_mime` returns only id, grant_id, object and raw_mime. */
export const MessageFieldsSchema = z
  .enum(['standard', 'include_headers', 'include_basic_headers', 'include_tracking_options', 'raw_mime'])
  .describe('include_headers adds the headers; raw_mime gives only the raw message (base64url)');
export type MessageFields = z.infer<typeof MessageFieldsSchema>;

/** One authentication method's outcome (RFC 8601 result words: pass, fail, softfail, neutral, none, temperror, permerror…). */
const AuthResultSchema = z
  .string()
  .describe('pass, fail, softfail, neutral, none, policy, temperror or permerror (RFC 8601)');

/** Extension (not in Nylas): SPF, DKIM, DMARC and ARC of a received message, as the inbound authentication stage found them. */
export const AuthenticationResultsSchema = z
  .object({
    spf: z
      .object({
        result: AuthResultSchema,
        domain: z.string().optional().describe('Domain checked: the MAIL FROM domain, or the HELO name for bounces'),
      })
      .optional(),
    dkim: z
      .array(
        z.object({
          result: AuthResultSchema,
          domain: z.string().optional().describe('Signing domain (d=)'),
          selector: z.string().optional().describe('Key selector (s=)'),
        }),
      )
      .optional()
      .describe('One entry per DKIM signature; a single `none` entry when the message is unsigned'),
    dmarc: z
      .object({
        result: AuthResultSchema,
        domain: z.string().optional().describe('Organizational domain of the From address'),
        policy: z.string().optional().describe('The policy that applies: none, quarantine or reject'),
      })
      .optional(),
    arc: z.object({ result: AuthResultSchema }).optional(),
  })
  .meta({ id: 'AuthenticationResults' });
export type AuthenticationResults = z.infer<typeof AuthenticationResultsSchema>;

/** Extension (not in Nylas): the inbound spam stage's verdict on a received message. */
export const SpamVerdictSchema = z
  .object({
    is_spam: z
      .boolean()
      .describe('True when the score reached the threshold (or rspamd rejected the message outright)'),
    score: z.number().describe('Points from header anomalies, DNSBL listings and rspamd, added up'),
    threshold: z.number().describe("The policy's threshold: 6 / spam_sensitivity"),
    reasons: z
      .array(z.string())
      .describe(
        'What contributed, e.g. `header MISSING_DATE +1` or `dnsbl zen.spamhaus.org lists 192.0.2.1 (127.0.0.2) +6`',
      ),
  })
  .meta({ id: 'SpamVerdict' });
export type SpamVerdictWire = z.infer<typeof SpamVerdictSchema>;

/**
 * What kind of machine wrote a received message (issue 37), most telling first: `bounce` (a delivery status
 * notification or a mailer daemon), `report` (another `multipart/report`: a complaint, a read receipt), `auto_reply`
 * (an out-of-office or vacation reply), `auto_generated` (other automatic mail: RFC 3834 `auto-generated`, an agent's
 * send), `list` (a mailing list), `bulk` (bulk or junk precedence), `no_reply` (a sender no one reads).
 */
export const AUTOMATED_KINDS = [
  'bounce',
  'report',
  'auto_reply',
  'auto_generated',
  'list',
  'bulk',
  'no_reply',
] as const;
export type AutomatedKind = (typeof AUTOMATED_KINDS)[number];

/** Extension (not in Nylas): a received message a machine wrote, and the header fields that told. */
export const AutomatedSchema = z
  .object({
    kind: z.enum(AUTOMATED_KINDS).describe('bounce, report, auto_reply, auto_generated, list, bulk or no_reply'),
    reasons: z
      .array(z.string())
      .describe(
        'The header fields that told, e.g. `Auto-Submitted: auto-replied` or `List-Id: <dev.lists.example.org>`',
      ),
  })
  .meta({ id: 'Automated' });
export type AutomatedWire = z.infer<typeof AutomatedSchema>;

/** Who made a send (issue 36), as stored with it. */
export const ProvenanceSchema = z
  .object({
    api_key_id: z.string().nullable().describe('The key the send was made with; null without one'),
    api_key_name: z.string().nullable().describe('That key’s name at the time of the send'),
    principal: z.enum(['api_key', 'service_account', 'local']).describe('How the caller proved itself'),
    face: z
      .enum(['http', 'mcp', 'ai-sdk', 'smtp', 'dashboard', 'review-link', 'worker'])
      .nullable()
      .describe('The face the send came through (over /v3, X-Agentpost-Face may name the agent face it relays)'),
    client: z
      .object({
        name: z.string().nullable().describe('The MCP client’s name (initialize clientInfo.name)'),
        version: z.string().nullable().describe('The MCP client’s version'),
        session: z.string().nullable().describe('The MCP session'),
      })
      .nullable()
      .describe('The agent host of an MCP send; null on other faces'),
    tool: z.string().nullable().describe('The MCP or AI SDK tool that sent it'),
    request_id: z.string().nullable().describe('The request id of the call that sent (or scheduled) it'),
    approval_id: z.string().nullable().describe('The approval of a person, once sends can wait for one; null'),
  })
  .meta({ id: 'Provenance' });
export type Provenance = z.infer<typeof ProvenanceSchema>;

/** Extension (not in Nylas): an attachment the mailbox's policy removed from a received message. */
export const RemovedAttachmentSchema = z
  .object({
    filename: z.string().describe('File name as the sender gave it'),
    content_type: z.string().describe('MIME type as the sender gave it'),
    size: z.number().int().describe('Size in bytes'),
    reason: z.string().describe('Which policy limit removed it: size, count or type'),
  })
  .meta({ id: 'RemovedAttachment' });
export type RemovedAttachmentWire = z.infer<typeof RemovedAttachmentSchema>;

export const MessageSchema = z
  .object({
    id: z.string().describe('Message id'),
    grant_id: z.string().describe('Mailbox the message is in'),
    object: z.literal('message'),
    thread_id: z.string().optional().describe('Conversation the message belongs to'),
    subject: z.string().optional(),
    from: z.array(ParticipantSchema).optional(),
    to: z.array(ParticipantSchema).optional(),
    cc: z.array(ParticipantSchema).optional(),
    bcc: z.array(ParticipantSchema).optional(),
    reply_to: z.array(ParticipantSchema).optional(),
    date: UnixSecondsSchema.optional().describe('When the mail server received the message (sent messages: when sent)'),
    unread: z.boolean().optional(),
    starred: z.boolean().optional(),
    snippet: z.string().optional().describe('The first 100 characters of the body as text'),
    body: z.string().optional().describe('HTML body (plain-text mail is converted to HTML)'),
    body_format: z
      .enum(['markdown', 'text', 'html'])
      .optional()
      .describe('Extension: the format body was read in, when body_format was asked'),
    hidden_text_removed: z
      .number()
      .int()
      .optional()
      .describe('Extension: characters of hidden text removed from body (with body_format)'),
    body_cut: z
      .object({ omitted_tokens: z.number().int(), total_tokens: z.number().int() })
      .optional()
      .describe('Extension: body was cut to max_tokens; ask again with a larger max_tokens for more'),
    folders: z.array(z.string()).optional().describe('Ids of the folders the message is in'),
    attachments: z.array(AttachmentSchema).optional(),
    // Not MetadataSchema: messages stored before its limits may hold other values, and are returned as stored.
    metadata: z.record(z.string(), z.unknown()).optional().describe('Your key-value metadata'),
    headers: z
      .array(MessageHeaderSchema)
      .optional()
      .describe('Only with fields=include_headers or include_basic_headers'),
    raw_mime: z
      .string()
      .optional()
      .describe(
        'The message as received, base64url, less the attachments a policy removed (each replaced by a note naming it); only with fields=raw_mime (then the other fields are absent)',
      ),
    delivery_status: z
      .array(DeliveryStatusSchema)
      .optional()
      .describe('Sent messages: the delivery state of each recipient'),
    tracking_options: z
      .object({
        opens: z.boolean().optional(),
        links: z.boolean().optional(),
        thread_replies: z.boolean().optional(),
        label: z.string().optional(),
      })
      .optional()
      .describe('Sent messages, with fields=include_tracking_options: the tracking options given at send time'),
    provenance: ProvenanceSchema.optional().describe(
      'Sent messages (extension): who made the send (key, face, MCP client and session, tool, request id)',
    ),
    authentication_results: AuthenticationResultsSchema.optional().describe(
      'Received messages (extension): SPF, DKIM, DMARC and ARC results; absent when not checked',
    ),
    spam: SpamVerdictSchema.optional().describe(
      'Received messages (extension): the spam verdict; absent when not checked',
    ),
    removed_attachments: z
      .array(RemovedAttachmentSchema)
      .optional()
      .describe(
        'Received messages (extension): attachments the policy removed before storing (the raw MIME keeps them); absent when none',
      ),
    automated: AutomatedSchema.optional().describe(
      'Received messages (extension): present when a machine wrote it (an auto-reply or out-of-office, a bounce, a list, bulk mail, a no-reply sender); an agent does not answer it unless the send says allow_automated_reply',
    ),
    trust: TrustSchema.optional().describe(
      'Extension: what to weigh before believing the message (SPF/DKIM/DMARC, display-name spoof, lookalike domain, forged thread, link mismatch, hidden text, injection score), computed when read; on a single message unless select leaves it out, on a list when select names it; never with fields=raw_mime',
    ),
  })
  .meta({ id: 'Message' });
export type Message = z.infer<typeof MessageSchema>;

const AddressFilterSchema = z.array(z.string().min(1).max(320)).max(50);

/**
 * `select`: a comma-separated list of top-level fields of `schema` to return. A field the object does not have is
 * an error naming it and listing the fields there are, rather than a field silently missing from every answer.
 */
export function selectSchemaOf(schema: z.ZodObject, noun: string) {
  const valid = Object.keys(schema.shape);
  const known = new Set(valid);
  return z
    .string()
    .max(1024)
    .regex(/^[a-z_]+(,[a-z_]+)*$/, 'a comma-separated list of field names such as id,subject,from')
    .superRefine((value, context) => {
      const unknown = [...new Set(value.split(',').filter((field) => field !== '' && !known.has(field)))];
      if (unknown.length > 0) {
        context.addIssue({
          code: 'custom',
          message: `unknown ${noun} field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the fields are ${valid.join(', ')}`,
        });
      }
    })
    .optional()
    .describe('Fields, comma-separated');
}

/** `select` of messages: a field a message does not have is an error. */
export const MessageSelectSchema = selectSchemaOf(MessageSchema, 'message');

export const ListMessagesInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  subject: z.string().max(998).optional().describe('Subject contains (any case)'),
  any_email: AddressFilterSchema.optional().describe('From or to any of these addresses'),
  from: AddressFilterSchema.optional().describe('From one of these addresses'),
  to: AddressFilterSchema.optional().describe('To one of these addresses'),
  cc: AddressFilterSchema.optional().describe('Only messages copied to one of these addresses'),
  bcc: AddressFilterSchema.optional().describe('Only messages blind-copied to one of these addresses'),
  in: z.array(IdSchema).max(20).optional().describe('In these folder ids (inbox, sent, …)'),
  unread: z.boolean().optional().describe('Unread or read only'),
  starred: z.boolean().optional().describe('Starred or not only'),
  thread_id: IdSchema.optional().describe('In this thread'),
  received_before: UnixSecondsSchema.optional().describe('Before (unix s)'),
  received_after: UnixSecondsSchema.optional().describe('After (unix s)'),
  has_attachment: z.boolean().optional().describe('With attachments or not'),
  search_query_native: z
    .string()
    .max(1000)
    .optional()
    .describe('Full-text search: words ANDed, "phrases", prefix*, OR, subject:/from:/to:/body:'),
  fields: MessageFieldsSchema.optional(),
  select: MessageSelectSchema,
});
export type ListMessagesInput = z.infer<typeof ListMessagesInputSchema>;

export const GetMessageInputSchema = z.object({
  grant_id: GrantIdSchema,
  message_id: IdSchema.describe('Message id'),
  fields: MessageFieldsSchema.optional(),
  select: MessageSelectSchema,
  body_format: BodyFormatSchema,
  max_tokens: MaxTokensSchema,
});
export type GetMessageInput = z.infer<typeof GetMessageInputSchema>;

export const UpdateMessageInputSchema = z.object({
  grant_id: GrantIdSchema,
  message_id: IdSchema.describe('Message id'),
  unread: z.boolean().optional().describe('Mark read (false) or unread (true)'),
  starred: z.boolean().optional().describe('Star (true) or unstar (false)'),
  folders: z.array(IdSchema).min(1).max(20).optional().describe('Its folder ids from now on (replaces them)'),
  metadata: MetadataSchema.optional().describe('Your key-value strings; replace the current ones'),
});
export type UpdateMessageInput = z.infer<typeof UpdateMessageInputSchema>;

export const DeleteMessageInputSchema = z.object({
  grant_id: GrantIdSchema,
  message_id: IdSchema.describe('Message id'),
  hard_delete: z.boolean().optional().describe('Delete for good, not to trash'),
});
export type DeleteMessageInput = z.infer<typeof DeleteMessageInputSchema>;

export const GetAttachmentInputSchema = z.object({
  grant_id: GrantIdSchema,
  attachment_id: IdSchema.describe('Attachment id'),
  message_id: z
    .string({ error: 'required: pass the id of the message the attachment belongs to (message_id=…)' })
    .min(1)
    .max(256)
    .describe('Its message id'),
});
export type GetAttachmentInput = z.infer<typeof GetAttachmentInputSchema>;

/** Most bytes of an attachment returned inline by `get_attachment` (MCP results and model context stay small). */
export const MAX_INLINE_ATTACHMENT_BYTES = 5 * 1024 * 1024;

export const ReadAttachmentInputSchema = GetAttachmentInputSchema.extend({
  max_bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_INLINE_ATTACHMENT_BYTES)
    .optional()
    .describe(`Bytes at most (default 1 MB, up to ${MAX_INLINE_ATTACHMENT_BYTES / 1024 / 1024} MB)`),
});
export type ReadAttachmentInput = z.infer<typeof ReadAttachmentInputSchema>;

export const AttachmentWithContentSchema = AttachmentSchema.extend({
  content: z
    .object({
      encoding: z.enum(['utf8', 'base64']).describe('utf8 for text types (the text itself), base64 for binary files'),
      data: z.string().describe('The file content in that encoding'),
      truncated: z.boolean().describe('True when the file is larger than max_bytes and only its start is here'),
    })
    .describe('The file content'),
});
export type AttachmentWithContent = z.infer<typeof AttachmentWithContentSchema>;

export const CleanMessagesInputSchema = z.object({
  grant_id: GrantIdSchema,
  message_id: z.array(IdSchema).min(1).max(20).describe('Ids of the messages to clean (at most 20)'),
  ignore_links: z.boolean().optional().describe('Keep the text of links but drop the links (default true)'),
  ignore_images: z
    .boolean()
    .optional()
    .describe('Drop images (default true); with images_as_markdown, only inline cid: images are dropped'),
  images_as_markdown: z.boolean().optional().describe('Keep images as their alt text (default true)'),
  ignore_tables: z.boolean().optional().describe('Flatten tables to their text (default true; false: Markdown tables)'),
  remove_conclusion_phrases: z
    .boolean()
    .optional()
    .describe('Drop a closing phrase such as "Best," or "Regards" and the signature after it (default true)'),
  html_as_markdown: z
    .boolean()
    .optional()
    .describe('Return the conversation as Markdown instead of plain text (default false)'),
});
export type CleanMessagesInput = z.infer<typeof CleanMessagesInputSchema>;

export const CleanedMessageSchema = MessageSchema.extend({
  conversation: z
    .string()
    .describe(
      'The body as plain text (Markdown with html_as_markdown) without quoted history, hidden text, scripts and styles, answers written between quoted lines kept, cleaned as asked',
    ),
}).meta({ id: 'CleanedMessage' });
export type CleanedMessage = z.infer<typeof CleanedMessageSchema>;
