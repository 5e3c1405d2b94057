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
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import { blobHash, putBlobs, tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import { classifyBounce, codesIn } from './bounce-classification.js';
import type {
  NewReport,
  ReceiveOutcome,
  RecordedReport,
  ReportIntake,
  ReportIntakeOptions,
  ReturnPathCheck,
} from './contracts.js';
import { readReport } from '../mime/index.js';
import { parseReport, type BounceEntry, type ParsedReport } from './report-parser.js';
import { returnedMessageIds } from './returned-message.js';
import { readReturnPath, recipientOrdinals, returnPathFor } from './verp.js';

/** A message in the queue, as the intake reads it. */
type OutboundRow = typeof tables.outboundMessages.$inferSelect;

/** Longest reason kept. */
const MAX_REASON = 1000;

/** The webhook object of `message.bounce_detected`. */
function bounceObject(outbound: OutboundRow, report: NewReport, id: string, at: number) {
  const messageId = outbound.messageId ?? outbound.id;
  return {
    object: 'message',
    id: messageId,
    message_id: messageId,
    grant_id: outbound.grantId,
    subject: outbound.subject,
    message_id_header: `<${outbound.headerMessageId}>`,
    bounce: {
      type: report.bounceType ?? 'soft',
      recipient: report.recipient,
      code: report.statusCode ?? null,
      smtp_code: report.smtpCode ?? null,
      reason: report.reason,
      bounced_at: unixSeconds(new Date(at)),
      source: report.source,
      report_id: id,
    },
  };
}

/** The webhook object of `message.complaint` (the agent-account deliverability shape of reference §13.4, plus id and grant). */
function complaintObject(outbound: OutboundRow, report: NewReport, id: string, at: number) {
  const messageId = outbound.messageId ?? outbound.id;
  return {
    object: 'message',
    id: messageId,
    grant_id: outbound.grantId,
    message: {
      id: messageId,
      subject: outbound.subject,
      from: outbound.envelopeFrom,
      to: [report.recipient],
      sent_at: unixSeconds(new Date(outbound.acceptedAt)),
      message_id_header: `<${outbound.headerMessageId}>`,
    },
    complaint: {
      complained_at: unixSeconds(new Date(at)),
      type: report.reason,
      recipients: [{ email: report.recipient }],
      source: report.source,
      report_id: id,
    },
  };
}

/** The bounce a DSN's per-recipient group makes for `recipient` of a sent message. */
function bounceReport(outbound: OutboundRow, recipient: string, entry: BounceEntry, rawHash: string): NewReport {
  return {
    outbound,
    recipient,
    kind: 'bounce',
    bounceType: classifyBounce(entry),
    statusCode: entry.status,
    smtpCode: entry.smtpCode,
    reason: entry.diagnostic || (entry.status ? `Status ${entry.status}` : 'undeliverable'),
    source: 'dsn',
    rawHash,
  };
}

/** Creates the intake. Pass every {@link ReportListener} that must see reports (the core passes its own list). */
export function createReportIntake(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger'>,
  options: ReportIntakeOptions,
): ReportIntake {
  const { db, clock, newId, logger } = deps;
  const recordOutboxEvent = eventRecorder({ newId, clock });

  /** Records a report and its effects inside the caller's transaction. Returns its id (undefined for system mail). */
  async function record(tx: Tx, report: NewReport): Promise<string | undefined> {
    const { outbound } = report;
    if (!outbound.applicationId) return undefined;
    const id = newId();
    const at = clock.now().getTime();
    const reason =
      report.reason.replace(/\s+/g, ' ').trim().slice(0, MAX_REASON) ||
      (report.kind === 'complaint' ? 'abuse' : 'undeliverable');
    const stored: NewReport = { ...report, reason };
    await tx.insert(tables.deliveryReports).values({
      id,
      applicationId: outbound.applicationId,
      grantId: outbound.grantId,
      outboundId: outbound.id,
      messageId: outbound.messageId,
      recipient: report.recipient,
      kind: report.kind,
      bounceType: report.kind === 'bounce' ? (report.bounceType ?? 'soft') : null,
      statusCode: report.statusCode ?? null,
      smtpCode: report.smtpCode ?? null,
      reason,
      source: report.source,
      rawHash: report.rawHash ?? null,
      at,
    });
    if (report.kind === 'bounce' && report.source === 'dsn') {
      // The relay took it, the far end gave up: the recipient's delivery failed after all.
      await tx
        .update(tables.outboundRecipients)
        .set({ status: 'failed', finalAt: at, updatedAt: at })
        .where(
          and(
            eq(tables.outboundRecipients.outboundId, outbound.id),
            eq(tables.outboundRecipients.email, report.recipient),
            eq(tables.outboundRecipients.status, 'delivered'),
          ),
        );
    }
    if (report.kind === 'complaint' || report.bounceType === 'hard') {
      await tx
        .insert(tables.suppressions)
        .values({
          applicationId: outbound.applicationId,
          email: report.recipient,
          reason: report.kind === 'complaint' ? 'complaint' : 'hard_bounce',
          reportId: id,
          createdAt: unixSeconds(new Date(at)),
        })
        .onConflictDoNothing();
    }
    await recordOutboxEvent(tx, {
      applicationId: outbound.applicationId,
      grantId: outbound.grantId ?? undefined,
      type: report.kind === 'bounce' ? 'message.bounce_detected' : 'message.complaint',
      object:
        report.kind === 'bounce' ? bounceObject(outbound, stored, id, at) : complaintObject(outbound, stored, id, at),
    });
    const recorded: RecordedReport = {
      applicationId: outbound.applicationId,
      grantId: outbound.grantId,
      kind: report.kind,
      bounceType: report.kind === 'bounce' ? (report.bounceType ?? 'soft') : undefined,
      recipient: report.recipient,
      from: outbound.envelopeFrom,
      at,
    };
    for (const listener of options.listeners) await listener.reported(tx, recorded);
    return id;
  }

  /**
   * A permanent failure during delivery, as a bounce (inside the transaction that records the attempt): `smtp` for
   * a 5xx reply, `timeout` when the queue gave up (always soft).
   */
  async function recordDeliveryFailure(
    tx: Tx,
    outbound: OutboundRow,
    failure: { email: string; code: number; response: string; source: 'smtp' | 'timeout' },
  ): Promise<void> {
    const codes = codesIn(failure.response);
    const smtpCode = failure.code > 0 ? failure.code : codes.smtpCode;
    // Our own address policy refusing a domain whose mail servers are all private (outbound/routing.ts, 5.4.4) says
    // nothing about the address: soft, like the give-up of the queue.
    const ownPolicy = /have only non-public addresses/.test(failure.response);
    const bounceType =
      failure.source === 'timeout' || ownPolicy
        ? 'soft'
        : classifyBounce({ status: codes.status, smtpCode, diagnostic: failure.response });
    await record(tx, {
      outbound,
      recipient: failure.email,
      kind: 'bounce',
      bounceType,
      statusCode: codes.status,
      smtpCode,
      reason: failure.response,
      source: failure.source,
    });
  }

  /**
   * The envelope sender of each recipient of a message: a return path of its own when the message belongs to an
   * application (the service's own mail keeps its plain sender), on the domain of the plain sender (the From).
   */
  async function returnPaths(
    outbound: Pick<OutboundRow, 'id' | 'applicationId' | 'envelopeFrom'>,
    allRecipients: readonly string[],
  ): Promise<(email: string) => string> {
    if (!outbound.applicationId) return () => outbound.envelopeFrom;
    const signer = await options.signing.signer();
    const ordinals = recipientOrdinals(allRecipients);
    const domain = outbound.envelopeFrom.slice(outbound.envelopeFrom.lastIndexOf('@') + 1);
    return (email) => {
      const ordinal = ordinals.get(email.toLowerCase());
      return (
        (ordinal !== undefined ? returnPathFor(signer, { outboundId: outbound.id, ordinal, domain }) : undefined) ??
        outbound.envelopeFrom
      );
    };
  }

  /** Whether an address is a return path the listener should accept (RCPT TO). */
  async function checkAddress(address: string): Promise<ReturnPathCheck> {
    const signer = await options.signing.signer();
    const path = readReturnPath(signer, address);
    if (path.kind === 'none') return { kind: 'none' };
    const domain = await db.orm.query.domains.findFirst({
      where: eq(tables.domains.domainAddress, path.domain),
      columns: { id: true },
    });
    if (!domain)
      return { kind: 'refuse', reason: 'relay', message: `Relay access denied: ${path.domain} is not a hosted domain` };
    if (path.kind === 'forged')
      return {
        kind: 'refuse',
        reason: 'unknown',
        message: 'Unknown return path: this bounce address was not issued by this service',
      };
    return { kind: 'accept' };
  }

  /** The queued message a token names, and the recipient at its ordinal. */
  async function target(
    outboundId: string,
    ordinal: number,
  ): Promise<{ outbound: OutboundRow; recipient: string } | undefined> {
    const [outbound] = await db.orm
      .select()
      .from(tables.outboundMessages)
      .where(eq(tables.outboundMessages.id, outboundId))
      .limit(1);
    if (!outbound || !outbound.applicationId) return undefined;
    const rows = await db.orm
      .select({ email: tables.outboundRecipients.email })
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.outboundId, outboundId))
      .orderBy(asc(tables.outboundRecipients.email));
    const recipient = [...recipientOrdinals(rows.map((row) => row.email)).entries()].find(
      ([, index]) => index === ordinal,
    )?.[0];
    return recipient ? { outbound, recipient } : undefined;
  }

  /** The per-recipient group of a DSN that is about `recipient` (see the module notes), or why none is. */
  function entryFor(entries: BounceEntry[], recipient: string): BounceEntry | string {
    const failed = entries.filter((entry) => entry.action === 'failed');
    if (failed.length === 0)
      return entries.some((entry) => entry.action === 'delayed')
        ? 'a delay warning, not a bounce'
        : 'no failed recipient in the report';
    const named = failed.find((entry) => entry.recipient === recipient || entry.originalRecipient === recipient);
    if (named) return named;
    if (failed.length === 1) return failed[0]!;
    const unnamed = failed.find((entry) => entry.recipient === undefined);
    return (
      unnamed ??
      `the report is about other recipients (${failed
        .map((entry) => entry.recipient)
        .join(', ')
        .slice(0, 200)})`
    );
  }

  /** The report for one return path, or why there is none. */
  async function reportFor(
    parsed: ParsedReport,
    outboundId: string,
    ordinal: number,
    rawHash: string,
  ): Promise<NewReport | string> {
    const found = await target(outboundId, ordinal);
    if (!found) return `no message is known for return path ${outboundId}-${ordinal.toString(32)}`;
    const { outbound, recipient } = found;
    if (parsed.kind === 'none') return 'not a delivery report';
    if (parsed.kind === 'complaint') {
      if (parsed.originalMailFrom !== undefined) {
        const original = readReturnPath(await options.signing.signer(), parsed.originalMailFrom);
        if (original.kind !== 'valid' || original.outboundId !== outboundId || original.ordinal !== ordinal) {
          return `complaint not attributed: its Original-Mail-From (${parsed.originalMailFrom.slice(0, 100)}) is not the return path it was sent to`;
        }
      }
      return { outbound, recipient, kind: 'complaint', reason: parsed.feedbackType, source: 'arf', rawHash };
    }
    const entry = entryFor(parsed.entries, recipient);
    if (typeof entry === 'string') return entry;
    return bounceReport(outbound, recipient, entry, rawHash);
  }

  /**
   * Reads, attributes and records a message that arrived for return paths (`rcptTo`: those recipients only).
   * Resolves after everything it records is committed and synced, so the listener may answer 250. Never throws for
   * what the message says; rejects only when the store fails (the listener answers 4xx and the sender retries).
   */
  async function receive(message: { raw: Buffer; rcptTo: readonly string[] }): Promise<ReceiveOutcome> {
    const signer = await options.signing.signer();
    const parsed = parseReport(message.raw);
    const rawHash = blobHash(message.raw);
    const reports: NewReport[] = [];
    const ignored: string[] = [];
    const seen = new Set<string>();
    for (const address of message.rcptTo) {
      const path = readReturnPath(signer, address);
      if (path.kind !== 'valid') {
        ignored.push(`${address}: not a return path of this service`);
        continue;
      }
      const key = `${path.outboundId}-${path.ordinal}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const report = await reportFor(parsed, path.outboundId, path.ordinal, rawHash);
      if (typeof report === 'string') ignored.push(report);
      else reports.push(report);
    }
    if (reports.length === 0) {
      if (ignored.length > 0) logger.info('report to a return path recorded nothing', { reasons: ignored.slice(0, 5) });
      return { recorded: [], ignored };
    }
    return { recorded: await recordOnce(message.raw, rawHash, reports), ignored };
  }

  /**
   * Records the reports a raw report made, with the raw report as a blob, durably (resolves once synced), leaving
   * out those already recorded from the same bytes (a sender retrying after our 4xx, the report sent twice to the
   * same path, or synced twice). Returns the ids recorded.
   */
  async function recordOnce(raw: Buffer, rawHash: string, reports: readonly NewReport[]): Promise<string[]> {
    return db.durableWrite(async (tx) => {
      const again = await tx
        .select({ outboundId: tables.deliveryReports.outboundId, recipient: tables.deliveryReports.recipient })
        .from(tables.deliveryReports)
        .where(
          and(
            eq(tables.deliveryReports.rawHash, rawHash),
            inArray(
              tables.deliveryReports.outboundId,
              reports.map((report) => report.outbound.id),
            ),
          ),
        );
      const fresh = reports.filter(
        (report) => !again.some((row) => row.outboundId === report.outbound.id && row.recipient === report.recipient),
      );
      if (fresh.length === 0) return [];
      await putBlobs(tx, [{ bytes: raw, hash: rawHash }], unixSeconds(clock.now()));
      const ids: string[] = [];
      for (const report of fresh) {
        const id = await record(tx, report);
        if (id) ids.push(id);
      }
      return ids;
    });
  }

  /** The sent messages of a mailbox whose Message-ID is one of `ids` (normalised), with their recipients. */
  async function sentWithMessageIds(
    grantId: string,
    ids: readonly string[],
  ): Promise<{ outbound: OutboundRow; recipients: string[] }[]> {
    // thread_references knows every Message-ID of the mailbox (lower case), and leads to the message by its thread.
    const threads = await db.orm
      .select({ headerId: tables.threadReferences.headerId, threadId: tables.threadReferences.threadId })
      .from(tables.threadReferences)
      .where(and(eq(tables.threadReferences.grantId, grantId), inArray(tables.threadReferences.headerId, [...ids])));
    if (threads.length === 0) return [];
    const messages = await db.orm
      .select({ id: tables.messages.id, headerMessageId: tables.messages.headerMessageId })
      .from(tables.messages)
      .where(
        and(
          eq(tables.messages.grantId, grantId),
          inArray(tables.messages.threadId, [...new Set(threads.map((row) => row.threadId))]),
        ),
      );
    const messageIds = messages
      .filter((row) => row.headerMessageId && ids.includes(row.headerMessageId.replace(/^<|>$/g, '').toLowerCase()))
      .map((row) => row.id);
    if (messageIds.length === 0) return [];
    const sent = await db.orm
      .select()
      .from(tables.outboundMessages)
      .where(and(eq(tables.outboundMessages.grantId, grantId), inArray(tables.outboundMessages.messageId, messageIds)));
    const found: { outbound: OutboundRow; recipients: string[] }[] = [];
    for (const outbound of sent) {
      if (!outbound.applicationId) continue;
      const rows = await db.orm
        .select({ email: tables.outboundRecipients.email })
        .from(tables.outboundRecipients)
        .where(eq(tables.outboundRecipients.outboundId, outbound.id));
      found.push({ outbound, recipients: rows.map((row) => row.email.toLowerCase()) });
    }
    return found;
  }

  /** The reports a mailbox report makes about one of its sent messages, or why it makes none. */
  function mailboxReportsFor(
    parsed: ParsedReport,
    sent: { outbound: OutboundRow; recipients: string[] },
    rawHash: string,
  ): NewReport[] | string {
    const { outbound, recipients } = sent;
    if (parsed.kind === 'none') return 'not a delivery report';
    if (parsed.kind === 'complaint') {
      const named = parsed.originalRcptTo.filter((address) => recipients.includes(address));
      const recipient = named[0] ?? (recipients.length === 1 ? recipients[0] : undefined);
      if (!recipient) return "complaint not attributed: it names none of the message's recipients";
      return [{ outbound, recipient, kind: 'complaint', reason: parsed.feedbackType, source: 'arf', rawHash }];
    }
    const failed = parsed.entries.filter((entry) => entry.action === 'failed');
    if (failed.length === 0)
      return parsed.entries.some((entry) => entry.action === 'delayed')
        ? 'a delay warning, not a bounce'
        : 'no failed recipient in the report';
    const reports: NewReport[] = [];
    const toReport = (entry: BounceEntry, recipient: string) => bounceReport(outbound, recipient, entry, rawHash);
    for (const entry of failed) {
      const recipient = [entry.recipient, entry.originalRecipient].find(
        (address) => address !== undefined && recipients.includes(address),
      );
      if (recipient && !reports.some((report) => report.recipient === recipient))
        reports.push(toReport(entry, recipient));
    }
    // An alias or forward rewrote the address: one failure about a message to one recipient is that recipient's.
    if (reports.length === 0 && failed.length === 1 && recipients.length === 1)
      reports.push(toReport(failed[0]!, recipients[0]!));
    return reports.length > 0
      ? reports
      : `the report is about other recipients (${failed
          .map((entry) => entry.recipient)
          .join(', ')
          .slice(0, 200)})`;
  }

  /**
   * Reads and records a report that reached a mailbox itself rather than a return path: a connected account's
   * bounce or complaint, synced from its inbox (the account's server sends with the account's own address as the
   * return path). It is attributed by the Message-ID of the message it returns (./returned-message.ts), and only to
   * a message SENT BY THAT MAILBOX, so a report in one mailbox can never reach another grant's (or another
   * application's) message. Recorded as a return path's report is (the same effects), and once per raw report.
   * Never throws for what the message says.
   */
  async function receiveInMailbox(grant: { id: string }, raw: Buffer): Promise<ReceiveOutcome> {
    const report = readReport(raw);
    const parsed = parseReport(raw);
    if (parsed.kind === 'none') return { recorded: [], ignored: ['not a delivery report'] };
    const ids =
      parsed.kind === 'complaint' && parsed.originalMessageId ? [parsed.originalMessageId] : returnedMessageIds(report);
    if (ids.length === 0) return { recorded: [], ignored: ['the report names no returned message'] };
    const sent = await sentWithMessageIds(grant.id, ids);
    if (sent.length === 0) {
      logger.info('report in a mailbox names no message it sent', { grant_id: grant.id });
      return { recorded: [], ignored: ['the report names no message this mailbox sent'] };
    }
    const rawHash = blobHash(raw);
    const reports: NewReport[] = [];
    const ignored: string[] = [];
    for (const one of sent) {
      const made = mailboxReportsFor(parsed, one, rawHash);
      if (typeof made === 'string') ignored.push(made);
      else reports.push(...made);
    }
    if (reports.length === 0) return { recorded: [], ignored };
    return { recorded: await recordOnce(raw, rawHash, reports), ignored };
  }

  return { record, recordDeliveryFailure, returnPaths, checkAddress, receive, receiveInMailbox };
}

/** The report intake. */
export type { NewReport, ReceiveOutcome, ReportIntake, ReportIntakeOptions, ReturnPathCheck } from './contracts.js';
