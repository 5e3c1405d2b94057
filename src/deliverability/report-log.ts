/**
 * @module deliverability/report-log
 * The bounces and complaints recorded against an application's sends (`delivery_reports`, written by the report
 * intake, ./reports.ts), newest first: what the dashboard's deliverability page and `GET /v3/delivery-reports` list.
 * Part of the suppression service (./suppressions.ts): these reports are what puts addresses on the list.
 */
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { DeliveryReport, ListDeliveryReportsInput } from '../schemas/suppressions.js';
import type { ReportLog } from './contracts.js';

type ReportRow = typeof tables.deliveryReports.$inferSelect;

const wireOf = (row: ReportRow): DeliveryReport => ({
  id: row.id,
  object: 'delivery_report',
  kind: row.kind,
  bounce_type: row.bounceType,
  recipient: row.recipient,
  grant_id: row.grantId,
  message_id: row.messageId,
  status_code: row.statusCode,
  smtp_code: row.smtpCode,
  reason: row.reason,
  source: row.source,
  at: Math.floor(row.at / 1000),
});

/** The application's bounces and complaints, newest first, cursor-paginated. */
export function createReportLog({ db }: Pick<CoreDeps, 'db'>): ReportLog {
  return {
    async reports(principal: Principal, input: ListDeliveryReportsInput) {
      const reports = tables.deliveryReports;
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const cursor = decodeCursor(input.page_token, 2);
      const conditions: SQL[] = [eq(reports.applicationId, principal.applicationId)];
      if (input.kind) conditions.push(eq(reports.kind, input.kind));
      if (cursor) {
        const [at, id] = [Number(cursor[0]), String(cursor[1])];
        conditions.push(or(lt(reports.at, at), and(eq(reports.at, at), lt(reports.id, id)))!);
      }
      const rows = await db.orm
        .select()
        .from(reports)
        .where(and(...conditions))
        .orderBy(desc(reports.at), desc(reports.id))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.at, row.id], wireOf);
    },
  };
}
