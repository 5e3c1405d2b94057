/**
 * @module imap/outgoing
 * The outgoing side of a connected IMAP/SMTP account (`provider: "imap"`): what the API changes reaches the
 * account's servers.
 *
 * - **Changes out.** A flag, folder or delete change made through the API records an `imap.push` job in the same
 *   transaction (durable: a change is pushed if and only if it was made). The job, run later by the worker, sets
 *   `\Seen` / `\Flagged`, MOVEs (UID MOVE) to the folder's IMAP path, moves deleted mail to Trash, and deletes for
 *   good with `\Deleted` + UID EXPUNGE. It reads the message's `imap_messages` link when it runs, so a change after
 *   a move finds the message where the move put it: a move relinks the message to its new UID (COPYUID/MOVE
 *   response), and the sync skips UIDs already linked, so the moved copy is not imported again.
 * - **Drafts.** Saving a draft (create, update, a scheduled send held as a draft) records a job that APPENDs its
 *   current version to the Drafts folder with `\Draft \Seen`, links the APPENDUID to the version's row, and then
 *   removes (`\Deleted` + UID EXPUNGE) every other message in Drafts with the draft's Message-ID: the draft keeps
 *   its Message-ID across versions, which is also how the sync recognises a version edited in another client.
 *   Removing a draft (deleted, or sent) removes its copies the same way. The job works from the draft's state when
 *   it runs, so jobs run late or twice still leave exactly the current version on the server.
 * - **Order.** Every job of one grant carries the order key `imap <grant id>`; a job runs only once the jobs of
 *   its grant enqueued before it are done (else it waits for them), so a grant's changes apply in the order made.
 * - **Failures.** A server that cannot be reached (or refuses the login) is retried with back-off
 *   ({@link RETRY_CAP_MS} at most between attempts) for {@link GIVE_UP_MS}; then the job is given up and logged.
 * - **Sending** goes through the account's SMTP server ({@link Submitter}: the outbound queue's `submission`
 *   route), and the sent copy is APPENDed to Sent with `\Seen` and linked, unless the server files it itself
 *   ({@link serverFilesSent}).
 *
 * The provider is plain functions over a small state made here (./outgoing-state.ts): the push job
 * (./outgoing-push.ts), the submission (./outgoing-submit.ts) and the account's connection and links
 * (./outgoing-imap.ts).
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { Tx } from '../../storage/index.js';
import { imapAccounts, imapMessages } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import type { JobQueue } from '../jobs/index.js';
import {
  IMAP_PROVIDER,
  type DraftRef,
  type MailboxProvider,
  type MailboxSync,
  type ProviderGrant,
} from '../providers/contracts.js';
import { createConnector, type Connector } from './connection.js';
import { push } from './outgoing-push.js';
import { IMAP_PUSH_JOB, type OutgoingState, type PushPayload } from './outgoing-state.js';
import { submit } from './outgoing-submit.js';

export { draftMime } from './outgoing-push.js';
export { GIVE_UP_MS, IMAP_PUSH_JOB, RETRY_CAP_MS, type PushPayload } from './outgoing-state.js';

/** Hosts (suffixes) whose SMTP server puts a copy of what it sends into Sent itself (Gmail, Outlook/Microsoft 365). */
const FILING_HOSTS = ['gmail.com', 'googlemail.com', 'outlook.com', 'office365.com', 'hotmail.com', 'live.com'];

/**
 * Whether the account's SMTP server files the sent copy itself, so we must not APPEND one: `server_files_sent` when
 * the account says, else known hosts that do (Gmail, Microsoft); any other server gets our copy.
 */
export function serverFilesSent(account: { serverFilesSent: boolean | null; smtpHost: string }): boolean {
  if (account.serverFilesSent !== null) return account.serverFilesSent;
  const host = account.smtpHost.toLowerCase();
  return FILING_HOSTS.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/** Parts the IMAP provider uses. */
export interface ImapOutgoingParts {
  jobs: Pick<JobQueue, 'enqueueIn'>;
  /** Default: a connector of its own under `config.imap` (share the sync's, so both count against one slot limit). */
  connector?: Connector;
  /** The sync in of connected accounts (built by the sync side), exposed as the provider's `sync`. */
  sync?: MailboxSync;
}

/** Creates the provider of connected IMAP/SMTP accounts (outgoing side; the sync plugs in as `sync`). */
export function createImapOutgoing(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'secrets'>,
  parts: ImapOutgoingParts,
): MailboxProvider {
  const { db, clock, logger, config } = deps;
  const connector = parts.connector ?? createConnector(config);
  const nowMs = () => clock.now().getTime();

  async function enqueue(tx: Tx, payload: PushPayload): Promise<void> {
    await parts.jobs.enqueueIn(tx, { kind: IMAP_PUSH_JOB, payload, orderKey: `imap ${payload.grant_id}` });
  }

  const state: OutgoingState = { db, logger, deps, connector, nowMs };

  return {
    name: IMAP_PROVIDER,
    ...(parts.sync ? { sync: parts.sync } : {}),
    async changed(tx: Tx, grant: ProviderGrant, rows, changes) {
      if (rows.length === 0) return;
      const seen = changes.unread === undefined ? undefined : !changes.unread;
      if (seen === undefined && changes.starred === undefined && changes.folders === undefined) return;
      await enqueue(tx, {
        op: 'change',
        grant_id: grant.id,
        message_ids: rows.map((row) => row.id),
        ...(seen !== undefined ? { seen } : {}),
        ...(changes.starred !== undefined ? { flagged: changes.starred } : {}),
        ...(changes.folders !== undefined ? { folders: changes.folders } : {}),
      });
    },
    async destroying(tx: Tx, grant: ProviderGrant, rows) {
      if (rows.length === 0) return;
      const links = await tx
        .select({ path: imapMessages.path, uid: imapMessages.uid })
        .from(imapMessages)
        .where(
          and(
            eq(imapMessages.grantId, grant.id),
            inArray(
              imapMessages.messageId,
              rows.map((row) => row.id),
            ),
          ),
        );
      if (links.length > 0) await enqueue(tx, { op: 'expunge', grant_id: grant.id, links });
    },
    async draftSaved(tx: Tx, grant: ProviderGrant, draft: DraftRef) {
      await enqueue(tx, {
        op: 'draft',
        grant_id: grant.id,
        draft_id: draft.draftId,
        header_message_id: draft.headerMessageId,
      });
    },
    async draftRemoved(tx: Tx, grant: ProviderGrant, draft: DraftRef) {
      await enqueue(tx, {
        op: 'draft',
        grant_id: grant.id,
        draft_id: draft.draftId,
        header_message_id: draft.headerMessageId,
      });
    },
    submitter: {
      submit: (outbound, pending, raw) => submit(state, outbound, pending, raw),
      async submitted(tx, outbound) {
        if (!outbound.grantId || !outbound.messageId) return;
        const [account] = await tx
          .select({ serverFilesSent: imapAccounts.serverFilesSent, smtpHost: imapAccounts.smtpHost })
          .from(imapAccounts)
          .where(eq(imapAccounts.grantId, outbound.grantId))
          .limit(1);
        if (!account || serverFilesSent(account)) return;
        await enqueue(tx, { op: 'append_sent', grant_id: outbound.grantId, message_id: outbound.messageId });
      },
    },
    handlers: { [IMAP_PUSH_JOB]: (job) => push(state, job) },
  };
}
