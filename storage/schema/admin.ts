/**
 * Administration of Agent Accounts: policies, rules, lists and their items, the audit of every rule evaluation,
 * and the per-grant daily counters that policy limits are checked against. Policies, rules and lists belong to an
 * application; a workspace ({@link workspaces} in ./tenancy.ts) names one policy and some rules for its grants.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';
import { applications } from './tenancy.js';

/** Policy limits in wire form (snake_case keys, as `/v3/policies` carries them); absent = no limit. */
export interface StoredPolicyLimits {
  limit_attachment_size_limit?: number | undefined;
  limit_attachment_count_limit?: number | undefined;
  limit_attachment_allowed_types?: string[] | undefined;
  limit_size_total_mime?: number | undefined;
  limit_storage_total?: number | undefined;
  limit_count_daily_message_received?: number | undefined;
  limit_count_daily_email_sent?: number | undefined;
  limit_inbox_retention_period?: number | undefined;
  limit_spam_retention_period?: number | undefined;
}

/** Spam detection settings in wire form. */
export interface StoredSpamDetection {
  use_list_dnsbl?: boolean | undefined;
  use_header_anomaly_detection?: boolean | undefined;
  spam_sensitivity?: number | undefined;
}

/** A grant's oversight mode (issue 37, docs/oversight.md). */
export type StoredOversightMode = 'autonomous' | 'monitored' | 'gated_send' | 'gated_all' | 'read_only';

/**
 * A policy's oversight in wire form: its grants' mode (the wire's top-level `oversight_mode`) and the guards'
 * settings (the extension object `oversight`); absent = the default named in docs/oversight.md.
 */
export interface StoredPolicyOversight {
  oversight_mode?: StoredOversightMode | undefined;
  untrusted_read_gate?: 'off' | 'new_recipients' | 'all_sends' | undefined;
  untrusted_read_window_minutes?: number | undefined;
  untrusted_injection_threshold?: number | undefined;
  allowed_recipients?: string[] | undefined;
  reviewers?: string[] | undefined;
  agent_headers?: boolean | undefined;
  thread_agent_sends_per_hour?: number | undefined;
  loop_messages?: number | undefined;
  loop_minutes?: number | undefined;
  sends_per_hour?: number | undefined;
  sends_per_day?: number | undefined;
  new_recipients_per_day?: number | undefined;
  send_rate_per_minute?: number | undefined;
  burst_queue_max?: number | undefined;
}

/** Policy options in wire form. */
export interface StoredPolicyOptions {
  additional_folders?: string[] | undefined;
  use_cidr_aliasing?: boolean | undefined;
}

export const policies = sqliteTable(
  'policies',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    limits: text('limits', { mode: 'json' })
      .$type<StoredPolicyLimits>()
      .notNull()
      .default(sql`'{}'`),
    spamDetection: text('spam_detection', { mode: 'json' })
      .$type<StoredSpamDetection>()
      .notNull()
      .default(sql`'{}'`),
    options: text('options', { mode: 'json' })
      .$type<StoredPolicyOptions>()
      .notNull()
      .default(sql`'{}'`),
    /** Issue 37: the oversight mode of the policy's grants and its guards' settings (src/oversight). */
    oversight: text('oversight', { mode: 'json' })
      .$type<StoredPolicyOversight>()
      .notNull()
      .default(sql`'{}'`),
    /** Legacy rule ids attached to the policy itself (the wire's `rules`); evaluated with the workspace's. */
    ruleIds: text('rule_ids', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('policies_application_idx').on(table.applicationId, table.createdAt)],
);

/** A rule condition in wire form. */
export interface StoredRuleCondition {
  field:
    | 'from.address'
    | 'from.domain'
    | 'from.tld'
    | 'recipient.address'
    | 'recipient.domain'
    | 'recipient.tld'
    | 'outbound.type'
    | 'trust.injection'
    | 'trust.dmarc'
    | 'message.automated';
  operator: 'is' | 'is_not' | 'contains' | 'in_list' | 'greater_than' | 'less_than';
  /** A string, list ids for `in_list`, a number for `greater_than` / `less_than` (`trust.injection`). */
  value: string | string[] | number;
}

/** A rule action in wire form. */
export interface StoredRuleAction {
  type: 'block' | 'mark_as_spam' | 'assign_to_folder' | 'mark_as_read' | 'mark_as_starred' | 'archive' | 'trash';
  /** The folder name of `assign_to_folder`. */
  value?: string | undefined;
}

export const rules = sqliteTable(
  'rules',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    /** 0–1000; lower runs first. */
    priority: integer('priority').notNull().default(10),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    trigger: text('trigger', { enum: ['inbound', 'outbound'] })
      .notNull()
      .default('inbound'),
    matchOperator: text('match_operator', { enum: ['all', 'any'] })
      .notNull()
      .default('all'),
    conditions: text('conditions', { mode: 'json' })
      .$type<StoredRuleCondition[]>()
      .notNull()
      .default(sql`'[]'`),
    actions: text('actions', { mode: 'json' })
      .$type<StoredRuleAction[]>()
      .notNull()
      .default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('rules_application_idx').on(table.applicationId, table.createdAt)],
);

export const lists = sqliteTable(
  'lists',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    type: text('type', { enum: ['domain', 'tld', 'address'] }).notNull(),
    /** Kept equal to the number of its {@link listItems}, in the same transaction as every change. */
    itemsCount: integer('items_count').notNull().default(0),
    /**
     * Bumped (with `updated_at`) by every change to the list or its items, so caches of its items know to reload
     * by comparing one number.
     */
    version: integer('version').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('lists_application_idx').on(table.applicationId, table.createdAt)],
);

export const listItems = sqliteTable(
  'list_items',
  {
    id: text('id').primaryKey(),
    listId: text('list_id')
      .notNull()
      .references(() => lists.id, { onDelete: 'cascade' }),
    /** Lower-cased and trimmed. */
    value: text('value').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('list_items_value_idx').on(table.listId, table.value),
    index('list_items_order_idx').on(table.listId, table.createdAt, table.id),
  ],
);

/** The input of a rule evaluation, in wire form. */
export interface StoredEvaluationInput {
  from_address?: string;
  from_domain?: string;
  from_tld?: string;
  recipient_addresses?: string[];
  recipient_domains?: string[];
  recipient_tlds?: string[];
  outbound_type?: 'compose' | 'reply';
  /** The message's injection score (0–1), when a rule of the grant has a `trust.*` condition. */
  trust_injection?: number;
  /** The message's DMARC verdict (`pass`, `fail`, `none`, …), likewise. */
  trust_dmarc?: string;
  /** Inbound: the kind of machine that wrote the message (`auto_reply`, `bounce`, `list`, …); absent when a person did. */
  automated?: string;
}

/** What an evaluation applied, in wire form: only the keys that happened are present. */
export interface StoredAppliedActions {
  blocked?: boolean;
  blocked_by_evaluation_error?: boolean;
  marked_as_spam?: boolean;
  marked_as_read?: boolean;
  marked_starred?: boolean;
  archived?: boolean;
  trashed?: boolean;
  folder_ids?: string[];
}

/** The audit of every evaluation at every stage (`GET /v3/grants/{id}/rule-evaluations`). */
export const ruleEvaluations = sqliteTable(
  'rule_evaluations',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** Absent for `smtp_rcpt` (no message yet) and for refused sends. */
    messageId: text('message_id'),
    stage: text('stage', { enum: ['smtp_rcpt', 'inbox_processing', 'outbound_send'] }).notNull(),
    input: text('input', { mode: 'json' }).$type<StoredEvaluationInput>().notNull(),
    matchedRuleIds: text('matched_rule_ids', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    appliedActions: text('applied_actions', { mode: 'json' })
      .$type<StoredAppliedActions>()
      .notNull()
      .default(sql`'{}'`),
    /**
     * Policy verdicts of the same evaluation (size, attachments removed, quota, spam, authentication), an
     * extension beside the wire fields.
     */
    verdicts: text('verdicts', { mode: 'json' })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
    /** Unix seconds. */
    evaluatedAt: integer('evaluated_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [index('rule_evaluations_grant_idx').on(table.grantId, table.evaluatedAt, table.id)],
);

/**
 * Per grant and UTC day: messages received and sent, and bytes received, for the daily limits of a policy.
 * `day` is the number of whole days since 1970-01-01 UTC.
 */
export const grantDailyUsage = sqliteTable(
  'grant_daily_usage',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    day: integer('day').notNull(),
    received: integer('received').notNull().default(0),
    sent: integer('sent').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.grantId, table.day] })],
);
