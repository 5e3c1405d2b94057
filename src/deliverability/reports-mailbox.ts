/**
 * @module deliverability/reports-mailbox
 * Reports found in a connected account's mailbox, for the intake (./reports.ts): attributed by the Message-ID of the
 * returned message among the messages that mailbox sent.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { blobHash, tables } from '../../storage/index.js';
import { readReport } from '../mime/index.js';
import { parseReport, type BounceEntry, type ParsedReport } from './report-parser.js';
import { returnedMessageIds } from './returned-message.js';
import { recordOnce } from './reports-record.js';
import {
  bounceReport,
  type IntakeState,
  type NewReport,
  type OutboundRow,
  type ReceiveOutcome,
} from './reports-state.js';

/** The sent messages of a mailbox whose Message-ID is one of `ids` (normalised), with their recipients. */
export async function sentWithMessageIds(
  state: IntakeState,
  grantId: string,
  ids: readonly string[],
): Promise<{ outbound: OutboundRow; recipients: string[] }[]> {
  // thread_references knows every Message-ID of the mailbox (lower case), and leads to the message by its thread.
  const threads = await state.db.orm
    .select({ headerId: tables.threadReferences.headerId, threadId: tables.threadReferences.threadId })
    .from(tables.threadReferences)
    .where(and(eq(tables.threadReferences.grantId, grantId), inArray(tables.threadReferences.headerId, [...ids])));
  if (threads.length === 0) return [];
  const messages = await state.db.orm
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
  const sent = await state.db.orm
    .select()
    .from(tables.outboundMessages)
    .where(and(eq(tables.outboundMessages.grantId, grantId), inArray(tables.outboundMessages.messageId, messageIds)));
  const found: { outbound: OutboundRow; recipients: string[] }[] = [];
  for (const outbound of sent) {
    if (!outbound.applicationId) continue;
    const rows = await state.db.orm
      .select({ email: tables.outboundRecipients.email })
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.outboundId, outbound.id));
    found.push({ outbound, recipients: rows.map((row) => row.email.toLowerCase()) });
  }
  return found;
}

/** The reports a mailbox report makes about one of its sent messages, or why it makes none. */
export function mailboxReportsFor(
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
export async function receiveInMailbox(
  state: IntakeState,
  grant: { id: string },
  raw: Buffer,
): Promise<ReceiveOutcome> {
  const report = readReport(raw);
  const parsed = parseReport(raw);
  if (parsed.kind === 'none') return { recorded: [], ignored: ['not a delivery report'] };
  const ids =
    parsed.kind === 'complaint' && parsed.originalMessageId ? [parsed.originalMessageId] : returnedMessageIds(report);
  if (ids.length === 0) return { recorded: [], ignored: ['the report names no returned message'] };
  const sent = await sentWithMessageIds(state, grant.id, ids);
  if (sent.length === 0) {
    state.logger.info('report in a mailbox names no message it sent', { grant_id: grant.id });
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
  return { recorded: await recordOnce(state, raw, rawHash, reports), ignored };
}
