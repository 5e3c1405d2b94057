/**
 * @module deliverability/reports-return-paths
 * Reports to return paths for the intake (./reports.ts): the VERP return path of each recipient, the RCPT TO check,
 * and a message to return paths read, attributed and recorded.
 */
import { asc, eq } from 'drizzle-orm';
import { blobHash, tables } from '../../storage/index.js';
import { parseReport, type BounceEntry, type ParsedReport } from './report-parser.js';
import { readReturnPath, recipientOrdinals, returnPathFor } from './verp.js';
import { recordOnce } from './reports-record.js';
import {
  bounceReport,
  type IntakeState,
  type NewReport,
  type OutboundRow,
  type ReceiveOutcome,
  type ReturnPathCheck,
} from './reports-state.js';

/**
 * The envelope sender of each recipient of a message: a return path of its own when the message belongs to an
 * application (the service's own mail keeps its plain sender), on the domain of the plain sender (the From).
 */
export async function returnPaths(
  state: IntakeState,
  outbound: Pick<OutboundRow, 'id' | 'applicationId' | 'envelopeFrom'>,
  allRecipients: readonly string[],
): Promise<(email: string) => string> {
  if (!outbound.applicationId) return () => outbound.envelopeFrom;
  const signer = await state.options.signing.signer();
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
export async function checkAddress(state: IntakeState, address: string): Promise<ReturnPathCheck> {
  const signer = await state.options.signing.signer();
  const path = readReturnPath(signer, address);
  if (path.kind === 'none') return { kind: 'none' };
  const domain = await state.db.orm.query.domains.findFirst({
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
export async function target(
  state: IntakeState,
  outboundId: string,
  ordinal: number,
): Promise<{ outbound: OutboundRow; recipient: string } | undefined> {
  const [outbound] = await state.db.orm
    .select()
    .from(tables.outboundMessages)
    .where(eq(tables.outboundMessages.id, outboundId))
    .limit(1);
  if (!outbound || !outbound.applicationId) return undefined;
  const rows = await state.db.orm
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
export function entryFor(entries: BounceEntry[], recipient: string): BounceEntry | string {
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
export async function reportFor(
  state: IntakeState,
  parsed: ParsedReport,
  outboundId: string,
  ordinal: number,
  rawHash: string,
): Promise<NewReport | string> {
  const found = await target(state, outboundId, ordinal);
  if (!found) return `no message is known for return path ${outboundId}-${ordinal.toString(32)}`;
  const { outbound, recipient } = found;
  if (parsed.kind === 'none') return 'not a delivery report';
  if (parsed.kind === 'complaint') {
    if (parsed.originalMailFrom !== undefined) {
      const original = readReturnPath(await state.options.signing.signer(), parsed.originalMailFrom);
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
export async function receive(
  state: IntakeState,
  message: { raw: Buffer; rcptTo: readonly string[] },
): Promise<ReceiveOutcome> {
  const signer = await state.options.signing.signer();
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
    const report = await reportFor(state, parsed, path.outboundId, path.ordinal, rawHash);
    if (typeof report === 'string') ignored.push(report);
    else reports.push(report);
  }
  if (reports.length === 0) {
    if (ignored.length > 0)
      state.logger.info('report to a return path recorded nothing', { reasons: ignored.slice(0, 5) });
    return { recorded: [], ignored };
  }
  return { recorded: await recordOnce(state, message.raw, rawHash, reports), ignored };
}
