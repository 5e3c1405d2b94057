/**
 * @module schemas/admin
 * Administration of Agent Accounts on the wire (the reference §15; the nylas SDK's `models/{workspaces,policies,
 * rules,agentLists}.ts`): workspaces, policies, rules, lists and their items, and rule evaluations. Every request
 * object is strict: an unknown field is a 400 that names it, so a misspelt limit or action never passes silently.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';
import { OversightModeSchema, PolicyOversightSchema } from './oversight.js';

/** How many ids a workspace or policy may name, and how many grants one manual-assign call may move each way. */
export const ADMIN_LIMITS = {
  ruleIds: 100,
  grantsPerAssign: 500,
  listItemsPerCall: 1000,
  conditions: 50,
  actions: 20,
} as const;

const NameSchema = z.string().min(1).max(256);
const DescriptionSchema = z.string().max(1024).describe('Free text');
/** A DNS host name (ASCII, lower or upper case), as a workspace domain or a `domain` list item. */
export const HOST_NAME_PATTERN =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const HostNameSchema = z.string().max(253).regex(HOST_NAME_PATTERN, 'must be a domain name such as example.com');
const RuleIdsSchema = z.array(IdSchema).max(ADMIN_LIMITS.ruleIds);
const OrganizationIdSchema = z
  .string()
  .describe('The owning organization (the application itself on a self-hosted service)');
const ApplicationIdSchema = z.string().describe('The owning application');

// ─── Workspaces ────────────────────────────────────────────────────────────────────────────────────────────────

export const WorkspaceSchema = z
  .object({
    workspace_id: z.string().describe('Workspace id'),
    application_id: ApplicationIdSchema,
    name: z.string().describe('Workspace name'),
    domain: z.string().describe('Email domain of the workspace ("" for a workspace without one)'),
    auto_group: z.boolean().describe('Whether new Agent Accounts on the domain are placed here automatically'),
    default: z.boolean().describe("True for the application's default workspace (exactly one; it cannot be deleted)"),
    policy_id: z.string().optional().describe("The policy applied to the workspace's grants"),
    rule_ids: z.array(z.string()).describe("The rules applied to the workspace's grants"),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Workspace' });
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const ListWorkspacesInputSchema = z.strictObject({}).meta({ id: 'ListWorkspacesInput' });

export const WorkspaceListSchema = z
  .object({ data: z.array(WorkspaceSchema).describe('Every workspace of the application (not paginated)') })
  .meta({ id: 'WorkspaceList' });

export const WorkspaceRefInputSchema = z
  .strictObject({ workspace_id: IdSchema.describe('Workspace id') })
  .meta({ id: 'WorkspaceRefInput' });

export const CreateWorkspaceInputSchema = z
  .strictObject({
    name: NameSchema.describe('Workspace name, 1 to 256 characters'),
    domain: HostNameSchema.optional().describe('Email domain of the workspace, e.g. agents.example.com'),
    auto_group: z
      .boolean()
      .optional()
      .describe('Place new Agent Accounts on the domain here (default true when a domain is given)'),
    policy_id: IdSchema.optional().describe('A policy of this application'),
    rule_ids: RuleIdsSchema.optional().describe(`Rules of this application, at most ${ADMIN_LIMITS.ruleIds}`),
  })
  .meta({ id: 'CreateWorkspaceInput' });
export type CreateWorkspaceInput = z.infer<typeof CreateWorkspaceInputSchema>;

export const UpdateWorkspaceInputSchema = z
  .strictObject({
    workspace_id: IdSchema.describe('Workspace id'),
    name: NameSchema.optional().describe('New name (not on the default workspace)'),
    domain: HostNameSchema.optional().describe('New domain (not on the default workspace)'),
    auto_group: z.boolean().optional().describe('New auto_group (not on the default workspace)'),
    policy_id: IdSchema.nullable().optional().describe('A policy of this application; null clears it'),
    rule_ids: RuleIdsSchema.nullable().optional().describe('Replaces the rules; null clears them'),
  })
  .meta({ id: 'UpdateWorkspaceInput' });
export type UpdateWorkspaceInput = z.infer<typeof UpdateWorkspaceInputSchema>;

export const AutoGroupInputSchema = z
  .strictObject({
    after_created_at: UnixSecondsSchema.optional().describe('Only grants created at or after this time'),
    invalid_also: z.boolean().optional().describe('Also move grants whose status is invalid (default false)'),
    specific_domain: HostNameSchema.optional().describe('Only the workspace of this domain'),
  })
  .meta({ id: 'AutoGroupInput' });
export type AutoGroupInput = z.infer<typeof AutoGroupInputSchema>;

export const AutoGroupResultSchema = z
  .object({
    job_id: z.string().describe('Id of the grouping run (it completes before the answer)'),
    message: z.string().describe('What was done'),
  })
  .meta({ id: 'AutoGroupResult' });

export const ManualAssignInputSchema = z
  .strictObject({
    workspace_id: IdSchema.describe('Workspace id'),
    assign_grants: z
      .array(IdSchema)
      .max(ADMIN_LIMITS.grantsPerAssign)
      .optional()
      .describe(`Grant ids to move into the workspace, at most ${ADMIN_LIMITS.grantsPerAssign}`),
    remove_grants: z
      .array(IdSchema)
      .max(ADMIN_LIMITS.grantsPerAssign)
      .optional()
      .describe(
        `Grant ids to move out of the workspace (to the default workspace), at most ${ADMIN_LIMITS.grantsPerAssign}`,
      ),
  })
  .meta({ id: 'ManualAssignInput' });
export type ManualAssignInput = z.infer<typeof ManualAssignInputSchema>;

export const ManualAssignResultSchema = z
  .object({
    application_id: ApplicationIdSchema,
    workspace_id: z.string().describe('Workspace id'),
    domain: z.string().describe("The workspace's domain (empty when it has none)"),
    grants_assigned: z.array(z.string()).nullable().describe('Grants moved into the workspace, or null'),
    grants_removed: z.array(z.string()).nullable().describe('Grants moved out of the workspace, or null'),
  })
  .meta({ id: 'ManualAssignResult' });
export type ManualAssignResult = z.infer<typeof ManualAssignResultSchema>;

// ─── Policies ──────────────────────────────────────────────────────────────────────────────────────────────────

const Count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const PolicyLimitsSchema = z
  .strictObject({
    limit_attachment_size_limit: Count.optional().describe('Largest attachment kept, in bytes'),
    limit_attachment_count_limit: Count.optional().describe('Most attachments kept per message'),
    limit_attachment_allowed_types: z
      .array(z.string().min(1).max(255))
      .max(100)
      .optional()
      .describe('MIME types of attachments kept (e.g. application/pdf, image/*)'),
    limit_size_total_mime: Count.optional().describe('Largest message accepted, in bytes'),
    limit_storage_total: Count.optional().describe('Storage per grant, in bytes'),
    limit_count_daily_message_received: Count.optional().describe('Messages received per grant per UTC day'),
    limit_count_daily_email_sent: z
      .number()
      .int()
      .min(-1)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe('Messages sent per grant per UTC day; -1 = unlimited'),
    limit_inbox_retention_period: Count.optional().describe('Days mail is kept'),
    limit_spam_retention_period: Count.optional().describe(
      'Days spam is kept; not longer than limit_inbox_retention_period',
    ),
  })
  .describe('Limits; an absent limit means none')
  .meta({ id: 'PolicyLimits' });

export const SpamDetectionSchema = z
  .strictObject({
    use_list_dnsbl: z.boolean().optional().describe('Look the sending address up in DNS block lists'),
    use_header_anomaly_detection: z.boolean().optional().describe('Score header anomalies'),
    spam_sensitivity: z.number().min(0.1).max(5).optional().describe('0.1 to 5.0 (default 1); higher catches more'),
  })
  .describe('Spam detection settings')
  .meta({ id: 'SpamDetection' });

export const PolicyOptionsSchema = z
  .strictObject({
    additional_folders: z
      .array(z.string().min(1).max(256))
      .max(50)
      .optional()
      .describe('Folders created for every grant under the policy'),
    use_cidr_aliasing: z.boolean().optional().describe('Accepted and stored'),
  })
  .describe('Policy options')
  .meta({ id: 'PolicyOptions' });

export const PolicySchema = z
  .object({
    id: z.string().describe('Policy id'),
    name: z.string().describe('Policy name'),
    application_id: ApplicationIdSchema,
    organization_id: OrganizationIdSchema,
    options: PolicyOptionsSchema,
    limits: PolicyLimitsSchema,
    rules: z
      .array(z.string())
      .describe("Legacy: rule ids attached to the policy itself, evaluated with the workspace's"),
    spam_detection: SpamDetectionSchema,
    oversight_mode: OversightModeSchema.nullable().describe(
      'Extension: the oversight mode of the grants under this policy (null: autonomous); a grant may set its own',
    ),
    oversight: PolicyOversightSchema,
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Policy' });
export type Policy = z.infer<typeof PolicySchema>;

export const CreatePolicyInputSchema = z
  .strictObject({
    name: NameSchema.describe('Policy name, 1 to 256 characters'),
    limits: PolicyLimitsSchema.optional(),
    spam_detection: SpamDetectionSchema.optional(),
    options: PolicyOptionsSchema.optional(),
    rules: RuleIdsSchema.optional().describe('Legacy: rule ids of this application'),
    oversight_mode: OversightModeSchema.nullable().optional().describe('Extension: the mode of its grants'),
    oversight: PolicyOversightSchema.optional(),
  })
  .meta({ id: 'CreatePolicyInput' });
export type CreatePolicyInput = z.infer<typeof CreatePolicyInputSchema>;

export const UpdatePolicyInputSchema = z
  .strictObject({
    policy_id: IdSchema.describe('Policy id'),
    name: NameSchema.optional().describe('New name'),
    limits: PolicyLimitsSchema.optional().describe('Replaces all limits'),
    spam_detection: SpamDetectionSchema.optional().describe('Replaces the spam settings'),
    options: PolicyOptionsSchema.optional().describe('Replaces the options'),
    rules: RuleIdsSchema.optional().describe('Replaces the legacy rule ids'),
    oversight_mode: OversightModeSchema.nullable().optional().describe('Extension: the mode of its grants'),
    oversight: PolicyOversightSchema.optional().describe('Extension: replaces the oversight settings'),
  })
  .meta({ id: 'UpdatePolicyInput' });
export type UpdatePolicyInput = z.infer<typeof UpdatePolicyInputSchema>;

export const PolicyRefInputSchema = z
  .strictObject({ policy_id: IdSchema.describe('Policy id') })
  .meta({ id: 'PolicyRefInput' });

const PageInput = { limit: LimitSchema, page_token: PageTokenSchema };
export const ListPoliciesInputSchema = z.strictObject(PageInput).meta({ id: 'ListPoliciesInput' });
export type PageInput = z.infer<typeof ListPoliciesInputSchema>;

// ─── Rules ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const RULE_FIELDS = [
  'from.address',
  'from.domain',
  'from.tld',
  'recipient.address',
  'recipient.domain',
  'recipient.tld',
  'outbound.type',
  'trust.injection',
  'trust.dmarc',
  'message.automated',
] as const;
export const RULE_OPERATORS = ['is', 'is_not', 'contains', 'in_list', 'greater_than', 'less_than'] as const;
export const RULE_ACTIONS = [
  'block',
  'mark_as_spam',
  'assign_to_folder',
  'mark_as_read',
  'mark_as_starred',
  'archive',
  'trash',
] as const;

const enumError = (what: string, values: readonly string[]) => (issue: { input?: unknown }) =>
  `${JSON.stringify(issue.input)} is not a ${what}; use one of: ${values.join(', ')}`;

/**
 * Rules compare the sender and recipients only. A condition on anything else (an attachment above all) is a 400 that
 * says where that control lives: on policies, whose `limits` keep or drop attachments by size, count and type.
 */
const ATTACHMENTS_ON_POLICIES =
  'Rules match on the sender and recipient fields only; attachment control (size, count, MIME types) lives on policies: set limits.limit_attachment_size_limit, limit_attachment_count_limit or limit_attachment_allowed_types on /v3/admin/policies.';

export const RuleConditionSchema = z
  .strictObject(
    {
      field: z
        .enum(RULE_FIELDS, {
          error: (issue) =>
            `${JSON.stringify(issue.input)} is not a condition field; use one of: ${RULE_FIELDS.join(', ')}. ${ATTACHMENTS_ON_POLICIES}`,
        })
        .describe(
          "What is compared: the sender (from.*), a recipient (recipient.*), on outbound rules outbound.type, on inbound rules the message's trust block (trust.injection: its injection score 0-1; trust.dmarc: its DMARC verdict) and message.automated (true when a machine wrote it: an auto-reply, bounce, list, bulk or no-reply sender). Attachments are not rule fields: attachment control lives on policies",
        ),
      operator: z
        .enum(RULE_OPERATORS, { error: enumError('condition operator', RULE_OPERATORS) })
        .describe('is, is_not, contains, in_list; greater_than or less_than for trust.injection'),
      value: z
        .union([z.string().min(1).max(320), z.array(IdSchema).min(1).max(20), z.number().min(0).max(1)])
        .describe(
          'The value compared (case-insensitive); for in_list an array of list ids; for outbound.type compose or reply; for trust.injection a number from 0 to 1; for trust.dmarc pass, fail, softfail, neutral, none, temperror or permerror; for message.automated true, false or a kind (bounce, report, auto_reply, auto_generated, list, bulk, no_reply)',
        ),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `a condition has field, operator and value only (not ${issue.keys.join(', ')}). ${ATTACHMENTS_ON_POLICIES}`
          : undefined,
    },
  )
  .meta({ id: 'RuleCondition' });

export const RuleMatchSchema = z
  .strictObject({
    operator: z.enum(['all', 'any']).optional().describe('all (default): every condition holds; any: one does'),
    conditions: z
      .array(RuleConditionSchema)
      .max(ADMIN_LIMITS.conditions)
      .describe(`Conditions, at most ${ADMIN_LIMITS.conditions}; none matches every message`),
  })
  .meta({ id: 'RuleMatch' });

export const RuleActionSchema = z
  .strictObject({
    type: z.enum(RULE_ACTIONS, { error: enumError('rule action', RULE_ACTIONS) }).describe('The action'),
    value: z.string().min(1).max(256).optional().describe('The folder name of assign_to_folder (created if missing)'),
  })
  .meta({ id: 'RuleAction' });

const PrioritySchema = z.number().int().min(0).max(1000);
const TriggerSchema = z.enum(['inbound', 'outbound']);

export const RuleSchema = z
  .object({
    id: z.string().describe('Rule id'),
    name: z.string().describe('Rule name'),
    description: z.string().optional().describe('Free text'),
    priority: PrioritySchema.describe('0 to 1000; lower runs first'),
    enabled: z.boolean().describe('Whether the rule runs'),
    trigger: TriggerSchema.describe('inbound mail or outbound sends'),
    match: z
      .object({
        operator: z.enum(['all', 'any']).describe('all or any'),
        conditions: z.array(RuleConditionSchema).describe('Conditions'),
      })
      .describe('When the rule applies'),
    actions: z.array(RuleActionSchema).describe('What the rule does'),
    application_id: ApplicationIdSchema,
    organization_id: OrganizationIdSchema,
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Rule' });
export type Rule = z.infer<typeof RuleSchema>;

export const CreateRuleInputSchema = z
  .strictObject({
    name: NameSchema.describe('Rule name, 1 to 256 characters'),
    description: DescriptionSchema.optional(),
    priority: PrioritySchema.optional().describe('0 to 1000, lower runs first (default 10)'),
    enabled: z.boolean().optional().describe('Default true'),
    trigger: TriggerSchema.optional().describe('inbound (default) or outbound'),
    match: RuleMatchSchema,
    actions: z
      .array(RuleActionSchema)
      .min(1)
      .max(ADMIN_LIMITS.actions)
      .describe('Actions; block must be alone, assign_to_folder needs a value'),
    workspace_ids: z
      .array(IdSchema)
      .max(ADMIN_LIMITS.ruleIds)
      .optional()
      .describe(
        "Extension: workspaces to apply the rule in (added to each one's rule_ids in the same transaction; one not this application's is a 404 and nothing is created)",
      ),
  })
  .meta({ id: 'CreateRuleInput' });
export type CreateRuleInput = z.infer<typeof CreateRuleInputSchema>;

export const UpdateRuleInputSchema = z
  .strictObject({
    rule_id: IdSchema.describe('Rule id'),
    name: NameSchema.optional().describe('New name'),
    description: DescriptionSchema.optional(),
    priority: PrioritySchema.optional().describe('0 to 1000, lower runs first'),
    enabled: z.boolean().optional().describe('Whether the rule runs'),
    trigger: TriggerSchema.optional().describe('inbound or outbound'),
    match: RuleMatchSchema.optional().describe('Replaces the match'),
    actions: z.array(RuleActionSchema).min(1).max(ADMIN_LIMITS.actions).optional().describe('Replaces the actions'),
  })
  .meta({ id: 'UpdateRuleInput' });
export type UpdateRuleInput = z.infer<typeof UpdateRuleInputSchema>;

export const RuleRefInputSchema = z
  .strictObject({ rule_id: IdSchema.describe('Rule id') })
  .meta({ id: 'RuleRefInput' });
export const ListRulesInputSchema = z.strictObject(PageInput).meta({ id: 'ListRulesInput' });

// ─── Lists ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const ListTypeSchema = z
  .enum(['domain', 'tld', 'address'])
  .describe('domain: host names; tld: one label such as com; address: email addresses');

export const AgentListSchema = z
  .object({
    id: z.string().describe('List id'),
    name: z.string().describe('List name'),
    description: z.string().optional().describe('Free text'),
    type: ListTypeSchema,
    items_count: z.number().int().min(0).describe('How many items the list holds'),
    application_id: ApplicationIdSchema,
    organization_id: OrganizationIdSchema,
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'AgentList' });
export type AgentList = z.infer<typeof AgentListSchema>;

export const CreateListInputSchema = z
  .strictObject({
    name: NameSchema.describe('List name, 1 to 256 characters'),
    description: DescriptionSchema.optional(),
    type: ListTypeSchema,
  })
  .meta({ id: 'CreateListInput' });
export type CreateListInput = z.infer<typeof CreateListInputSchema>;

export const UpdateListInputSchema = z
  .strictObject({
    list_id: IdSchema.describe('List id'),
    name: NameSchema.optional().describe('New name'),
    description: DescriptionSchema.optional(),
    type: ListTypeSchema.optional().describe("Immutable: accepted only when equal to the list's type"),
  })
  .meta({ id: 'UpdateListInput' });
export type UpdateListInput = z.infer<typeof UpdateListInputSchema>;

export const ListRefInputSchema = z
  .strictObject({ list_id: IdSchema.describe('List id') })
  .meta({ id: 'ListRefInput' });
export const ListListsInputSchema = z.strictObject(PageInput).meta({ id: 'ListListsInput' });
export const ListItemsInputSchema = z
  .strictObject({ list_id: IdSchema.describe('List id'), ...PageInput })
  .meta({ id: 'ListItemsInput' });

export const ListItemsChangeInputSchema = z
  .strictObject({
    list_id: IdSchema.describe('List id'),
    items: z
      .array(z.string().max(320))
      .min(1)
      .max(ADMIN_LIMITS.listItemsPerCall)
      .describe(`1 to ${ADMIN_LIMITS.listItemsPerCall} values of the list's type; lower-cased and trimmed`),
  })
  .meta({ id: 'ListItemsChangeInput' });
export type ListItemsChangeInput = z.infer<typeof ListItemsChangeInputSchema>;

export const AgentListItemSchema = z
  .object({
    id: z.string().describe('Item id'),
    list_id: z.string().describe('List id'),
    value: z.string().describe('The value, lower-cased and trimmed'),
    created_at: UnixSecondsSchema,
  })
  .meta({ id: 'AgentListItem' });
export type AgentListItem = z.infer<typeof AgentListItemSchema>;

// ─── Rule evaluations ──────────────────────────────────────────────────────────────────────────────────────────

export const RuleEvaluationSchema = z
  .object({
    id: z.string().describe('Evaluation id'),
    grant_id: z.string().describe('The grant evaluated for'),
    message_id: z.string().optional().describe('The message, when there is one (absent for smtp_rcpt)'),
    evaluated_at: UnixSecondsSchema,
    evaluation_stage: z.enum(['smtp_rcpt', 'inbox_processing', 'outbound_send']).describe('Where in the mail flow'),
    evaluation_input: z
      .object({
        from_address: z.string().optional().describe('Sender address'),
        from_domain: z.string().optional().describe('Sender domain'),
        from_tld: z.string().optional().describe('Sender top-level domain'),
        recipient_addresses: z.array(z.string()).optional().describe('Recipient addresses'),
        recipient_domains: z.array(z.string()).optional().describe('Recipient domains'),
        recipient_tlds: z.array(z.string()).optional().describe('Recipient top-level domains'),
        outbound_type: z.enum(['compose', 'reply']).optional().describe('compose or reply (outbound only)'),
        trust_injection: z
          .number()
          .optional()
          .describe("The message's injection score, when a rule had a trust condition"),
        trust_dmarc: z.string().optional().describe("The message's DMARC verdict, when a rule had a trust condition"),
        automated: z
          .string()
          .optional()
          .describe('Extension, inbound: the kind of machine that wrote the message (auto_reply, bounce, list, …)'),
      })
      .describe('What was evaluated, lower-cased'),
    applied_actions: z
      .object({
        blocked: z.boolean().optional().describe('Blocked by a rule or a policy limit'),
        blocked_by_evaluation_error: z
          .boolean()
          .optional()
          .describe('Blocked because the evaluation could not complete'),
        marked_as_spam: z.boolean().optional().describe('Marked as spam'),
        marked_as_read: z.boolean().optional().describe('Marked as read'),
        marked_starred: z.boolean().optional().describe('Starred'),
        archived: z.boolean().optional().describe('Archived'),
        trashed: z.boolean().optional().describe('Trashed'),
        folder_ids: z.array(z.string()).optional().describe('Folders assigned'),
      })
      .describe('What was applied; only the keys that happened'),
    matched_rule_ids: z.array(z.string()).describe('Rules that matched'),
    verdicts: z
      .record(z.string(), z.unknown())
      .describe(
        'Extension: the policy verdicts of the same evaluation (size, attachments, quota, spam, authentication)',
      ),
    application_id: ApplicationIdSchema,
    organization_id: OrganizationIdSchema,
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'RuleEvaluation' });
export type RuleEvaluation = z.infer<typeof RuleEvaluationSchema>;

export const ListRuleEvaluationsInputSchema = z
  .strictObject({
    grant_id: GrantIdSchema,
    rule_id: IdSchema.optional().describe('Extension: only the evaluations whose matched_rule_ids include this rule'),
    ...PageInput,
  })
  .meta({ id: 'ListRuleEvaluationsInput' });
export type ListRuleEvaluationsInput = z.infer<typeof ListRuleEvaluationsInputSchema>;
