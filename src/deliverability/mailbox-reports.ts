/**
 * @module deliverability/mailbox-reports
 * Bounces and complaints of connected accounts. A connected (IMAP) account sends through its own SMTP server with
 * its own address as the return path, so a delivery report comes back to the person's inbox like any other mail and
 * is synced in. Such a message stays where the provider delivered it (it is the user's mail); in addition, when it
 * is a report about a message that mailbox sent, it is recorded as a hosted bounce or complaint is
 * (./reports.ts `receiveInMailbox`: `delivery_reports`, suppression, `message.bounce_detected` /
 * `message.complaint`, the sending-health counters).
 *
 * - The check is cheap where it must be: a synced message whose header section does not look like a report
 *   (./returned-message.ts `mayBeReport`) costs one bounded scan and nothing else; hosted mailboxes are never asked
 *   (their reports arrive at VERP return paths).
 * - One that may be a report gets a durable job (`deliverability.mailbox_report`) stored IN THE MESSAGE'S OWN
 *   TRANSACTION, so it is looked at if and only if the message was stored, after the store committed. The job
 *   carries the report's bytes (as far as the report reader reads them, 512 KB: a synced message's raw MIME stays
 *   on its server, not in our blobs), attributes it and records what it finds; a repeat (the job run twice, the
 *   same report synced twice) records nothing twice. A report deleted before its job ran is not read.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { JobInput, JobHandler } from '../jobs/index.js';
import type { StoredCopy } from '../mail/contracts.js';
import { MAX_REPORT_BYTES } from '../mime/index.js';
import type { ReportIntake } from './reports.js';
import { mayBeReport } from './returned-message.js';

/** The job kind that reads a report found in a connected account's mailbox. */
export const MAILBOX_REPORT_JOB = 'deliverability.mailbox_report';

/** Grant providers whose reports come back to the mailbox (connected accounts). */
const MAILBOX_REPORT_PROVIDERS = new Set(['imap']);

/** What the job carries. */
interface MailboxReportPayload {
  grant_id: string;
  message_id: string;
  /** The report's first {@link MAX_REPORT_BYTES} bytes, base64. */
  raw: string;
}

/** Finds the reports among a connected account's synced mail. */
export interface MailboxReports {
  /**
   * For a message about to be stored for `grants`: undefined when none of them is a connected account or the
   * message does not look like a report (decided without a query), else the jobs to store in its transaction, given
   * its stored copies.
   */
  jobsFor(
    raw: Buffer,
    grants: readonly Pick<GrantRow, 'id' | 'provider'>[],
  ): ((copies: readonly StoredCopy[]) => JobInput[]) | undefined;
  /** The job's handler, by kind. */
  handlers: Record<string, JobHandler>;
}

/** Creates the report watch of connected accounts' mailboxes. */
export function createMailboxReports(
  deps: Pick<CoreDeps, 'db' | 'logger'>,
  intake: Pick<ReportIntake, 'receiveInMailbox'>,
): MailboxReports {
  const { db, logger } = deps;

  const run: JobHandler = async (job) => {
    const payload = job.payload as unknown as MailboxReportPayload;
    const [message] = await db.orm
      .select({ id: tables.messages.id })
      .from(tables.messages)
      .where(and(eq(tables.messages.id, payload.message_id), eq(tables.messages.grantId, payload.grant_id)))
      .limit(1);
    // Deleted meanwhile (by the user, or with its grant): nothing to record.
    if (!message) return;
    const raw = Buffer.from(payload.raw, 'base64');
    const outcome = await intake.receiveInMailbox({ id: payload.grant_id }, raw);
    if (outcome.recorded.length === 0)
      logger.debug('mailbox message recorded no report', {
        grant_id: payload.grant_id,
        message_id: payload.message_id,
        reasons: outcome.ignored.slice(0, 3),
      });
  };

  return {
    jobsFor(raw, grants) {
      const watched = new Set(
        grants.filter((grant) => MAILBOX_REPORT_PROVIDERS.has(grant.provider)).map((grant) => grant.id),
      );
      if (watched.size === 0 || !mayBeReport(raw)) return undefined;
      const bytes = raw.subarray(0, MAX_REPORT_BYTES).toString('base64');
      return (copies) =>
        copies
          .filter((copy) => watched.has(copy.grantId))
          .map((copy) => {
            const payload: MailboxReportPayload = { grant_id: copy.grantId, message_id: copy.messageId, raw: bytes };
            return {
              kind: MAILBOX_REPORT_JOB,
              payload: payload as unknown as Record<string, unknown>,
              dedupeKey: `${MAILBOX_REPORT_JOB}:${copy.messageId}`,
            };
          });
    },
    handlers: { [MAILBOX_REPORT_JOB]: run },
  };
}
