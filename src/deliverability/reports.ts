/**
 * @module deliverability/reports
 * The report intake: bounces and complaints, attributed to one sent message and one of its recipients, and what a
 * report does, all in the transaction that records it.
 *
 * Where reports come from (`delivery_reports.source`):
 * - `dsn` / `arf`: a message to a VERP return path (./verp.ts) on the SMTP listener. The RCPT TO is accepted only
 *   when its token verifies ({@link ReportIntake.checkAddress}); at DATA the report is read (./report-parser.ts),
 *   attributed and stored, with the raw report as a blob, before the listener answers 250 ({@link ReportIntake.receive}).
 * - `smtp`: a permanent 5xx during delivery (the relay's or the MX's reply, or the 550 of an unknown mailbox here).
 * - `timeout`: the queue gave up retrying (a soft bounce).
 * - `dsn` / `arf` in a mailbox: a connected account's report, synced from its own inbox
 *   ({@link ReportIntake.receiveInMailbox}, called by the `deliverability.mailbox_report` job of ./mailbox-reports.ts).
 *
 * Attribution (return paths): the envelope recipient's token names the message and the recipient, and nothing else does. The
 * report's own content (Final-Recipient, embedded Message-IDs, other return paths quoted inside) is never used to
 * find a message, so a report cannot reach another application's message. A DSN's per-recipient groups are matched
 * to the token's recipient (Final-Recipient or Original-Recipient); when none matches, a report with exactly one
 * failed recipient is taken as that recipient's (an alias or forward rewrote the address), and one about several
 * other addresses is not attributed. An ARF report's `Original-Mail-From`, when given, must be a return path that
 * verifies and names the same message and recipient as the envelope's; otherwise it is not attributed.
 * Attribution (mailboxes): by the Message-ID of the returned message, among the messages that mailbox sent, and to
 * the recipients of that message the report names; nothing outside the mailbox can be reached.
 *
 * What is accepted but recorded nothing (answered 250, logged): a valid token whose message is gone, a message that
 * is no report (an auto-reply, a person writing to a return path), a delay warning, a report that does not match.
 * Refusing those would only make the reporting MTA send a bounce of the bounce to its postmaster.
 *
 * Effects of a recorded report: the `delivery_reports` row; for a bounce `message.bounce_detected`, for a complaint
 * `message.complaint` (outbox events); a hard bounce or complaint puts the address on the application's
 * suppression list; a DSN that says `failed` marks a recipient the queue had delivered (to a relay) `failed`; every
 * {@link ReportListener} is told. A repeat of the same report (the same raw bytes, e.g. a sender retrying after a
 * 4xx) records nothing twice.
 *
 * The intake is plain functions over a small state made here (./reports-state.ts): recording (./reports-record.ts),
 * reports to return paths (./reports-return-paths.ts) and reports found in mailboxes (./reports-mailbox.ts).
 */
import type { ReportIntake } from './contracts.js';
import type { Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import { receiveInMailbox } from './reports-mailbox.js';
import { record, recordDeliveryFailure } from './reports-record.js';
import { checkAddress, receive, returnPaths } from './reports-return-paths.js';
import type { IntakeState, NewReport, OutboundRow, ReportIntakeOptions } from './reports-state.js';

export type { NewReport, ReceiveOutcome, ReportIntakeOptions, ReturnPathCheck } from './reports-state.js';

/** Creates the intake. Pass every {@link ReportListener} that must see reports (the core passes its own list). */
export function createReportIntake(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger'>,
  options: ReportIntakeOptions,
): ReportIntake {
  const { db, clock, newId, logger } = deps;
  const recordOutboxEvent = eventRecorder({ newId, clock });

  const state: IntakeState = { db, clock, newId, logger, options, recordOutboxEvent };

  return {
    /** Records a report and its effects inside the caller's transaction. Returns its id (undefined for system mail). */
    record: (tx: Tx, report: NewReport) => record(state, tx, report),
    /** A permanent failure during delivery, as a bounce (inside the transaction that records the attempt). */
    recordDeliveryFailure: (
      tx: Tx,
      outbound: OutboundRow,
      failure: { email: string; code: number; response: string; source: 'smtp' | 'timeout' },
    ) => recordDeliveryFailure(state, tx, outbound, failure),
    /** The envelope sender of each recipient of a message (a return path of its own for an application's). */
    returnPaths: (
      outbound: Pick<OutboundRow, 'id' | 'applicationId' | 'envelopeFrom'>,
      allRecipients: readonly string[],
    ) => returnPaths(state, outbound, allRecipients),
    /** Whether an address is a return path the listener should accept (RCPT TO). */
    checkAddress: (address: string) => checkAddress(state, address),
    /** Reads, attributes and records a message that arrived for return paths (`rcptTo`: those recipients only). */
    receive: (message: { raw: Buffer; rcptTo: readonly string[] }) => receive(state, message),
    /** Reads, attributes and records a report found in a connected account's mailbox. */
    receiveInMailbox: (grant: { id: string }, raw: Buffer) => receiveInMailbox(state, grant, raw),
  };
}

/** The report intake. */
export type { ReportIntake } from './contracts.js';
