/**
 * DMARC aggregate reports (RFC 7489 section 7.2) that receivers mailed to a domain's `rua` address
 * (`dmarc-reports@<domain>`), read and summed by source address (src/domains/dmarc-reports.ts). The raw report is
 * not kept: only its metadata and the per-source counts.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { applications, domains } from './tenancy.js';

/** Counts for one source address of one report: messages, DKIM and SPF results (as aligned for DMARC), dispositions. */
export interface DmarcSourceCounts {
  source_ip: string;
  count: number;
  dkim: { pass: number; fail: number };
  spf: { pass: number; fail: number };
  disposition: { none: number; quarantine: number; reject: number };
}

/** The policy the reporter saw published (`policy_published`). */
export interface DmarcPolicyPublished {
  domain: string;
  adkim?: string | undefined;
  aspf?: string | undefined;
  p?: string | undefined;
  sp?: string | undefined;
  pct?: number | undefined;
}

/** One aggregate report about one of an application's domains. */
export const dmarcReports = sqliteTable(
  'dmarc_reports',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    domainId: text('domain_id')
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    /** `report_metadata/org_name`: who sent the report (e.g. google.com). */
    orgName: text('org_name').notNull(),
    /** `report_metadata/email`, when given. */
    email: text('email'),
    /** `report_metadata/report_id`: unique per reporter, so a report mailed twice is kept once. */
    reportId: text('report_id').notNull(),
    /** `report_metadata/date_range`, Unix seconds. */
    beginAt: integer('begin_at').notNull(),
    endAt: integer('end_at').notNull(),
    policyPublished: text('policy_published', { mode: 'json' }).$type<DmarcPolicyPublished>().notNull(),
    /** Messages in all (sum of the records' counts). */
    messageCount: integer('message_count').notNull(),
    /** Per source address, most messages first. */
    sources: text('sources', { mode: 'json' }).$type<DmarcSourceCounts[]>().notNull(),
    receivedAt: integer('received_at').notNull(),
  },
  (table) => [
    uniqueIndex('dmarc_reports_unique_idx').on(table.domainId, table.orgName, table.reportId),
    index('dmarc_reports_domain_idx').on(table.domainId, table.receivedAt, table.id),
  ],
);
