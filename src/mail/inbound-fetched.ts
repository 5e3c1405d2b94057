/**
 * @module mail/inbound-fetched
 * Storing mail fetched from a connected account's server (./inbound.ts): through the same store path as mail
 * received here, without the inbound stages; a bulk load handed to the writer's prepare thread in one go.
 */
import { unixSeconds } from '../time.js';
import { announceRecordedEvents } from '../outbox/index.js';
import type { StoredCopy } from './after-delivery.js';
import { limitHeaderSection } from './header-section.js';
import { emptyParsedMessage } from '../mime/index.js';
import type { CopyShell, FetchedMessage, InboundDelivery, InboundState, StoreExtras } from './inbound-state.js';
import { deliveriesOf, fastPath, rawMeta, storeCopies, storeRaw } from './inbound-write.js';
import { automatedOfRaw } from './stages/automated.js';

/** The verdict of a fetched message: whether a machine wrote it (nothing else is decided for synced mail). */
function automatedVerdict(raw: Buffer): Pick<CopyShell, 'verdict'> {
  const automated = automatedOfRaw(raw);
  return automated ? { verdict: { automated } } : {};
}

/**
 * {@link InboundService.storeFetched} of many messages (a connected account's sync hands them over as they come):
 * one read for the replies to tracked sends among them all, and the raw messages handed to the writer thread
 * together, where they share transactions as any concurrent deliveries do. Each message is stored, or fails, on
 * its own; one outcome per message, in order.
 */
export async function storeFetchedMany(
  inbound: InboundState,
  fetched: readonly FetchedMessage[],
): Promise<PromiseSettledResult<InboundDelivery>[]> {
  const at = unixSeconds(inbound.clock.now());
  // A message on the account's server exists already and cannot be refused: a header section over the limit loses
  // its excess fields (as Postfix's cleanup discards them), so nothing past the limit reaches a parser.
  const messages = fetched.map((message) => {
    const limited = limitHeaderSection(message.raw, inbound.headerLimits.maxHeaderBytes);
    if (limited.discardedBytes === 0) return message;
    inbound.logger.warn('a fetched message exceeds the header-section limit: its excess fields are discarded', {
      grant_id: message.grantId,
      discarded_bytes: limited.discardedBytes,
      limit_bytes: inbound.headerLimits.maxHeaderBytes,
    });
    return { ...message, raw: limited.raw };
  });
  // As for mail received here: a reply to a tracked send counts (thread.replied); a connected account's own
  // bounces and complaints come back this way too. Both decide from the header section, mostly without a query.
  const grants = messages.map((message) => ({ id: message.grantId, ...message.grant }));
  const replyJobs = inbound.options.replies
    ? await inbound.options.replies.jobsForMany(
        messages.map((message, index) => ({ raw: message.raw, grants: [grants[index]!] })),
        at,
      )
    : [];
  const prepared = messages.map((message, index) => {
    const copies: CopyShell[] = [
      {
        applicationId: message.applicationId,
        grantId: message.grantId,
        folders: message.folders,
        unread: message.unread,
        starred: message.starred,
        date: message.date,
        envelopeFrom: null,
        envelopeTo: null,
        parseError: null,
        // Synced mail is marked as mail received here is (the stages do not run on it, the detector does).
        ...automatedVerdict(message.raw),
        ...(message.history ? { history: true } : {}),
      },
    ];
    const replies = replyJobs[index];
    const reports = inbound.options.mailboxReports?.jobsFor(message.raw, [grants[index]!]);
    const jobs = (stored: readonly StoredCopy[]) => [...(replies?.(stored) ?? []), ...(reports?.(stored) ?? [])];
    const extras: StoreExtras = {
      durable: message.durable,
      rows: () => [],
      usage: [],
      jobs,
      links: (ids) => (ids[0] === undefined ? [] : message.links(ids[0])),
    };
    return { message, copies, extras };
  });
  /** Parsed on the parser pool and stored (a message the writer thread does not prepare), from `raw`. */
  const parseAndStore = async (
    { copies, extras }: (typeof prepared)[number],
    raw: Buffer,
  ): Promise<InboundDelivery> => {
    inbound.parsing++;
    const parsed = await inbound.parser.parse(raw).finally(() => inbound.parsing--);
    const value = parsed.ok ? parsed.value : (parsed.partial ?? emptyParsedMessage());
    const [delivery] = await storeCopies(
      inbound,
      [{ ...copies[0]!, parsed: value, raw, rawHash: parsed.rawHash, parseError: parsed.ok ? null : parsed.error }],
      extras,
    );
    return delivery!;
  };
  // A bulk load (the initial sync: nothing waits for the log to reach the disk) goes to the writer's prepare thread
  // in one hand-off, the messages it may prepare together, their bytes moved there (see FetchedMessage.raw); the
  // rest, and what it declines (its bytes back), as one by one.
  const fast =
    messages.length > 1 && messages.every((message) => message.durable === false)
      ? prepared.filter((entry) => fastPath(inbound, entry.message.raw))
      : [];
  if (fast.length === 0) {
    // Handed over in one go: none of these awaits before its message is queued for the writer thread.
    return Promise.allSettled(
      prepared.map(async (entry) => {
        const simple = await storeRaw(inbound, entry.message.raw, entry.copies, entry.extras);
        return simple ? simple.deliveries[0]! : parseAndStore(entry, entry.message.raw);
      }),
    );
  }
  const slots = new Map(fast.map((entry, index) => [entry, index]));
  const metas = fast.map((entry) => rawMeta(inbound, entry.copies, entry.extras));
  const group = inbound
    .mailWriter()
    .writeRawGroup({
      raws: fast.map((entry) => entry.message.raw),
      metas: metas.map((meta) => meta.meta),
      messageIds: metas.map((meta) => meta.messageIds),
    })
    .then((outcomes) => {
      announceRecordedEvents();
      if (metas.some((meta, index) => meta.jobs > 0 && outcomes[index]!.prepared)) inbound.options.jobs?.announce();
      return outcomes;
    });
  return Promise.allSettled(
    prepared.map(async (entry) => {
      const index = slots.get(entry);
      if (index === undefined) return parseAndStore(entry, entry.message.raw);
      const outcome = (await group)[index]!;
      if (!outcome.prepared)
        return parseAndStore(entry, Buffer.from(outcome.raw.buffer, outcome.raw.byteOffset, outcome.raw.byteLength));
      if ('failed' in outcome) throw outcome.failed;
      return deliveriesOf(entry.copies, outcome.results)[0]!;
    }),
  );
}
