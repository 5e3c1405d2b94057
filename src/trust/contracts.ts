/**
 * @module trust/contracts
 * The trust area's declared types: what {@link assessTrust} reads and what it answers (the wire shape lives in
 * src/schemas/trust.ts). Everything here is plain data the caller gathers: the area reads no table and no network.
 */
import type { StoredMessageVerdict } from '../../storage/index.js';
import type { ReadLink } from '../reading/index.js';
import type { Message } from '../schemas/messages.js';
import type { Trust, TrustAuthResult } from '../schemas/trust.js';

export type {
  DisplayNameSpoof,
  ForgedThread,
  Injection,
  LinkMismatch,
  LookalikeDomain,
  Trust,
  TrustAuthResult,
} from '../schemas/trust.js';

/** The authentication part of a message's stored verdict (`messages.verdict.authentication`), as ingest wrote it. */
export type StoredAuthentication = NonNullable<StoredMessageVerdict['authentication']>;

/** An address with its display name, as kept on a message (`messages.from_addresses`). */
export interface TrustAddress {
  email: string;
  name?: string | undefined;
}

/** The mailbox the message was delivered to. */
export interface TrustMailbox {
  /** The grant's own address. */
  email: string;
  /** Further domains of the organisation (the application's custom domains); the address's domain is included. */
  domains?: readonly string[] | undefined;
  /** The organisation's name as people write it ("Northwind Traders"), when known. */
  organisation?: string | undefined;
}

/** SPF, DKIM and DMARC as {@link authenticationVerdicts} reads them. */
export interface AuthenticationInput {
  /** The stored verdict of the inbound authentication stage; preferred when present. */
  stored?: StoredAuthentication | undefined;
  /**
   * The values of the message's `Authentication-Results` fields, topmost first (for mail that has no stored verdict:
   * IMAP-synced mail, whose provider wrote the topmost field). Only the topmost field is read, and only when its
   * authserv-id is one of {@link trustedAuthservIds}: any field below it may have been written by the sender.
   */
  headers?: readonly string[] | undefined;
  /** authserv-ids to believe: this service's MX host name (`config.mxHost`), a connected provider's (`mx.google.com`). */
  trustedAuthservIds?: readonly string[] | undefined;
}

/** Per-mechanism verdicts. */
export interface AuthenticationVerdicts {
  spf: TrustAuthResult;
  dkim: TrustAuthResult;
  dmarc: TrustAuthResult;
}

/** What {@link assessTrust} reads about one message. */
export interface TrustInput {
  authentication?: AuthenticationInput | undefined;
  /** The first From address (`messages.from_addresses[0]`); absent for mail without one. */
  from?: TrustAddress | undefined;
  /** The Reply-To addresses (`messages.reply_to_addresses`). */
  replyTo?: readonly TrustAddress[] | undefined;
  subject?: string | undefined;
  /** In-Reply-To without angle brackets, as `messages.in_reply_to` keeps it (compared in lower case). */
  inReplyTo?: string | null | undefined;
  /** References without angle brackets, as `messages.references` keeps them (compared in lower case). */
  references?: readonly string[] | undefined;
  /**
   * Whether this mailbox ever had a message with this normalised Message-ID (its messages' `header_message_id`, or the
   * ids its threads know). Asked only for the ids the message names, at most {@link MAX_REFERENCED_IDS}.
   */
  knownMessageId?: ((id: string) => boolean) | undefined;
  mailbox?: TrustMailbox | undefined;
  /** The mailbox's contacts and correspondents; at most {@link MAX_KNOWN_CONTACTS} are read. */
  knownContacts?: readonly TrustAddress[] | undefined;
  /** The body as a model reads it (text or Markdown), hidden text already removed. */
  text?: string | undefined;
  /**
   * The HTML body, for links when {@link links} is absent (then it is read here with src/reading's HTML reader);
   * absent for text-only mail.
   */
  html?: string | undefined;
  /** The body's visible links as src/reading's reader found them (`HtmlConversion.links`). */
  links?: readonly Pick<ReadLink, 'text' | 'url' | 'original'>[] | undefined;
  /** The hidden text the HTML conversion removed, itself (scanned for instructions: they weigh more there). */
  hiddenText?: string | undefined;
  /** How many characters of hidden text the conversion removed. */
  hiddenTextRemoved?: number | undefined;
}

/**
 * Characters of the body's text scanned for injection at most: the scan reads about 3–4 MB/s, so a prefix of 64 Ki
 * characters costs at most ~20 ms however long the mail (instructions aimed at a model come early, where a summary
 * reads; what hides further down is still in the hidden text, scanned apart).
 */
export const MAX_INJECTION_SCAN = 64 * 1024;
/**
 * Characters of HTML read for the trust checks at most: src/reading's reader takes about 1 ms per 1–2 KB of marketing
 * HTML, so 256 Ki characters cost at most ~200 ms once per message (the verdicts are then kept); links and hidden text
 * past it are not judged.
 */
export const MAX_TRUST_HTML = 256 * 1024;
/** Characters of hidden text scanned at most (src/reading keeps at most 16 KiB of it). */
export const MAX_HIDDEN_SCAN = 16 * 1024;

/** Referenced ids looked up at most per message (References of a long thread are long; the newest count). */
export const MAX_REFERENCED_IDS = 100;
/** Contacts read at most: the comparison is linear in them, and a mailbox's few thousand correspondents fit. */
export const MAX_KNOWN_CONTACTS = 5_000;

/** What {@link assessTrust} answers: the wire block. */
export type TrustAssessment = Trust;

/** The mailbox a {@link TrustReader} reads for: the grant's id and its address. */
export interface TrustGrant {
  id: string;
  email: string;
}

/** A message as the reader takes it: its wire form (what a read already made). */
export type TrustMessage = Pick<Message, 'id' | 'subject' | 'from' | 'reply_to' | 'body' | 'authentication_results'>;

/** What createTrustReader() returns (src/trust/trust-reader.ts): the `trust` block of stored messages, at read time. */
export interface TrustReader {
  /**
   * The `trust` block of each of a mailbox's messages, by message id. Reads the mailbox's known contacts (kept for a
   * moment per mailbox), the messages' references and which of them the mailbox had; the body's verdicts are kept
   * per message (its body never changes).
   */
  assess(grant: TrustGrant, messages: readonly TrustMessage[]): Promise<Map<string, Trust>>;
}
