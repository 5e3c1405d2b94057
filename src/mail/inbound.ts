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
 *
 * The service is plain functions over a small state made here: where mail goes (./inbound-recipients.ts), one
 * delivery (./inbound-deliver.ts), mail fetched from connected accounts (./inbound-fetched.ts), the store
 * (./inbound-write.ts) and what they share (./inbound-state.ts).
 */
import type { InboundService } from './contracts.js';
import { createGroupCommit, createMailWriter, type MailWriter } from '../../storage/index.js';
import { createEnforcement } from '../admin/index.js';
import { workerModule } from '../../storage/engine/worker-module.js';
import type { CoreDeps } from '../ports/index.js';
import type { MailStore } from '../messages/index.js';
import { DEFAULT_HEADER_LIMITS } from './header-section.js';
import { createMimeParser } from '../mime/index.js';
import { createInboundPipeline } from './stages/inbound-pipeline.js';
import { deliverOne } from './inbound-deliver.js';
import { storeFetchedMany } from './inbound-fetched.js';
import { checkRecipient } from './inbound-recipients.js';
import type {
  FetchedMessage,
  InboundDelivery,
  InboundMessage,
  InboundResult,
  InboundServiceOptions,
  InboundState,
} from './inbound-state.js';
import { writeDeliveries } from './inbound-write.js';

export {
  MAX_MESSAGE_BYTES,
  type FetchedMessage,
  type ImapLinkRow,
  type InboundDelivery,
  type InboundMessage,
  type InboundResult,
  type InboundServiceOptions,
  type RecipientCheck,
} from './inbound-state.js';

/**
 * Mail counts as flowing through this process for this long after a recipient was checked or a message delivered:
 * long enough to span the commands of an SMTP transaction and the gaps between a busy sender's messages.
 */
const MAIL_FLOWING_MS = 250;

/**
 * The module the mail writer thread prepares simple messages with (./ingest-prepare.ts, compiled next to this one in
 * the build): a writer made with it parses and builds their rows on its own thread. Pass it as `prepareModule` to a
 * writer given in {@link InboundServiceOptions}.
 */
export const INGEST_PREPARE_MODULE: URL = workerModule(import.meta.url, 'ingest-prepare');

/** Creates the inbound service. */
export function createInboundService(
  deps: CoreDeps,
  mailStore: MailStore,
  options: InboundServiceOptions = {},
): InboundService {
  const { db, clock, newId } = deps;
  const parser =
    options.parser ?? createMimeParser({ onCrash: (reason) => options.onThreadExit?.('mime parser', reason) });
  const pipeline = createInboundPipeline(deps, {
    enforcement: options.enforcement ?? createEnforcement(deps),
    stages: options.stages ?? {},
    parser,
  });
  const commit: InboundState['commit'] = createGroupCommit(
    db,
    (tx, deliveries) => writeDeliveries(inbound, tx, deliveries),
    {
      moreComing: () => inbound.parsing > 0,
    },
  );
  let writer = options.writer;
  const inbound: InboundState = {
    db,
    clock,
    newId,
    logger: deps.logger,
    mailStore,
    options,
    headerLimits: deps.config.headerLimits ?? DEFAULT_HEADER_LIMITS,
    pipeline,
    parser,
    commit,
    mailWriter: (): MailWriter =>
      (writer ??= createMailWriter(db, {
        prepareModule: INGEST_PREPARE_MODULE,
        onExit: (reason) => options.onThreadExit?.('mail writer', reason),
      })),
    parsing: 0,
    followUps: new Set(),
    lastMail: -Infinity,
    found: new Map(),
  };
  /** Deliveries under way: see {@link MAIL_FLOWING_MS}. */
  let delivering = 0;

  return {
    checkRecipient: (address: string, envelope?: { mailFrom: string; size?: number | undefined }) =>
      checkRecipient(inbound, address, envelope),

    /** Whether mail is flowing through this process now: a delivery under way, or a recipient or delivery in the last moments. */
    flowing: (): boolean => delivering > 0 || performance.now() - inbound.lastMail < MAIL_FLOWING_MS,

    /**
     * Stores a message for each hosted recipient, in one transaction; resolves after it committed. Malformed MIME
     * is stored raw with its parse error. Throws `not_found` when no recipient is hosted here and
     * `payload_too_large` over {@link MAX_MESSAGE_BYTES}; a storage failure rejects and stores nothing.
     */
    async deliverInbound(input: InboundMessage): Promise<InboundResult> {
      delivering++;
      try {
        return await deliverOne(inbound, input);
      } finally {
        delivering--;
        inbound.lastMail = performance.now();
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
      const [outcome] = await storeFetchedMany(inbound, [message]);
      if (outcome!.status === 'rejected') throw outcome!.reason;
      return outcome!.value;
    },

    storeFetchedMany: (fetched: readonly FetchedMessage[]) => storeFetchedMany(inbound, fetched),

    /** Parses a message on the parser pool (never on the event loop). */
    parse: (raw: Buffer) => inbound.parser.parse(raw),

    /**
     * Starts the mail writer thread now (an embedded database only) rather than at the first message: when the
     * service starts, in the roles that store mail. Resolves once it has loaded; never rejects.
     */
    warm(): Promise<void> {
      return db.file ? inbound.mailWriter().warm() : Promise.resolve();
    },

    /** Writes the rule-evaluation rows still waiting (tests; shutdown). */
    flushEvaluations: () => inbound.pipeline.flush(),

    /** Stops the parser's worker threads and, once the writes and follow-ups under way are done, the mail writer thread. */
    async close() {
      await Promise.all([parser.close(), writer?.close(), ...inbound.followUps]);
    },
  };
}

export type { InboundService } from './contracts.js';
