/**
 * @module domains/dmarc-reports
 * DMARC aggregate reports mailed to a domain's `rua` address, `dmarc-reports@<domain>` (the record that domain info
 * suggests, src/domains/domain-records.ts).
 *
 * - RCPT TO: the SMTP listener asks {@link DmarcReportIntake.checkAddress}; the address is accepted when its domain is
 *   a registered domain (any application's), and otherwise left to the mailbox check (which refuses relaying).
 * - DATA: {@link DmarcReportIntake.receive} reads the report under the limits of ./dmarc-report-parser.ts and stores
 *   it, durably, before the listener answers 250. A report that is refused (malformed, too big, a gzip or zip bomb)
 *   or that is about another domain than the one it was mailed to (so never about another application's domain) is
 *   accepted and ignored: nothing is stored, the reason is logged and named in the 250 text. Refusing it would only
 *   make the reporter's MTA bounce to its postmaster. The same report (reporter and report id) mailed again is kept once.
 * - The API lists a domain's reports, newest first ({@link DmarcReportIntake.list}).
 */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { DmarcReport } from '../schemas/domains.js';
import { DmarcReportRejected, readAggregateReport, type AggregateReport } from './dmarc-report-parser.js';
import { DMARC_RUA_LOCAL_PART } from './domain-records.js';
import type { DmarcReceiveOutcome, DmarcReportIntake, RuaCheck } from './contracts.js';

type ReportRow = typeof tables.dmarcReports.$inferSelect;

/** The domain part of a `dmarc-reports@<domain>` address, lower-cased, or undefined for any other address. */
export function ruaDomain(address: string): string | undefined {
  const normalized = address.trim().toLowerCase();
  const at = normalized.lastIndexOf('@');
  if (at <= 0 || normalized.slice(0, at) !== DMARC_RUA_LOCAL_PART) return undefined;
  return normalized.slice(at + 1) || undefined;
}

function toReport(row: ReportRow): DmarcReport {
  return {
    id: row.id,
    object: 'dmarc_report',
    domain_id: row.domainId,
    org_name: row.orgName,
    ...(row.email ? { email: row.email } : {}),
    report_id: row.reportId,
    date_range: { begin: row.beginAt, end: row.endAt },
    policy_published: row.policyPublished,
    message_count: row.messageCount,
    sources: row.sources,
    received_at: row.receivedAt,
  };
}

/** Creates the DMARC report intake and reader. */
export function createDmarcReportIntake(deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger'>): DmarcReportIntake {
  const { db, clock, newId, logger } = deps;

  async function domainNamed(address: string) {
    return db.orm.query.domains.findFirst({
      where: eq(tables.domains.domainAddress, address),
      columns: { id: true, applicationId: true, domainAddress: true },
    });
  }

  return {
    /** Whether an address is the `rua` address of a registered domain (RCPT TO). */
    async checkAddress(address: string): Promise<RuaCheck> {
      const domain = ruaDomain(address);
      if (domain === undefined) return { kind: 'none' };
      return (await domainNamed(domain)) ? { kind: 'accept' } : { kind: 'none' };
    },

    /**
     * Reads the report in a message to `rua` addresses (`rcptTo`: those recipients only) and stores it for the domain
     * it was mailed to when it is about that domain. Resolves after the store committed; never throws for what the
     * message says, rejects only when the store fails (the listener answers 4xx and the sender retries).
     */
    async receive(message: { raw: Buffer; rcptTo: readonly string[] }): Promise<DmarcReceiveOutcome> {
      let report: AggregateReport;
      try {
        report = await readAggregateReport(message.raw);
      } catch (error) {
        if (!(error instanceof DmarcReportRejected)) throw error;
        const reason = `DMARC report refused: ${error.message}`;
        logger.info('dmarc report ignored', { reason, rcptTo: message.rcptTo.slice(0, 5) });
        return { recorded: [], ignored: [reason] };
      }
      const ignored: string[] = [];
      const recorded: string[] = [];
      const seen = new Set<string>();
      for (const address of message.rcptTo) {
        const domainName = ruaDomain(address);
        if (domainName === undefined || seen.has(domainName)) continue;
        seen.add(domainName);
        const domain = await domainNamed(domainName);
        if (!domain) {
          ignored.push(`${domainName}: not a registered domain`);
          continue;
        }
        // A report is kept only by the domain it is about: one mailed to us about another domain (another
        // application's, or nobody's) is ignored, so no application can plant reports on another's domain.
        if (report.policy.domain !== domain.domainAddress) {
          ignored.push(`DMARC report about ${report.policy.domain.slice(0, 253)} mailed to ${domainName}: ignored`);
          continue;
        }
        const id = newId();
        const stored = await db.durableWrite((tx) =>
          tx
            .insert(tables.dmarcReports)
            .values({
              id,
              applicationId: domain.applicationId,
              domainId: domain.id,
              orgName: report.orgName,
              email: report.email ?? null,
              reportId: report.reportId,
              beginAt: report.begin,
              endAt: report.end,
              policyPublished: report.policy,
              messageCount: report.messageCount,
              sources: report.sources,
              receivedAt: unixSeconds(clock.now()),
            })
            .onConflictDoNothing()
            .returning({ id: tables.dmarcReports.id }),
        );
        if (stored.length > 0) recorded.push(id);
        else
          ignored.push(
            `DMARC report ${report.reportId.slice(0, 100)} of ${report.orgName.slice(0, 100)} was received before`,
          );
      }
      if (ignored.length > 0) logger.info('dmarc report ignored', { reasons: ignored.slice(0, 5) });
      return { recorded, ignored };
    },

    /** A page of a domain's reports, newest first; another application's domain is 404. */
    async list(
      principal: Principal,
      input: { domain_id: string; limit?: number | undefined; page_token?: string | undefined },
    ) {
      const domain = await db.orm.query.domains.findFirst({
        where: and(eq(tables.domains.id, input.domain_id), eq(tables.domains.applicationId, principal.applicationId)),
        columns: { id: true },
      });
      if (!domain) throw notFound('Domain', input.domain_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const t = tables.dmarcReports;
      const rows = await db.orm
        .select()
        .from(t)
        .where(
          and(
            eq(t.domainId, domain.id),
            after ? or(lt(t.receivedAt, after[0]), and(eq(t.receivedAt, after[0]), lt(t.id, after[1]))) : undefined,
          ),
        )
        .orderBy(desc(t.receivedAt), desc(t.id))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.receivedAt, row.id], toReport);
    },
  };
}

export type { DmarcReceiveOutcome, DmarcReportIntake, RuaCheck } from './contracts.js';
