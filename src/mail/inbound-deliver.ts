/**
 * @module mail/inbound-deliver
 * One inbound delivery (./inbound.ts): the size and header limits, the recipients, the stages' decisions
 * (./stages/inbound-pipeline.ts), then the store, on the writer thread's fast path or parsed on the parser pool.
 */
import type { GrantRow } from '../../storage/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import type { NewMessage } from '../messages/index.js';
import { headerSectionTooLarge } from './header-section.js';
import { emptyParsedMessage, sha256 } from '../mime/index.js';
import type { MessagePlan } from './stages/inbound-pipeline.js';
import { checkRecipient } from './inbound-recipients.js';
import {
  MAX_MESSAGE_BYTES,
  type CopyShell,
  type InboundMessage,
  type InboundResult,
  type InboundState,
  type StoreExtras,
} from './inbound-state.js';
import { followUp, storeCopies, storeRaw } from './inbound-write.js';

/** Stores the copies a plan keeps: on the writer thread's fast path when the message is simple, else parsed on the pool. */
async function store(
  inbound: InboundState,
  input: InboundMessage,
  plan: MessagePlan,
  extras: StoreExtras,
): Promise<Pick<InboundResult, 'deliveries' | 'parseError'>> {
  const { raw } = plan;
  const date = unixSeconds(inbound.clock.now());
  const copies: CopyShell[] = plan.copies.map((copy) => ({
    applicationId: copy.grant.applicationId,
    grantId: copy.grant.id,
    ...inbound.pipeline.shellOf(plan, copy),
    date,
    envelopeFrom: input.envelope.mailFrom || null,
    envelopeTo: copy.recipient,
    parseError: null,
  }));
  const grants = plan.copies.map((copy) => copy.grant);

  // Most mail is one text part: the writer thread parses and stores it in one hand-off (it has no attachments to strip).
  const simple = await storeRaw(inbound, raw, copies, extras);
  if (simple) {
    followUp(inbound, { grants, parsed: { from: simple.from } });
    return { deliveries: simple.deliveries, parseError: undefined };
  }

  inbound.parsing++;
  const parsed = await inbound.parser.parse(raw).finally(() => inbound.parsing--);
  const value = parsed.ok ? parsed.value : (parsed.partial ?? emptyParsedMessage());
  const parseError = parsed.ok ? undefined : parsed.error;
  const rewrites = new Map<string, Promise<Buffer>>();
  const messages: NewMessage[] = [];
  for (const [index, copy] of plan.copies.entries()) {
    // Stage 4 for attachments, now that they are known: each copy keeps what its policy allows, in the parse and in
    // the raw message it stores.
    const kept = await inbound.pipeline.stripAttachments(copy, value, raw, { parseFailed: !parsed.ok, rewrites });
    messages.push({
      ...copies[index]!,
      ...inbound.pipeline.shellOf(plan, copy),
      parsed: kept.parsed,
      raw: kept.raw,
      rawHash: kept.raw === raw ? parsed.rawHash : sha256(kept.raw),
      parseError: parseError ?? null,
    });
  }
  const deliveries = await storeCopies(inbound, messages, extras);
  followUp(inbound, { grants, parsed: value });
  return { deliveries, parseError };
}

/** One delivery ({@link deliverInbound} counts it as mail flowing). */
export async function deliverOne(inbound: InboundState, input: InboundMessage): Promise<InboundResult> {
  const raw = typeof input.rawMime === 'string' ? Buffer.from(input.rawMime) : input.rawMime;
  if (raw.length > MAX_MESSAGE_BYTES) {
    throw new AppError(
      'payload_too_large',
      `rawMime: the message is ${raw.length} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (40 MB).`,
    );
  }
  // Before any stage reads the header: a header section over the limit is refused whole (see ./header-section.ts).
  if (headerSectionTooLarge(raw, inbound.headerLimits.maxHeaderBytes)) {
    throw new AppError(
      'payload_too_large',
      `Message header too large: the limit is ${inbound.headerLimits.maxHeaderBytes} bytes`,
      { smtp: { code: 552, enhanced: '5.3.4' } },
    );
  }
  const rejected: InboundResult['rejected'] = [];
  const targets: { recipient: string; grant: GrantRow }[] = [];
  for (const recipient of input.envelope.rcptTo) {
    const check = await checkRecipient(inbound, recipient);
    if (!check.ok) rejected.push({ recipient, reason: check.message });
    else if (!targets.some((target) => target.grant.id === check.grant.id))
      targets.push({ recipient, grant: check.grant });
  }
  if (targets.length === 0) {
    throw new AppError(
      'not_found',
      `rcptTo: no recipient is a mailbox on this service (${input.envelope.rcptTo.join(', ') || 'none given'}).`,
    );
  }

  // The stages decide; the store is written last with what they decided.
  const plan = await inbound.pipeline.decide({
    raw,
    mailFrom: input.envelope.mailFrom,
    client: input.client,
    recipientsAdmitted: input.recipientsAdmitted === true,
    targets,
  });
  rejected.push(...plan.refused);
  const dropped = plan.dropped.map((copy) => ({ recipient: copy.recipient, grantId: copy.grant.id }));
  // Rows waiting from RCPT TO go in this message's transaction; they are given back if it fails.
  const waiting = inbound.pipeline.takeWaiting();
  const extras: StoreExtras = {
    rows: (messageIds) => [...waiting, ...inbound.pipeline.rowsOf(plan, messageIds)],
    usage: inbound.pipeline.usageOf(plan),
    jobs: () => [],
  };
  if (plan.copies.length === 0) {
    inbound.pipeline.later(extras.rows([]));
    return { deliveries: [], rejected, dropped, parseError: undefined };
  }
  try {
    // A reply to a tracked send is counted by a job stored with it (nothing is asked of mail that names no earlier message).
    const replyJobs = inbound.options.replies
      ? await inbound.options.replies.jobsFor(
          plan.raw,
          plan.copies.map((copy) => copy.grant),
          unixSeconds(inbound.clock.now()),
        )
      : undefined;
    if (replyJobs) extras.jobs = replyJobs;
    const result = await store(inbound, input, plan, extras);
    inbound.pipeline.stored(plan);
    return { ...result, rejected, dropped };
  } catch (error) {
    inbound.pipeline.later(waiting);
    throw error;
  }
}
