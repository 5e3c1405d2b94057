/**
 * @module providers/contracts
 * The provider seam: what differs between the kinds of mailbox a grant can be. The hosted mailbox (`nylas`, our
 * own store and MX) and a connected IMAP/SMTP account (`imap`) answer the same API through the same routes, tools
 * and services; only these steps differ, and the services call them on the provider of the grant
 * (./index.ts chooses by `grant.provider`):
 *
 * - **sync in**: mail that reaches the mailbox elsewhere (an IMAP server) is brought into the store; the hosted
 *   mailbox needs none (mail arrives through our MX);
 * - **changes out**: flags, folders and deletions made through the API reach the server;
 * - **drafts**: saving, replacing and removing a draft on the server;
 * - **sending**: how a send leaves (our relay/MX, or the account's own SMTP server) and where the sent copy is kept.
 *
 * Every `changed`/`destroying`/`draft*` hook runs INSIDE the caller's write transaction, so whatever it records (a
 * durable job) exists if and only if the change does; none of them talks to a server there.
 */
import type { GrantRow, Tx } from '../../storage/index.js';
import type { JobHandler } from '../jobs/index.js';
import type { MessageChanges, MessageRow } from '../messages/contracts.js';
import type { AttemptResult, OutboundRow } from '../outbound/contracts.js';

/** The `grant.provider` value of hosted Agent Accounts (the spec's `hosted` is accepted as an alias). */
export const HOSTED_PROVIDER = 'nylas';

/** The `grant.provider` value of connected IMAP/SMTP accounts (src/imap/). */
export const IMAP_PROVIDER = 'imap';

/** What a provider needs to know of a grant. */
export type ProviderGrant = Pick<GrantRow, 'id' | 'provider'>;

/** A draft as the provider sees it: its stable id, the row of its current version and its Message-ID (kept across versions). */
export interface DraftRef {
  draftId: string;
  grantId: string;
  /** The `messages` row of the version (the current one when saved; the last one when removed). */
  messageId: string;
  /** Without angle brackets; the same for every version of the draft. */
  headerMessageId: string;
}

/** Recipients of one send still owed the message, as the outbound queue keeps them. */
export interface PendingRecipient {
  email: string;
}

/**
 * Sending through the account's own server (a submission): the outbound queue calls it in place of MX/relay
 * delivery for the recipients of a grant whose provider has one.
 */
export interface Submitter {
  /** One attempt for every recipient still owed the message; never throws (a failure is a result per recipient). */
  submit(outbound: OutboundRow, pending: PendingRecipient[], raw: Buffer): Promise<AttemptResult[]>;
  /** In the transaction that records an attempt that delivered to someone: keep the sent copy on the server. */
  submitted(tx: Tx, outbound: OutboundRow): Promise<void>;
}

/**
 * The sync of a mailbox kind whose mail lives on another server (IMAP). Built by the sync side (issue 19); a
 * provider without one has nothing to sync (the hosted mailbox).
 */
export interface MailboxSync {
  /** One pass over the grant's mailbox (new mail, flag changes, deletions). */
  run(grantId: string, signal?: AbortSignal): Promise<void>;
}

/** What differs between mailbox kinds. */
export interface MailboxProvider {
  /** The `grant.provider` value it serves (`nylas`, `imap`). */
  readonly name: string;
  /** Sync in; absent for the hosted mailbox. */
  readonly sync?: MailboxSync | undefined;
  /** Sending through the account's own server; absent: our relay/MX and local delivery (hosted). */
  readonly submitter?: Submitter | undefined;
  /** Inside the transaction that applied `changes` to `rows` (the rows as changed). */
  changed(tx: Tx, grant: ProviderGrant, rows: MessageRow[], changes: MessageChanges): Promise<void>;
  /** Inside the transaction that deletes `rows` for good, BEFORE they are deleted (their server links still exist). */
  destroying(tx: Tx, grant: ProviderGrant, rows: MessageRow[]): Promise<void>;
  /** Inside the transaction that wrote a version of a draft (created, updated or held for a scheduled send). */
  draftSaved(tx: Tx, grant: ProviderGrant, draft: DraftRef): Promise<void>;
  /** Inside the transaction that removes a draft (deleted, or sent). */
  draftRemoved(tx: Tx, grant: ProviderGrant, draft: DraftRef): Promise<void>;
  /** Background job handlers by kind (spread into `core.jobs.handlers`). */
  readonly handlers: Record<string, JobHandler>;
}

/**
 * How the grant service connects an account that lives on another server (IMAP/SMTP), without knowing its kind: it
 * reads the settings of a `create`, logs in before anything is stored, and stores the account beside the grant, in
 * the transaction that writes the grant. One per connected kind (`imap`: src/imap/accounts.ts).
 */
export interface ConnectedAccounts {
  /** The `grant.provider` value of the grants it connects. */
  readonly name: string;
  /** Reads the `settings` of a create request (a 400 for what is wrong with them): the account's address and login. */
  parse(settings: unknown): AccountRequest;
  /** The first key of `settings` that only connecting the account again may change (an update naming it is refused). */
  reconnectOnly(settings: Record<string, unknown>): string | undefined;
}

/** A request to connect an account, read and not yet tried. */
export interface AccountRequest {
  /** The account's address, lower-cased: the grant's `email`. */
  readonly email: string;
  /** Logs in to the account's servers (a 400 with the server's own reason at the first refusal); stores nothing. */
  login(): Promise<AccountLogin>;
}

/** An account whose logins succeeded. */
export interface AccountLogin {
  /**
   * Inside the grant's write transaction: stores the account of grant `grantId`. `reconnect`: the grant exists, so
   * the account it has (if any) gets the new servers and credentials, its failures cleared and a sync stopped on
   * refused logins started over.
   */
  save(tx: Tx, grantId: string, options: { reconnect: boolean; atMs: number }): Promise<void>;
}
