/**
 * @module mail/inbound
 * THE inbound path, shared by the SMTP listener and local delivery of sends on this service:
 * recipients → hosted mailboxes, parse (off the event loop), then for every mailbox the message, its
 * attachments, thread, inbox folder, search entry and `message.created` event in ONE transaction (shared with
 * the deliveries that arrive at the same time: group commit). The promise resolves only after that transaction
 * committed and its log reached the disk, so a caller may acknowledge the message. With an embedded database the
 * transaction runs on the mail writer thread (storage/engine/mail-writer.ts), so the event loop spends nothing on SQL or
 * fsync; with a libSQL server it runs in `Database.durableWrite` through the mail store.
 *
 * Where the parse runs: a message of text parts only (one, or a multipart/alternative of text/plain and text/html as
 * mail clients send: most mail) goes raw to the writer thread, which parses it with the fast path (./simple-mime.ts)
 * and builds its rows there (./ingest-prepare.ts): one hand-off between threads. Anything else (attachments, other
 * parts or charsets, over 256 KB), or any message when the database is a libSQL server, is parsed by mailparser on
 * the parser pool (./parse-inbound.ts) and then stored. Either way the parse never runs on the event loop.
 *
 * What is stored, and whether, is decided first by the inbound stages (./stages/inbound-pipeline.ts: RCPT rules,
 * authentication, spam, policy limits, inbox rules); the store is written last with their decisions, and with the
 * rule-evaluation rows and daily counters in the same transaction.
 *
 * Never call `deliverInbound` inside a `db.write` callback: it waits for the same write lock.
 */
import { eq } from 'drizzle-orm';
import {
  addDailyUsage,
  createGroupCommit,
  createMailWriter,
  findGrantByEmail,
  tables,
  type DailyUsageIncrement,
  type GrantRow,
  type MailWriter,
  type MailWriteResult,
  type Tx,
} from '../../storage/index.js';
import { recordEvaluations, type EvaluationRow, createEnforcement, type Enforcement } from '../admin/index.js';
import { workerModule } from '../../storage/engine/worker-module.js';
import type { CoreDeps, InboundStages } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import { announceRecordedEvents } from '../outbox/index.js';
import { HOSTED_PROVIDER } from '../providers/index.js';
import { type MailStore, type NewMessage, asDelivery } from '../messages/index.js';
import { imapMessages } from '../../storage/schema/connected.js';
import { enqueueJob, jobRowOf, type JobInput, type JobQueue } from '../jobs/index.js';
import type {
  DeliveredMail,
  FetchedMessage,
  ImapLinkRow,
  InboundDelivery,
  InboundMessage,
  InboundResult,
  InboundService,
  RecipientCheck,
  StoredCopy,
} from './contracts.js';
import { DEFAULT_HEADER_LIMITS, headerSectionTooLarge, limitHeaderSection } from './header-section.js';
import { createMimeParser, emptyParsedMessage, type MimeParser, type ParsedMessage } from '../mime/index.js';
import { createInboundPipeline, type MessagePlan } from './stages/inbound-pipeline.js';
import type { MailboxReports, ThreadReplies } from '../deliverability/index.js';

/** Largest message accepted, in bytes (the SMTP SIZE limit, and the outbound limit of Agent Accounts). */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

/** Options of {@link createInboundService}. */
export interface InboundServiceOptions {
  /** The MIME parser pool (a default pool is made when absent). */
  parser?: MimeParser;
  /** The mail writer thread, for an embedded database (made on first use when absent; tests pass their own). */
  writer?: MailWriter;
  /**
   * What follows a delivery (src/mail/after-delivery.ts): `jobsOf` names the durable jobs stored in the message's own
   * transaction (its invitation), `followUp` runs after `deliverInbound` resolved (the sender to contacts). Neither
   * delays the answer to the sender, and the delivery stands whatever they do.
   */
  afterDelivery?: {
    jobsOf(parsed: Pick<ParsedMessage, 'from' | 'attachments'>, copies: StoredCopy[]): JobInput[];
    followUp(mail: DeliveredMail): Promise<void>;
  };
  /** Told when jobs were stored with a message, so the in-process workers look at once. */
  jobs?: Pick<JobQueue, 'announce'>;
  /**
   * Replies to tracked sends (src/deliverability/thread-replies.ts): asked before a message is stored, it names the
   * jobs that count the reply, stored in the message's own transaction. Skipped when absent.
   */
  replies?: Pick<ThreadReplies, 'jobsFor' | 'jobsForMany'>;
  /**
   * Reports among a connected account's synced mail (src/deliverability/mailbox-reports.ts): asked before a fetched
   * message is stored, it names the job to store with it when the message may be a bounce or complaint.
   */
  mailboxReports?: Pick<MailboxReports, 'jobsFor'>;
  /** What applies to each grant (made from the deps when absent; the core passes its own, which admin writes invalidate). */
  enforcement?: Enforcement;
  /** The authentication and spam stages (src/ports/inbound-stages.ts); each is skipped when absent. */
  stages?: InboundStages;
  /** Told when a parser or writer thread stopped on its own (src/health.ts). */
  onThreadExit?: (thread: string, reason: string) => void;
}

/**
 * How long a mailbox found for an address is remembered: an SMTP session looks its recipients up at RCPT TO and
 * again when the data is in, and bulk senders repeat the same few addresses. Only found mailboxes are remembered,
 * so a new one is reachable at once. A mailbox deleted in this window is not: its message fails to store (its rows
 * refer to the grant), the sender gets 451 and, retrying later, 550.
 */
const RECIPIENT_MEMORY_MS = 1_000;
/** Addresses remembered at most (the memory is emptied when full). */
const RECIPIENT_MEMORY_SIZE = 10_000;

/**
 * Mail counts as flowing through this process for this long after a recipient was checked or a message delivered:
 * long enough to span the commands of an SMTP transaction and the gaps between a busy sender's messages.
 */
const MAIL_FLOWING_MS = 250;

/** Splits at the last `@`. */
function splitAddress(address: string): { local: string; domain: string } | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/**
 * The module the mail writer thread prepares simple messages with (./ingest-prepare.ts, compiled next to this one in
 * the build): a writer made with it parses and builds their rows on its own thread. Pass it as `prepareModule` to a
 * writer given in {@link InboundServiceOptions}.
 */
export const INGEST_PREPARE_MODULE: URL = workerModule(import.meta.url, 'ingest-prepare');

/**
 * Largest message the writer thread parses itself. A parse there delays the writes queued behind it, so larger
 * mail (rarely text parts only, and at most 1 MB on the fast path anyway) goes to the parser pool without a
 * trip to the writer; a hostile but simple message then holds the writer for milliseconds, not tens of them.
 */
const WRITER_PARSE_MAX_BYTES = 256 * 1024;

/** A stored copy as ./ingest-prepare.ts receives it: a {@link NewMessage} before parsing. */
type CopyShell = Omit<NewMessage, 'parsed' | 'raw' | 'rawHash'>;

/**
 * What a message's transaction stores besides its copies: rule-evaluation rows (given the copies' message ids), daily
 * counters, and jobs decided before the parse (given the stored copies: replies to tracked sends).
 */
interface StoreExtras {
  /** See MailWriteOptions.durable (default true). */
  durable?: boolean | undefined;
  rows(messageIds: readonly string[]): EvaluationRow[];
  usage: DailyUsageIncrement[];
  jobs(copies: readonly StoredCopy[]): JobInput[];
  /** A connected account's message: its `imap_messages` link rows, given the copies' message ids. */
  links?: (messageIds: readonly string[]) => ImapLinkRow[];
}

export type {
  FetchedMessage,
  ImapLinkRow,
  InboundDelivery,
  InboundMessage,
  InboundResult,
  InboundService,
  RecipientCheck,
} from './contracts.js';

/** Creates the inbound service. */
export function createInboundService(
  deps: CoreDeps,
  mailStore: MailStore,
  options: InboundServiceOptions = {},
): InboundService {
  const { db, clock, newId } = deps;
  const headerLimits = deps.config.headerLimits ?? DEFAULT_HEADER_LIMITS;
  const pipeline = createInboundPipeline(deps, {
    enforcement: options.enforcement ?? createEnforcement(deps),
    stages: options.stages ?? {},
  });
  const parser =
    options.parser ?? createMimeParser({ onCrash: (reason) => options.onThreadExit?.('mime parser', reason) });
  const jobsOf = (copies: NewMessage[], stored: StoredCopy[], extras: StoreExtras): JobInput[] => [
    ...(copies[0] ? (options.afterDelivery?.jobsOf(copies[0].parsed, stored) ?? []) : []),
    ...extras.jobs(stored),
  ];
  /** Stores deliveries (each one copy per hosted recipient), and the jobs that follow them, in the group commit's transaction. */
  async function writeDeliveries(
    tx: Tx,
    deliveries: { copies: NewMessage[]; extras: StoreExtras }[],
  ): Promise<InboundDelivery[][]> {
    const stored = await mailStore.insertMany(
      tx,
      deliveries.flatMap(({ copies }) => asDelivery(copies)),
    );
    let offset = 0;
    const results: InboundDelivery[][] = [];
    for (const { copies, extras } of deliveries) {
      const mine = stored.slice(offset, offset + copies.length);
      offset += copies.length;
      for (const job of jobsOf(
        copies,
        mine.map(({ row }) => ({ grantId: row.grantId, messageId: row.id })),
        extras,
      ))
        await enqueueJob(tx, { clock, newId }, job);
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
  /** Messages being parsed: a commit about to start waits briefly for them (one log sync for all). */
  let parsing = 0;
  const commit = createGroupCommit(db, writeDeliveries, { moreComing: () => parsing > 0 });
  let writer = options.writer;
  /** The mail writer thread of an embedded database (made on first use). */
  const mailWriter = (): MailWriter =>
    (writer ??= createMailWriter(db, {
      prepareModule: INGEST_PREPARE_MODULE,
      onExit: (reason) => options.onThreadExit?.('mail writer', reason),
    }));
  const deliveriesOf = (copies: CopyShell[], stored: MailWriteResult[]): InboundDelivery[] =>
    stored.map((result, index) => ({
      recipient: copies[index]!.envelopeTo ?? '',
      grantId: copies[index]!.grantId,
      messageId: result.messageId,
      threadId: result.threadId,
    }));

  /** Stores the copies of one message (one per mailbox), and the jobs that follow it, in one transaction shared with concurrent deliveries. */
  async function storeCopies(copies: NewMessage[], extras: StoreExtras): Promise<InboundDelivery[]> {
    if (!db.file) {
      const deliveries = await commit.run({ copies, extras });
      options.jobs?.announce();
      return deliveries;
    }
    const item = mailStore.toWriteItem(asDelivery(copies));
    const jobs = jobsOf(
      copies,
      item.copies.map((copy) => ({ grantId: copy.message.grantId, messageId: copy.message.id })),
      extras,
    );
    if (jobs.length > 0) item.jobs = jobs.map((job) => jobRowOf({ clock, newId }, job));
    item.evaluations = extras.rows(item.copies.map((copy) => copy.message.id));
    item.dailyUsage = extras.usage;
    const links = extras.links?.(item.copies.map((copy) => copy.message.id)) ?? [];
    if (links.length > 0) item.imapLinks = links;
    const stored = await mailWriter().write(item, { durable: extras.durable });
    announceRecordedEvents();
    if (jobs.length > 0) options.jobs?.announce();
    return deliveriesOf(copies, stored);
  }

  /** Follow-ups under way (`close` waits for them). */
  const followUps = new Set<Promise<void>>();
  /** Starts the follow-up of a delivery without waiting for it: the caller answers the sender first. */
  function followUp(mail: DeliveredMail): void {
    if (!options.afterDelivery) return;
    const running = options.afterDelivery
      .followUp(mail)
      .catch(() => undefined)
      .finally(() => followUps.delete(running));
    followUps.add(running);
  }

  /**
   * Hands the raw message to the writer thread, which parses and stores it itself when it is simple (text parts
   * only: most mail). Resolves undefined, nothing stored, for any other message, or without a writer that prepares.
   */
  async function storeRaw(
    raw: Buffer,
    copies: CopyShell[],
    extras: StoreExtras,
  ): Promise<{ deliveries: InboundDelivery[]; from: ParsedMessage['from'] } | undefined> {
    if (!fastPath(raw)) return undefined;
    const { meta, messageIds, jobs } = rawMeta(copies, extras);
    const outcome = await mailWriter().writeRaw({ raw, meta, messageIds, durable: extras.durable });
    if (!outcome.prepared) return undefined;
    announceRecordedEvents();
    if (jobs > 0) options.jobs?.announce();
    const summary = outcome.summary as { from?: ParsedMessage['from'] } | undefined;
    return { deliveries: deliveriesOf(copies, outcome.results), from: summary?.from ?? [] };
  }

  /** Whether the writer thread may prepare the message itself (see {@link storeRaw}). */
  const fastPath = (raw: Buffer) =>
    db.file !== undefined && raw.length <= WRITER_PARSE_MAX_BYTES && mailWriter().prepares;

  /** What the writer thread's prepare module (./ingest-prepare.ts) needs besides the bytes, with the ids of the copies' messages. */
  function rawMeta(copies: CopyShell[], extras: StoreExtras): { meta: unknown; messageIds: string[]; jobs: number } {
    // The ids in the order the rows ask for them (mail-rows.ts writeItemOf): message, thread, event, per copy.
    const ids = copies.flatMap(() => [newId(), newId(), newId()]);
    const messageIds = ids.filter((_, index) => index % 3 === 0);
    const evaluations = extras.rows(messageIds);
    const jobs = extras
      .jobs(copies.map((copy, index) => ({ grantId: copy.grantId, messageId: messageIds[index]! })))
      .map((job) => jobRowOf({ clock, newId }, job));
    const imapLinks = extras.links?.(messageIds) ?? [];
    return {
      meta: { copies, ids, at: copies[0]!.date, evaluations, dailyUsage: extras.usage, jobs, imapLinks },
      messageIds,
      jobs: jobs.length,
    };
  }

  /** Stores the copies a plan keeps: on the writer thread's fast path when the message is simple, else parsed on the pool. */
  async function store(
    input: InboundMessage,
    plan: MessagePlan,
    extras: StoreExtras,
  ): Promise<Pick<InboundResult, 'deliveries' | 'parseError'>> {
    const { raw } = plan;
    const date = unixSeconds(clock.now());
    const copies: CopyShell[] = plan.copies.map((copy) => ({
      applicationId: copy.grant.applicationId,
      grantId: copy.grant.id,
      ...pipeline.shellOf(plan, copy),
      date,
      envelopeFrom: input.envelope.mailFrom || null,
      envelopeTo: copy.recipient,
      parseError: null,
    }));
    const grants = plan.copies.map((copy) => copy.grant);

    // Most mail is one text part: the writer thread parses and stores it in one hand-off (it has no attachments to strip).
    const simple = await storeRaw(raw, copies, extras);
    if (simple) {
      followUp({ grants, parsed: { from: simple.from } });
      return { deliveries: simple.deliveries, parseError: undefined };
    }

    parsing++;
    const parsed = await parser.parse(raw).finally(() => parsing--);
    const value = parsed.ok ? parsed.value : (parsed.partial ?? emptyParsedMessage());
    const parseError = parsed.ok ? undefined : parsed.error;
    const messages = plan.copies.map((copy, index): NewMessage => {
      // Stage 4 for attachments, now that they are known: each copy keeps what its policy allows.
      const kept = pipeline.stripAttachments(copy, value);
      return {
        ...copies[index]!,
        ...pipeline.shellOf(plan, copy),
        parsed: kept,
        raw,
        rawHash: parsed.rawHash,
        parseError: parseError ?? null,
      };
    });
    const deliveries = await storeCopies(messages, extras);
    followUp({ grants, parsed: value });
    return { deliveries, parseError };
  }

  /** When mail last moved here (performance.now()), and deliveries under way: see {@link MAIL_FLOWING_MS}. */
  let lastMail = -Infinity;
  let delivering = 0;

  /** Mailboxes recently found, by normalised address, with when (performance.now(): an age, not a date). */
  const found = new Map<string, { check: RecipientCheck; at: number }>();
  /**
   * Whether `address` is a hosted mailbox here. Given the envelope (the SMTP listener at RCPT TO), the `smtp_rcpt`
   * stage runs too: the recipient's rules and the limits known this early may refuse it (`reason: 'policy'`).
   * Rejects when that evaluation cannot complete (the listener answers 451 4.3.0).
   */
  async function checkRecipient(
    address: string,
    envelope?: { mailFrom: string; size?: number | undefined },
  ): Promise<RecipientCheck> {
    const normalized = address.trim().toLowerCase();
    const now = performance.now();
    lastMail = now;
    const known = found.get(normalized);
    let check: RecipientCheck;
    if (known && now - known.at < RECIPIENT_MEMORY_MS) check = known.check;
    else {
      check = await lookUpRecipient(normalized);
      if (check.ok) {
        if (found.size >= RECIPIENT_MEMORY_SIZE) found.clear();
        found.set(normalized, { check, at: now });
      }
    }
    if (!check.ok || !envelope) return check;
    const refusal = await pipeline.admitRecipient(check.grant, {
      mailFrom: envelope.mailFrom,
      recipient: normalized,
      size: envelope.size,
    });
    return refusal ? { ok: false, reason: 'policy', message: refusal.message, refusal } : check;
  }

  async function lookUpRecipient(normalized: string): Promise<RecipientCheck> {
    const parts = splitAddress(normalized);
    // `user%other@host`, `host!user@host`, quoted `"a@b"@host` and source routes ask us to forward elsewhere.
    if (!parts || /[%!@"]/.test(parts.local) || normalized.startsWith('@') || parts.domain.startsWith('[')) {
      return {
        ok: false,
        reason: 'relay',
        message: 'Relay access denied: this server only accepts mail for its own mailboxes',
      };
    }
    const exact = await findGrantByEmail(db.orm, normalized);
    if (exact && exact.provider === HOSTED_PROVIDER) return { ok: true, grant: exact };
    // Subaddressing: `agent+tag@domain` reaches `agent@domain`.
    const plus = parts.local.indexOf('+');
    if (!exact && plus > 0) {
      const base = await findGrantByEmail(db.orm, `${parts.local.slice(0, plus)}@${parts.domain}`);
      if (base && base.provider === HOSTED_PROVIDER) return { ok: true, grant: base };
    }
    const domain = await db.orm.query.domains.findFirst({
      where: eq(tables.domains.domainAddress, parts.domain),
      columns: { id: true },
    });
    if (!domain)
      return { ok: false, reason: 'relay', message: `Relay access denied: ${parts.domain} is not a hosted domain` };
    return { ok: false, reason: 'unknown', message: `Unknown mailbox: ${normalized} does not exist` };
  }

  /**
   * {@link InboundService.storeFetched} of many messages (a connected account's sync hands them over as they come):
   * one read for the replies to tracked sends among them all, and the raw messages handed to the writer thread
   * together, where they share transactions as any concurrent deliveries do. Each message is stored, or fails, on
   * its own; one outcome per message, in order.
   */
  async function storeFetchedMany(
    fetched: readonly FetchedMessage[],
  ): Promise<PromiseSettledResult<InboundDelivery>[]> {
    const at = unixSeconds(clock.now());
    // A message on the account's server exists already and cannot be refused: a header section over the limit loses
    // its excess fields (as Postfix's cleanup discards them), so nothing past the limit reaches a parser.
    const messages = fetched.map((message) => {
      const limited = limitHeaderSection(message.raw, headerLimits.maxHeaderBytes);
      if (limited.discardedBytes === 0) return message;
      deps.logger.warn('a fetched message exceeds the header-section limit: its excess fields are discarded', {
        grant_id: message.grantId,
        discarded_bytes: limited.discardedBytes,
        limit_bytes: headerLimits.maxHeaderBytes,
      });
      return { ...message, raw: limited.raw };
    });
    // As for mail received here: a reply to a tracked send counts (thread.replied); a connected account's own
    // bounces and complaints come back this way too. Both decide from the header section, mostly without a query.
    const grants = messages.map((message) => ({ id: message.grantId, ...message.grant }));
    const replyJobs = options.replies
      ? await options.replies.jobsForMany(
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
          ...(message.history ? { history: true } : {}),
        },
      ];
      const replies = replyJobs[index];
      const reports = options.mailboxReports?.jobsFor(message.raw, [grants[index]!]);
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
      parsing++;
      const parsed = await parser.parse(raw).finally(() => parsing--);
      const value = parsed.ok ? parsed.value : (parsed.partial ?? emptyParsedMessage());
      const [delivery] = await storeCopies(
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
        ? prepared.filter((entry) => fastPath(entry.message.raw))
        : [];
    if (fast.length === 0) {
      // Handed over in one go: none of these awaits before its message is queued for the writer thread.
      return Promise.allSettled(
        prepared.map(async (entry) => {
          const simple = await storeRaw(entry.message.raw, entry.copies, entry.extras);
          return simple ? simple.deliveries[0]! : parseAndStore(entry, entry.message.raw);
        }),
      );
    }
    const slots = new Map(fast.map((entry, index) => [entry, index]));
    const metas = fast.map((entry) => rawMeta(entry.copies, entry.extras));
    const group = mailWriter()
      .writeRawGroup({
        raws: fast.map((entry) => entry.message.raw),
        metas: metas.map((meta) => meta.meta),
        messageIds: metas.map((meta) => meta.messageIds),
      })
      .then((outcomes) => {
        announceRecordedEvents();
        if (metas.some((meta, index) => meta.jobs > 0 && outcomes[index]!.prepared)) options.jobs?.announce();
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

  return {
    checkRecipient,

    /** Whether mail is flowing through this process now: a delivery under way, or a recipient or delivery in the last moments. */
    flowing: (): boolean => delivering > 0 || performance.now() - lastMail < MAIL_FLOWING_MS,

    /**
     * Stores a message for each hosted recipient, in one transaction; resolves after it committed. Malformed MIME
     * is stored raw with its parse error. Throws `not_found` when no recipient is hosted here and
     * `payload_too_large` over {@link MAX_MESSAGE_BYTES}; a storage failure rejects and stores nothing.
     */
    async deliverInbound(input: InboundMessage): Promise<InboundResult> {
      delivering++;
      try {
        return await deliverOne(input);
      } finally {
        delivering--;
        lastMail = performance.now();
      }
    },

    /**
     * Stores a message fetched from a connected account's server, with its IMAP link, through the same store path
     * as mail received here (the writer thread's fast path, else the parser pool), in a transaction shared with
     * concurrent ones. No inbound stage runs: the mail was delivered to the user already (no rules, no spam check,
     * no bounce, no daily counter), and no follow-up (contacts); its invitation job, if any, is stored as for any
     * delivery. Rejects when it could not be stored (a link already taken: it was synced before).
     */
    async storeFetched(message: FetchedMessage): Promise<InboundDelivery> {
      const [outcome] = await storeFetchedMany([message]);
      if (outcome!.status === 'rejected') throw outcome!.reason;
      return outcome!.value;
    },

    storeFetchedMany,

    /** Parses a message on the parser pool (never on the event loop). */
    parse: (raw: Buffer) => parser.parse(raw),

    /**
     * Starts the mail writer thread now (an embedded database only) rather than at the first message: when the
     * service starts, in the roles that store mail. Resolves once it has loaded; never rejects.
     */
    warm(): Promise<void> {
      return db.file ? mailWriter().warm() : Promise.resolve();
    },

    /** Writes the rule-evaluation rows still waiting (tests; shutdown). */
    flushEvaluations: () => pipeline.flush(),

    /** Stops the parser's worker threads and, once the writes and follow-ups under way are done, the mail writer thread. */
    async close() {
      await Promise.all([parser.close(), writer?.close(), ...followUps]);
    },
  };

  /** One delivery ({@link deliverInbound} counts it as mail flowing). */
  async function deliverOne(input: InboundMessage): Promise<InboundResult> {
    const raw = typeof input.rawMime === 'string' ? Buffer.from(input.rawMime) : input.rawMime;
    if (raw.length > MAX_MESSAGE_BYTES) {
      throw new AppError(
        'payload_too_large',
        `rawMime: the message is ${raw.length} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (40 MB).`,
      );
    }
    // Before any stage reads the header: a header section over the limit is refused whole (see ./header-section.ts).
    if (headerSectionTooLarge(raw, headerLimits.maxHeaderBytes)) {
      throw new AppError(
        'payload_too_large',
        `Message header too large: the limit is ${headerLimits.maxHeaderBytes} bytes`,
        { smtp: { code: 552, enhanced: '5.3.4' } },
      );
    }
    const rejected: InboundResult['rejected'] = [];
    const targets: { recipient: string; grant: GrantRow }[] = [];
    for (const recipient of input.envelope.rcptTo) {
      const check = await checkRecipient(recipient);
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
    const plan = await pipeline.decide({
      raw,
      mailFrom: input.envelope.mailFrom,
      client: input.client,
      recipientsAdmitted: input.recipientsAdmitted === true,
      targets,
    });
    rejected.push(...plan.refused);
    const dropped = plan.dropped.map((copy) => ({ recipient: copy.recipient, grantId: copy.grant.id }));
    // Rows waiting from RCPT TO go in this message's transaction; they are given back if it fails.
    const waiting = pipeline.takeWaiting();
    const extras: StoreExtras = {
      rows: (messageIds) => [...waiting, ...pipeline.rowsOf(plan, messageIds)],
      usage: pipeline.usageOf(plan),
      jobs: () => [],
    };
    if (plan.copies.length === 0) {
      pipeline.later(extras.rows([]));
      return { deliveries: [], rejected, dropped, parseError: undefined };
    }
    try {
      // A reply to a tracked send is counted by a job stored with it (nothing is asked of mail that names no earlier message).
      const replyJobs = options.replies
        ? await options.replies.jobsFor(
            plan.raw,
            plan.copies.map((copy) => copy.grant),
            unixSeconds(clock.now()),
          )
        : undefined;
      if (replyJobs) extras.jobs = replyJobs;
      const result = await store(input, plan, extras);
      pipeline.stored(plan);
      return { ...result, rejected, dropped };
    } catch (error) {
      pipeline.later(waiting);
      throw error;
    }
  }
}
