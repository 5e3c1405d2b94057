/**
 * Oversight (extension, not in Nylas; issue 37, docs/oversight.md): a grant's oversight mode, a policy's oversight
 * settings, the approval queue (`/v3/approvals`) and the review list of sends made under `monitored`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

export const OVERSIGHT_MODES = ['autonomous', 'monitored', 'gated_send', 'gated_all', 'read_only'] as const;

export const OversightModeSchema = z
  .enum(OVERSIGHT_MODES)
  .describe(
    'autonomous: sends go out (the default); monitored: they go out and are listed for review; gated_send: a send to anyone outside the thread and the allowlist waits for approval; gated_all: every send waits; read_only: no send, draft, calendar or contact write',
  );

const Positive = z.number().int().min(1).max(1_000_000);

export const PolicyOversightSchema = z
  .strictObject({
    untrusted_read_gate: z
      .enum(['off', 'new_recipients', 'all_sends'])
      .optional()
      .describe(
        'After a key or MCP session read a flagged message, its sends to new recipients (or all its sends) need approval for a while. Default: new_recipients, off under autonomous',
      ),
    untrusted_read_window_minutes: Positive.optional().describe('How long a flagged read gates sends (default 60)'),
    untrusted_injection_threshold: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('A read message with an injection score at or above this is flagged (default 0.5)'),
    allowed_recipients: z
      .array(z.string().min(1).max(320))
      .max(1000)
      .optional()
      .describe('Addresses and domains (@example.com) a gated_send grant writes to without approval'),
    reviewers: z
      .array(z.email().max(320))
      .max(20)
      .optional()
      .describe('Addresses told of each send that waits, with one-time links to decide it'),
    agent_headers: z
      .boolean()
      .optional()
      .describe('Agent sends carry Auto-Submitted: auto-generated and X-Auto-Response-Suppress: All (default true)'),
    thread_agent_sends_per_hour: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe('Agent sends one thread may take in an hour (default 5; 0: none)'),
    loop_messages: Positive.optional().describe(
      'Loop: more than this many messages between two mailboxes (default 10)',
    ),
    loop_minutes: Positive.optional().describe('… in one thread within this many minutes (default 10)'),
    sends_per_hour: Positive.optional().describe('Sends per grant per hour (absent: no budget)'),
    sends_per_day: Positive.optional().describe('Sends per grant per UTC day (absent: no budget)'),
    new_recipients_per_day: Positive.optional().describe('Addresses never written to before, per grant per UTC day'),
    send_rate_per_minute: Positive.optional().describe('Sends a minute; a faster burst is queued (absent: no rate)'),
    burst_queue_max: Positive.optional().describe('Sends queued at most per grant before a burst is refused (1000)'),
  })
  .describe('Extension: the guards of oversight (docs/oversight.md); absent settings take their defaults')
  .meta({ id: 'PolicyOversight' });

const AddressSchema = z.object({ name: z.string().optional(), email: z.string() });

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'sent', 'failed'] as const;

export const ApprovalSchema = z
  .object({
    id: z.string().describe('Approval id'),
    object: z.literal('approval'),
    grant_id: z.string(),
    status: z
      .enum(APPROVAL_STATUSES)
      .describe('pending; then approved (sent, or failed when it could not leave), rejected or expired'),
    kind: z.enum(['send', 'draft']).describe('A send, or a draft sent (draft_id)'),
    draft_id: z.string().nullable(),
    checks: z
      .array(
        z.object({
          check: z.string().describe('The check that asked: gated_all, gated_send, untrusted_read, loop, …'),
          reason: z.string(),
          trust: z.array(z.string()).optional().describe('The trust reasons of the mail concerned'),
        }),
      )
      .describe('Why the send waits'),
    sha256: z
      .string()
      .describe('SHA-256 of the exact message that will leave, its Date and DKIM-Signature headers excepted'),
    excepted_headers: z.array(z.string()).describe('Headers set again when it leaves'),
    message_id_header: z.string(),
    subject: z.string(),
    from: z.array(AddressSchema),
    to: z.array(AddressSchema),
    cc: z.array(AddressSchema),
    bcc: z.array(AddressSchema),
    body: z.string().describe('The body as it will leave (HTML unless is_plaintext)'),
    is_plaintext: z.boolean(),
    attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number().int() })),
    reply_to_message_id: z.string().nullable(),
    thread_id: z.string().nullable(),
    requested_by: z
      .object({ api_key_id: z.string().nullable(), face: z.string().nullable(), tool: z.string().nullable() })
      .describe('Who asked'),
    decided_by: z.object({ api_key_id: z.string().nullable(), name: z.string().nullable() }).nullable(),
    decision_reason: z.string().nullable(),
    sent_message_id: z.string().nullable().describe('The sent copy, once the approved send left'),
    error: z.string().nullable(),
    expires_at: UnixSecondsSchema,
    decided_at: UnixSecondsSchema.nullable(),
    created_at: UnixSecondsSchema,
  })
  .meta({ id: 'Approval' });
export type Approval = z.infer<typeof ApprovalSchema>;

/** What a send that must wait answers (HTTP 202), on every face. */
export const ApprovalPendingSchema = z
  .object({
    approval_id: z.string(),
    status: z.literal('pending'),
    message: z.string().describe('What it means for the caller: queued for a person, do not send again'),
    data: ApprovalSchema,
  })
  .meta({ id: 'ApprovalPending' });
export type ApprovalPending = z.infer<typeof ApprovalPendingSchema>;

export const ListApprovalsInputSchema = z
  .object({
    limit: LimitSchema,
    page_token: PageTokenSchema,
    grant_id: GrantIdSchema.optional().describe('Only this grant’s'),
    status: z.enum(APPROVAL_STATUSES).optional(),
  })
  .meta({ id: 'ListApprovalsInput' });
export type ListApprovalsInput = z.infer<typeof ListApprovalsInputSchema>;

export const ApprovalRefInputSchema = z
  .strictObject({ approval_id: IdSchema.describe('Approval id') })
  .meta({ id: 'ApprovalRefInput' });

export const DecideApprovalInputSchema = z
  .strictObject({
    approval_id: IdSchema.describe('Approval id'),
    reason: z.string().max(2000).optional().describe('Why (kept with the decision, sent in approval.decided)'),
  })
  .meta({ id: 'DecideApprovalInput' });
export type DecideApprovalInput = z.infer<typeof DecideApprovalInputSchema>;

export const SendReviewSchema = z
  .object({
    id: z.string(),
    object: z.literal('send_review'),
    grant_id: z.string(),
    message_id: z.string().describe('The sent copy'),
    subject: z.string(),
    recipients: z.array(z.string()),
    status: z.enum(['unreviewed', 'ok', 'flagged']),
    note: z.string().nullable(),
    requested_by: z.object({ api_key_id: z.string().nullable(), face: z.string().nullable() }),
    reviewed_at: UnixSecondsSchema.nullable(),
    created_at: UnixSecondsSchema,
  })
  .meta({ id: 'SendReview' });
export type SendReview = z.infer<typeof SendReviewSchema>;

export const ListSendReviewsInputSchema = z
  .object({
    limit: LimitSchema,
    page_token: PageTokenSchema,
    grant_id: GrantIdSchema.optional(),
    status: z.enum(['unreviewed', 'ok', 'flagged']).optional(),
  })
  .meta({ id: 'ListSendReviewsInput' });
export type ListSendReviewsInput = z.infer<typeof ListSendReviewsInputSchema>;

export const MarkSendReviewInputSchema = z
  .strictObject({
    review_id: IdSchema,
    status: z.enum(['ok', 'flagged']),
    note: z.string().max(2000).optional(),
  })
  .meta({ id: 'MarkSendReviewInput' });
export type MarkSendReviewInput = z.infer<typeof MarkSendReviewInputSchema>;

export const SuspendGrantInputSchema = z
  .strictObject({
    grant_id: GrantIdSchema,
    reason: z.string().min(1).max(1000).describe('Shown in every refusal while suspended'),
  })
  .meta({ id: 'SuspendGrantInput' });
export type SuspendGrantInput = z.infer<typeof SuspendGrantInputSchema>;
