/**
 * @module schemas/domains
 * The Manage Domains resource, as in the Nylas SDK's `models/domains.ts`.
 */
import { z } from 'zod';
import { IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

export const DomainSchema = z
  .object({
    id: z.string(),
    name: z.string().describe('Human-readable label'),
    domain_address: z.string().describe('The registered domain, lower-cased'),
    organization_id: z.string().describe('The owning application'),
    branded: z.boolean().describe('True for a trial subdomain of the service: usable at once, no DNS records'),
    region: z.string(),
    verified_ownership: z.boolean(),
    verified_mx: z.boolean(),
    verified_spf: z.boolean(),
    verified_feedback: z.boolean(),
    verified_dkim: z.boolean(),
    verified_dmarc: z.boolean(),
    verified_arc: z.boolean(),
    warm_up: z
      .boolean()
      .describe(
        'Extension: the domain is on its warm-up ramp (a daily cap on recipients, rising over four weeks; 429 past it)',
      ),
    warm_up_started_at: UnixSecondsSchema.optional().describe(
      'Extension: when the ramp started (its day 1); absent when warm_up is off',
    ),
    sending: z
      .object({
        status: z
          .enum(['active', 'paused'])
          .describe(
            '"paused": every send from this domain, by any grant, is refused (403 sending_paused) until resumed with PUT /v3/admin/domains/{id} {"sending": {"status": "active"}}',
          ),
        reason: z.string().optional().describe('Why sending is paused: the rate, its threshold and the window'),
        paused_at: UnixSecondsSchema.optional().describe('When sending was paused'),
      })
      .describe(
        'Extension: whether this domain may send. The service pauses it when the hard-bounce or complaint rate of everything sent from it crosses a threshold',
      ),
    reputation: z
      .object({
        sent: z
          .number()
          .int()
          .min(0)
          .describe('Recipients sent to from this domain in the window (since the last resume)'),
        hard_bounces: z.number().int().min(0),
        soft_bounces: z.number().int().min(0),
        complaints: z.number().int().min(0),
        bounce_rate: z.number().describe('hard_bounces / sent (0 when nothing was sent)'),
        complaint_rate: z.number().describe('complaints / sent (0 when nothing was sent)'),
        window_days: z
          .number()
          .int()
          .min(1)
          .describe('The rolling window in UTC days ending today (AGENTPOST_PAUSE_WINDOW)'),
      })
      .optional()
      .describe(
        'Extension: the bounce and complaint rates of everything sent from this domain (all its grants) over the rolling window',
      ),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Domain' });
export type Domain = z.infer<typeof DomainSchema>;

const DomainAddressSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name such as mail.example.com');

/** `warm_up` on create and update. */
const WarmUpInputSchema = z
  .boolean()
  .optional()
  .describe(
    'Extension: true puts the domain on a warm-up ramp of daily send caps starting today (AGENTPOST_WARMUP_SCHEDULE; by default four weeks, 50 recipients on day 1, doubling every 3-4 days, no cap from day 29); false takes it off. Turning it on again restarts the ramp. On create, custom domains default to true and trial domains to false',
  );

export const ListDomainsInputSchema = z.object({ limit: LimitSchema, page_token: PageTokenSchema });
export const DomainRefInputSchema = z.object({ domain_id: IdSchema });
export const CreateDomainInputSchema = z.object({
  name: z.string().trim().min(1).max(256).describe('Human-readable label'),
  domain_address: DomainAddressSchema.describe('The domain to register, e.g. agents.example.com'),
  warm_up: WarmUpInputSchema,
});
export const UpdateDomainInputSchema = z.object({
  domain_id: IdSchema,
  name: z.string().trim().min(1).max(256).optional().describe('New label (the address cannot change)'),
  warm_up: WarmUpInputSchema,
  sending: z
    .object({ status: z.literal('active').describe('"active" resumes sending') })
    .optional()
    .describe(
      'Extension: {"status": "active"} resumes a domain whose sending the service paused (recorded with the request id; the domain\'s rates then count only what is sent after the resume)',
    ),
});

export const VerificationTypeSchema = z
  .enum(['ownership', 'mx', 'spf', 'dkim', 'feedback', 'dmarc'])
  .describe(
    '`dmarc` is an extension: the TXT record at `_dmarc.<domain>` (v=DMARC1; p=none; rua=mailto:dmarc-reports@<domain>)',
  );
export type VerificationType = z.infer<typeof VerificationTypeSchema>;

export const DomainVerificationInputSchema = z.object({
  domain_id: IdSchema,
  type: VerificationTypeSchema.describe('Which DNS record to describe or check'),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const DomainVerificationResultSchema = z
  .object({
    domain_id: z.string(),
    attempt: z.object({
      type: VerificationTypeSchema,
      options: z.object({
        host: z.string(),
        type: z.enum(['TXT', 'MX']),
        value: z.string(),
        priority: z.number().optional(),
      }),
    }),
    status: z.enum(['pending', 'done', 'failed']),
    created_at: UnixSecondsSchema,
    message: z.string().describe('What to publish, or why verification failed'),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'DomainVerificationResult' });
export type DomainVerificationResult = z.infer<typeof DomainVerificationResultSchema>;

export const ListDmarcReportsInputSchema = z.object({
  domain_id: IdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
});

const PassFailSchema = z.object({ pass: z.number().int(), fail: z.number().int() });

export const DmarcReportSchema = z
  .object({
    id: z.string(),
    object: z.literal('dmarc_report'),
    domain_id: z.string(),
    org_name: z.string().describe('Who sent the report (report_metadata/org_name), e.g. google.com'),
    email: z.string().optional().describe("The reporter's contact address (report_metadata/email)"),
    report_id: z.string().describe("The reporter's id of the report; a report mailed twice is kept once"),
    date_range: z.object({ begin: UnixSecondsSchema, end: UnixSecondsSchema }).describe('The period the report covers'),
    policy_published: z
      .object({
        domain: z.string(),
        adkim: z.string().optional(),
        aspf: z.string().optional(),
        p: z.string().optional(),
        sp: z.string().optional(),
        pct: z.number().int().optional(),
      })
      .describe('The DMARC record the reporter found'),
    message_count: z.number().int().describe('Messages the report covers, in all'),
    sources: z
      .array(
        z.object({
          source_ip: z.string(),
          count: z.number().int().describe('Messages from this address'),
          dkim: PassFailSchema.describe('DMARC-aligned DKIM results (policy_evaluated/dkim), by message'),
          spf: PassFailSchema.describe('DMARC-aligned SPF results (policy_evaluated/spf), by message'),
          disposition: z
            .object({ none: z.number().int(), quarantine: z.number().int(), reject: z.number().int() })
            .describe('What the receiver did with them'),
        }),
      )
      .describe('Counts by sending address, most messages first'),
    received_at: UnixSecondsSchema,
  })
  .meta({ id: 'DmarcReport' });
export type DmarcReport = z.infer<typeof DmarcReportSchema>;

/** How many days of a domain's sending one read returns at most (a quarter). */
export const MAX_SENDING_DAYS = 92;

export const ListDomainSendingDaysInputSchema = z
  .object({
    domain_id: IdSchema,
    days: z
      .number()
      .int()
      .min(1)
      .max(MAX_SENDING_DAYS)
      .optional()
      .describe(`Days back from today (UTC), today included: 1-${MAX_SENDING_DAYS} (default 30)`),
  })
  .meta({ id: 'ListDomainSendingDaysInput' });
export type ListDomainSendingDaysInput = z.infer<typeof ListDomainSendingDaysInputSchema>;

export const DomainSendingDaySchema = z
  .object({
    day: z.string().describe('The UTC day, YYYY-MM-DD'),
    sent: z.number().int().min(0).describe('Recipients sent to from this domain that day'),
    hard_bounces: z.number().int().min(0).describe('Hard bounces reported that day against sends from this domain'),
    soft_bounces: z.number().int().min(0),
    complaints: z.number().int().min(0),
    bounce_rate: z.number().describe('hard_bounces / sent (0 when nothing was sent)'),
    complaint_rate: z.number().describe('complaints / sent (0 when nothing was sent)'),
  })
  .meta({ id: 'DomainSendingDay' });
export type DomainSendingDay = z.infer<typeof DomainSendingDaySchema>;

export const DomainSendingDaysSchema = z
  .object({
    data: z
      .array(DomainSendingDaySchema)
      .describe('One entry per day, oldest first, days without sending included (zeros)'),
  })
  .meta({ id: 'DomainSendingDays' });
export type DomainSendingDays = z.infer<typeof DomainSendingDaysSchema>;
