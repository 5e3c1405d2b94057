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
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { tables, type Tx } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import { type Job, type JobOutcome, type JobQueue, defaultBackoffMs, earlierJobRunAt } from '../jobs/index.js';
import { loadRaw } from '../messages/index.js';
import type { AttemptResult } from '../outbound/contracts.js';
import {
  IMAP_PROVIDER,
  type DraftRef,
  type MailboxProvider,
  type MailboxSync,
  type PendingRecipient,
  type ProviderGrant,
} from '../providers/contracts.js';
import { createConnector, endpointsOf, failureOf, SubmissionError, type Connector } from './connection.js';

/** The job kind of every change pushed to an account's IMAP server. */
export const IMAP_PUSH_JOB = 'imap.push';

/** Longest wait between two attempts of a job whose server fails. */
export const RETRY_CAP_MS = 30 * 60_000;

/** A job still failing this long after it was made is given up (logged, kept dead in the jobs table). */
export const GIVE_UP_MS = 3 * 24 * 60 * 60_000;

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

/** What an `imap.push` job does. */
export type PushPayload =
  | { op: 'change'; grant_id: string; message_ids: string[]; seen?: boolean; flagged?: boolean; folders?: string[] }
  | { op: 'expunge'; grant_id: string; links: { path: string; uid: number }[] }
  | { op: 'draft'; grant_id: string; draft_id: string; header_message_id: string }
  | { op: 'append_sent'; grant_id: string; message_id: string };

type AccountRow = typeof imapAccounts.$inferSelect;
type LinkRow = typeof imapMessages.$inferSelect;

/** Parts the IMAP provider uses. */
export interface ImapOutgoingParts {
  jobs: Pick<JobQueue, 'enqueueIn'>;
  /** Default: a connector of its own under `config.imap` (share the sync's, so both count against one slot limit). */
  connector?: Connector;
  /** The sync in of connected accounts (built by the sync side), exposed as the provider's `sync`. */
  sync?: MailboxSync;
}

/**
 * A draft's MIME as kept on the server: the composed message plus a `Bcc` field (the composer leaves Bcc out of
 * what it sends, but a draft opened in another client must still have its blind copies).
 */
export function draftMime(raw: Buffer, bcc: readonly { email: string }[]): Buffer {
  const addresses = bcc.map((entry) => entry.email.replace(/[\r\n,<>]/g, '')).filter((email) => email !== '');
  if (addresses.length === 0) return raw;
  return Buffer.concat([Buffer.from(`Bcc: ${addresses.join(', ')}\r\n`), raw]);
}

/** Flags after adding or removing one. */
function withFlag(flags: readonly string[], flag: string, on: boolean | undefined): string[] {
  if (on === undefined) return [...flags];
  const rest = flags.filter((entry) => entry.toLowerCase() !== flag.toLowerCase());
  return on ? [...rest, flag] : rest;
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

  async function accountOf(grantId: string): Promise<AccountRow | undefined> {
    const [row] = await db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId)).limit(1);
    return row;
  }

  function endpoints(account: AccountRow) {
    if (!deps.secrets)
      throw new AppError('internal', 'No secret box (AGENTPOST_SECRET_KEY) to open the account passwords with.');
    return endpointsOf(account, deps.secrets);
  }

  /** The IMAP path of one of the grant's folders, when it has one on the server. */
  async function pathOf(grantId: string, folderId: string): Promise<string | undefined> {
    const [row] = await db.orm
      .select({ path: imapFolders.path })
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, folderId)))
      .limit(1);
    return row?.path;
  }

  /** Runs `work` on a logged-in connection to the account's IMAP server (none when the account is gone). */
  async function withImap(grantId: string, work: (client: ImapFlow) => Promise<void>): Promise<void> {
    const account = await accountOf(grantId);
    if (!account) return;
    const session = await connector.openImap(endpoints(account).imap);
    try {
      await work(session.client);
    } finally {
      await session.close();
    }
  }

  /** Runs `work` with `path` selected. */
  async function inMailbox(client: ImapFlow, path: string, work: () => Promise<void>): Promise<void> {
    const lock = await client.getMailboxLock(path);
    try {
      await work();
    } finally {
      lock.release();
    }
  }

  /** Removes the links of expunged UIDs (the rows may be gone already: the link cascades with its message). */
  async function unlink(grantId: string, path: string, uids: number[]): Promise<void> {
    if (uids.length === 0) return;
    await db.write((tx) =>
      tx
        .delete(imapMessages)
        .where(and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, path), inArray(imapMessages.uid, uids))),
    );
  }

  /** Records a link when its message still exists (it may have been deleted while the job ran). */
  async function link(row: Omit<LinkRow, 'modseq'>): Promise<void> {
    await db.write(async (tx) => {
      const [message] = await tx
        .select({ id: tables.messages.id })
        .from(tables.messages)
        .where(eq(tables.messages.id, row.messageId))
        .limit(1);
      if (!message) return;
      await tx
        .insert(imapMessages)
        .values(row)
        .onConflictDoUpdate({
          target: [imapMessages.grantId, imapMessages.path, imapMessages.uid],
          set: { messageId: row.messageId, flags: row.flags },
        });
    });
  }

  /** Flags and moves: each linked message where it is now. */
  async function pushChange(payload: Extract<PushPayload, { op: 'change' }>): Promise<void> {
    const grantId = payload.grant_id;
    const links = await db.orm
      .select()
      .from(imapMessages)
      .where(and(eq(imapMessages.grantId, grantId), inArray(imapMessages.messageId, payload.message_ids)));
    if (links.length === 0) return;
    const folderRows = await db.orm
      .select({ path: imapFolders.path, folderId: imapFolders.folderId })
      .from(imapFolders)
      .where(eq(imapFolders.grantId, grantId));
    const folderOfPath = new Map(folderRows.map((row) => [row.path, row.folderId]));
    // The first of the new folders that exists on the server is where the message goes.
    const wanted = payload.folders;
    const target = wanted
      ? wanted.map((id) => folderRows.find((row) => row.folderId === id)?.path).find((path) => path !== undefined)
      : undefined;
    if (wanted && target === undefined)
      logger.warn('imap: none of the folders of a change exists on the server; not moved', {
        grant_id: grantId,
        folders: wanted,
      });
    const byPath = new Map<string, LinkRow[]>();
    for (const row of links) byPath.set(row.path, [...(byPath.get(row.path) ?? []), row]);
    await withImap(grantId, async (client) => {
      for (const [path, group] of byPath) {
        const uids = group.map((row) => row.uid);
        await inMailbox(client, path, async () => {
          if (payload.seen !== undefined) {
            if (payload.seen) await client.messageFlagsAdd(uids, ['\\Seen'], { uid: true });
            else await client.messageFlagsRemove(uids, ['\\Seen'], { uid: true });
          }
          if (payload.flagged !== undefined) {
            if (payload.flagged) await client.messageFlagsAdd(uids, ['\\Flagged'], { uid: true });
            else await client.messageFlagsRemove(uids, ['\\Flagged'], { uid: true });
          }
          const flagsOf = new Map(
            group.map((row) => [
              row.uid,
              withFlag(withFlag(row.flags, '\\Seen', payload.seen), '\\Flagged', payload.flagged),
            ]),
          );
          const current = folderOfPath.get(path);
          const moving =
            target !== undefined && target !== path && !(current !== undefined && wanted?.includes(current));
          if (!moving) {
            // What the server has now, so the sync sees no change to bring back.
            await db.write(async (tx) => {
              for (const row of group)
                await tx
                  .update(imapMessages)
                  .set({ flags: flagsOf.get(row.uid)! })
                  .where(
                    and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, path), eq(imapMessages.uid, row.uid)),
                  );
            });
            return;
          }
          const moved = await client.messageMove(uids, target, { uid: true });
          const uidMap = moved ? moved.uidMap : undefined;
          await db.write(async (tx) => {
            await tx
              .delete(imapMessages)
              .where(
                and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, path), inArray(imapMessages.uid, uids)),
              );
            for (const row of group) {
              const uid = uidMap?.get(row.uid);
              // Without COPYUID the new UID is unknown: the link goes, and the sync links the message it finds there.
              if (uid !== undefined)
                await tx
                  .insert(imapMessages)
                  .values({ grantId, path: target, uid, messageId: row.messageId, flags: flagsOf.get(row.uid)! })
                  .onConflictDoNothing();
            }
          });
        });
      }
    });
  }

  /** Deletes for good: `\Deleted` + UID EXPUNGE (imapflow uses UID EXPUNGE when the server has UIDPLUS). */
  async function expunge(grantId: string, links: { path: string; uid: number }[]): Promise<void> {
    const byPath = new Map<string, number[]>();
    for (const entry of links) byPath.set(entry.path, [...(byPath.get(entry.path) ?? []), entry.uid]);
    await withImap(grantId, async (client) => {
      for (const [path, uids] of byPath) {
        await inMailbox(client, path, async () => {
          await client.messageDelete(uids, { uid: true });
        });
        await unlink(grantId, path, uids);
      }
    });
  }

  /** Leaves exactly the current version of a draft in Drafts (none when the draft is gone). */
  async function syncDraft(payload: Extract<PushPayload, { op: 'draft' }>): Promise<void> {
    const grantId = payload.grant_id;
    const drafts = await pathOf(grantId, 'drafts');
    if (drafts === undefined) {
      logger.warn('imap: the account has no Drafts folder; the draft stays here only', {
        grant_id: grantId,
        draft_id: payload.draft_id,
      });
      return;
    }
    const [record] = await db.orm
      .select({ row: tables.messages })
      .from(tables.draftDetails)
      .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
      .where(and(eq(tables.draftDetails.grantId, grantId), eq(tables.draftDetails.id, payload.draft_id)))
      .limit(1);
    await withImap(grantId, async (client) => {
      let keep: number | undefined;
      if (record) {
        const [existing] = await db.orm
          .select()
          .from(imapMessages)
          .where(and(eq(imapMessages.messageId, record.row.id), eq(imapMessages.path, drafts)))
          .limit(1);
        if (existing) keep = existing.uid;
        else {
          const flags = ['\\Draft', '\\Seen'];
          const raw = draftMime(await loadRaw(db.orm, record.row), record.row.bccAddresses);
          const appended = await client.append(drafts, raw, flags, new Date(record.row.date * 1000));
          keep = appended ? appended.uid : undefined;
          if (keep !== undefined) await link({ grantId, path: drafts, uid: keep, messageId: record.row.id, flags });
        }
      }
      await inMailbox(client, drafts, async () => {
        const found =
          (await client.search({ header: { 'message-id': `<${payload.header_message_id}>` } }, { uid: true })) || [];
        // Without APPENDUID the new copy's UID is unknown: the newest one with the Message-ID is kept.
        if (record && keep === undefined && found.length > 0) keep = Math.max(...found);
        const stale = found.filter((uid) => uid !== keep);
        if (stale.length > 0) {
          await client.messageDelete(stale, { uid: true });
          await unlink(grantId, drafts, stale);
        }
      });
    });
  }

  /** Keeps the sent copy in Sent (once: a copy already linked is not appended again). */
  async function appendSent(payload: Extract<PushPayload, { op: 'append_sent' }>): Promise<void> {
    const grantId = payload.grant_id;
    const sent = await pathOf(grantId, 'sent');
    if (sent === undefined) {
      logger.warn('imap: the account has no Sent folder; the sent copy stays here only', {
        grant_id: grantId,
        message_id: payload.message_id,
      });
      return;
    }
    const [linked] = await db.orm
      .select({ uid: imapMessages.uid })
      .from(imapMessages)
      .where(eq(imapMessages.messageId, payload.message_id))
      .limit(1);
    if (linked) return;
    const [row] = await db.orm
      .select()
      .from(tables.messages)
      .where(eq(tables.messages.id, payload.message_id))
      .limit(1);
    if (!row) return;
    const raw = await loadRaw(db.orm, row);
    await withImap(grantId, async (client) => {
      const flags = ['\\Seen'];
      const appended = await client.append(sent, raw, flags, new Date(row.date * 1000));
      if (appended && appended.uid !== undefined)
        await link({ grantId, path: sent, uid: appended.uid, messageId: row.id, flags });
    });
  }

  /** The job of the grant enqueued before this one and still to run, if any (dead ones do not hold the line). */
  async function earlierJob(job: Job): Promise<{ runAt: number } | undefined> {
    const runAt = await earlierJobRunAt(db.orm, job.orderKey, job.id);
    return runAt !== undefined ? { runAt } : undefined;
  }

  async function push(job: Job): Promise<JobOutcome> {
    const payload = job.payload as PushPayload;
    if (job.orderKey) {
      const earlier = await earlierJob(job);
      // Behind an earlier change of the grant: run after it (its retry time, or shortly, while it runs).
      if (earlier)
        return {
          type: 'retry',
          at: new Date(Math.max(earlier.runAt, nowMs()) + 250),
          error: 'waiting for an earlier change of this mailbox',
        };
    }
    try {
      if (payload.op === 'change') await pushChange(payload);
      else if (payload.op === 'expunge') await expunge(payload.grant_id, payload.links);
      else if (payload.op === 'draft') await syncDraft(payload);
      else if (payload.op === 'append_sent') await appendSent(payload);
      return { type: 'done' };
    } catch (error) {
      const message = failureOf(error)?.message ?? (error instanceof Error ? error.message : String(error));
      if (nowMs() - job.createdAt >= GIVE_UP_MS) {
        logger.error('imap: a change could not be pushed to the server and was given up', {
          job_id: job.id,
          grant_id: payload.grant_id,
          op: payload.op,
          error: message,
        });
        return { type: 'give_up', error: message };
      }
      logger.warn('imap: pushing a change failed; it will be retried', {
        job_id: job.id,
        grant_id: payload.grant_id,
        op: payload.op,
        error: message,
      });
      return {
        type: 'retry',
        at: new Date(nowMs() + Math.min(defaultBackoffMs(job.attempts), RETRY_CAP_MS)),
        error: message,
      };
    }
  }

  /** One submission attempt through the account's SMTP server. */
  async function submit(
    outbound: { grantId: string | null; envelopeFrom: string },
    pending: PendingRecipient[],
    raw: Buffer,
  ): Promise<AttemptResult[]> {
    const emails = pending.map((recipient) => recipient.email);
    const all = (
      outcome: AttemptResult['outcome'],
      code: number,
      response: string,
      cause?: AttemptResult['cause'],
    ): AttemptResult[] =>
      emails.map((email) => ({ email, outcome, code, response: response.slice(0, 1000), ...(cause ? { cause } : {}) }));
    const account = outbound.grantId ? await accountOf(outbound.grantId) : undefined;
    if (!account) return all('failed', 550, '5.3.0 the connected account of this grant no longer exists', 'account');
    let smtp;
    try {
      smtp = endpoints(account).smtp;
    } catch (error) {
      return all('deferred', 451, `4.3.0 ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      const result = await connector.submit(smtp, { from: outbound.envelopeFrom, to: emails }, raw);
      const accepted = new Set(result.accepted);
      const rejected = new Map(result.rejected.map((entry) => [entry.recipient, entry]));
      return emails.map((email) => {
        if (accepted.has(email))
          return { email, outcome: 'delivered', code: 250, response: result.response.slice(0, 1000) };
        const rejection = rejected.get(email);
        const code = rejection?.code ?? 0;
        return {
          email,
          outcome: code >= 500 ? 'failed' : 'deferred',
          code,
          response: (rejection?.response ?? 'not accepted by the server').slice(0, 1000),
        };
      });
    } catch (error) {
      if (!(error instanceof SubmissionError)) throw error;
      const { failure, code } = error;
      // A refused login or certificate is the account's trouble, not the recipients': the send fails, no bounce is recorded.
      if (failure.kind === 'auth' || failure.kind === 'tls')
        return all('failed', code ?? 535, failure.message, 'account');
      if (error.rejected.length > 0) {
        const rejected = new Map(error.rejected.map((entry) => [entry.recipient, entry]));
        return emails.map((email) => {
          const rejection = rejected.get(email);
          const reply = rejection?.code ?? code ?? 0;
          return {
            email,
            outcome: reply >= 500 ? 'failed' : 'deferred',
            code: reply,
            response: (rejection?.response ?? failure.message).slice(0, 1000),
          };
        });
      }
      if (code !== undefined && code >= 500) return all('failed', code, failure.message);
      return all('deferred', code ?? 0, failure.message);
    }
  }

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
      submit,
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
    handlers: { [IMAP_PUSH_JOB]: push },
  };
}
