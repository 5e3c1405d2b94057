/**
 * @module mail/inbound-write
 * Storing inbound mail (./inbound.ts): the copies of one message in one transaction shared with concurrent
 * deliveries (the group commit of a libSQL server, or the mail writer thread of an embedded database, which parses a
 * simple message itself), the jobs that follow them, and the follow-up run after the answer.
 */
import { addDailyUsage, type MailWriteResult, type Tx } from '../../storage/index.js';
import { recordEvaluations } from '../admin/index.js';
import { announceRecordedEvents } from '../outbox/index.js';
import { type NewMessage, asDelivery } from '../messages/index.js';
import { imapMessages } from '../../storage/schema/connected.js';
import { enqueueJob, jobRowOf, type JobInput } from '../jobs/index.js';
import type { DeliveredMail, StoredCopy } from './after-delivery.js';
import type { ParsedMessage } from '../mime/index.js';
import type { CopyShell, InboundDelivery, InboundState, StoreExtras } from './inbound-state.js';

/**
 * Largest message the writer thread parses itself. A parse there delays the writes queued behind it, so larger
 * mail (rarely text parts only, and at most 1 MB on the fast path anyway) goes to the parser pool without a
 * trip to the writer; a hostile but simple message then holds the writer for milliseconds, not tens of them.
 */
const WRITER_PARSE_MAX_BYTES = 256 * 1024;

function jobsOf(inbound: InboundState, copies: NewMessage[], stored: StoredCopy[], extras: StoreExtras): JobInput[] {
  return [
    ...(copies[0] ? (inbound.options.afterDelivery?.jobsOf(copies[0].parsed, stored) ?? []) : []),
    ...extras.jobs(stored),
  ];
}

/** Stores deliveries (each one copy per hosted recipient), and the jobs that follow them, in the group commit's transaction. */
export async function writeDeliveries(
  inbound: InboundState,
  tx: Tx,
  deliveries: { copies: NewMessage[]; extras: StoreExtras }[],
): Promise<InboundDelivery[][]> {
  const stored = await inbound.mailStore.insertMany(
    tx,
    deliveries.flatMap(({ copies }) => asDelivery(copies)),
  );
  let offset = 0;
  const results: InboundDelivery[][] = [];
  for (const { copies, extras } of deliveries) {
    const mine = stored.slice(offset, offset + copies.length);
    offset += copies.length;
    for (const job of jobsOf(
      inbound,
      copies,
      mine.map(({ row }) => ({ grantId: row.grantId, messageId: row.id })),
      extras,
    ))
      await enqueueJob(tx, { clock: inbound.clock, newId: inbound.newId }, job);
    await recordEvaluations(tx, extras.rows(mine.map(({ row }) => row.id)));
    await addDailyUsage(tx, extras.usage);
    const links = extras.links?.(mine.map(({ row }) => row.id)) ?? [];
    if (links.length > 0) await tx.insert(imapMessages).values(links);
    results.push(
      mine.map(({ row }, index) => ({
        recipient: copies[index]!.envelopeTo ?? '',
        grantId: row.grantId,
        messageId: row.id,
        threadId: row.threadId,
      })),
    );
  }
  return results;
}

export const deliveriesOf = (copies: CopyShell[], stored: MailWriteResult[]): InboundDelivery[] =>
  stored.map((result, index) => ({
    recipient: copies[index]!.envelopeTo ?? '',
    grantId: copies[index]!.grantId,
    messageId: result.messageId,
    threadId: result.threadId,
  }));

/** Stores the copies of one message (one per mailbox), and the jobs that follow it, in one transaction shared with concurrent deliveries. */
export async function storeCopies(
  inbound: InboundState,
  copies: NewMessage[],
  extras: StoreExtras,
): Promise<InboundDelivery[]> {
  if (!inbound.db.file) {
    const deliveries = await inbound.commit.run({ copies, extras });
    inbound.options.jobs?.announce();
    return deliveries;
  }
  const item = inbound.mailStore.toWriteItem(asDelivery(copies));
  const jobs = jobsOf(
    inbound,
    copies,
    item.copies.map((copy) => ({ grantId: copy.message.grantId, messageId: copy.message.id })),
    extras,
  );
  if (jobs.length > 0) item.jobs = jobs.map((job) => jobRowOf({ clock: inbound.clock, newId: inbound.newId }, job));
  item.evaluations = extras.rows(item.copies.map((copy) => copy.message.id));
  item.dailyUsage = extras.usage;
  const links = extras.links?.(item.copies.map((copy) => copy.message.id)) ?? [];
  if (links.length > 0) item.imapLinks = links;
  const stored = await inbound.mailWriter().write(item, { durable: extras.durable });
  announceRecordedEvents();
  if (jobs.length > 0) inbound.options.jobs?.announce();
  return deliveriesOf(copies, stored);
}

/** Starts the follow-up of a delivery without waiting for it: the caller answers the sender first. */
export function followUp(inbound: InboundState, mail: DeliveredMail): void {
  if (!inbound.options.afterDelivery) return;
  const running = inbound.options.afterDelivery
    .followUp(mail)
    .catch(() => undefined)
    .finally(() => inbound.followUps.delete(running));
  inbound.followUps.add(running);
}

/**
 * Hands the raw message to the writer thread, which parses and stores it itself when it is simple (text parts
 * only: most mail). Resolves undefined, nothing stored, for any other message, or without a writer that prepares.
 */
export async function storeRaw(
  inbound: InboundState,
  raw: Buffer,
  copies: CopyShell[],
  extras: StoreExtras,
): Promise<{ deliveries: InboundDelivery[]; from: ParsedMessage['from'] } | undefined> {
  if (!fastPath(inbound, raw)) return undefined;
  const { meta, messageIds, jobs } = rawMeta(inbound, copies, extras);
  const outcome = await inbound.mailWriter().writeRaw({ raw, meta, messageIds, durable: extras.durable });
  if (!outcome.prepared) return undefined;
  announceRecordedEvents();
  if (jobs > 0) inbound.options.jobs?.announce();
  const summary = outcome.summary as { from?: ParsedMessage['from'] } | undefined;
  return { deliveries: deliveriesOf(copies, outcome.results), from: summary?.from ?? [] };
}

/** Whether the writer thread may prepare the message itself (see {@link storeRaw}). */
export const fastPath = (inbound: InboundState, raw: Buffer) =>
  inbound.db.file !== undefined && raw.length <= WRITER_PARSE_MAX_BYTES && inbound.mailWriter().prepares;

/** What the writer thread's prepare module (./ingest-prepare.ts) needs besides the bytes, with the ids of the copies' messages. */
export function rawMeta(
  inbound: InboundState,
  copies: CopyShell[],
  extras: StoreExtras,
): { meta: unknown; messageIds: string[]; jobs: number } {
  // The ids in the order the rows ask for them (mail-rows.ts writeItemOf): message, thread, event, per copy.
  const ids = copies.flatMap(() => [inbound.newId(), inbound.newId(), inbound.newId()]);
  const messageIds = ids.filter((_, index) => index % 3 === 0);
  const evaluations = extras.rows(messageIds);
  const jobs = extras
    .jobs(copies.map((copy, index) => ({ grantId: copy.grantId, messageId: messageIds[index]! })))
    .map((job) => jobRowOf({ clock: inbound.clock, newId: inbound.newId }, job));
  const imapLinks = extras.links?.(messageIds) ?? [];
  return {
    meta: { copies, ids, at: copies[0]!.date, evaluations, dailyUsage: extras.usage, jobs, imapLinks },
    messageIds,
    jobs: jobs.length,
  };
}
