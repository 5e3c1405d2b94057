/**
 * @module imap/outgoing-push
 * The `imap.push` job of the outgoing side (./outgoing.ts): flags and moves, deletes for good, the current version
 * of a draft in Drafts, the sent copy in Sent; in the grant's order, retried with back-off until given up.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { type Job, type JobOutcome, defaultBackoffMs, earlierJobRunAt } from '../jobs/index.js';
import { loadRaw } from '../messages/index.js';
import { failureOf } from './connection.js';
import { inMailbox, link, pathOf, unlink, withImap } from './outgoing-imap.js';
import { GIVE_UP_MS, RETRY_CAP_MS, type LinkRow, type OutgoingState, type PushPayload } from './outgoing-state.js';

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

/** Flags and moves: each linked message where it is now. */
export async function pushChange(state: OutgoingState, payload: Extract<PushPayload, { op: 'change' }>): Promise<void> {
  const grantId = payload.grant_id;
  const links = await state.db.orm
    .select()
    .from(imapMessages)
    .where(and(eq(imapMessages.grantId, grantId), inArray(imapMessages.messageId, payload.message_ids)));
  if (links.length === 0) return;
  const folderRows = await state.db.orm
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
    state.logger.warn('imap: none of the folders of a change exists on the server; not moved', {
      grant_id: grantId,
      folders: wanted,
    });
  const byPath = new Map<string, LinkRow[]>();
  for (const row of links) byPath.set(row.path, [...(byPath.get(row.path) ?? []), row]);
  await withImap(state, grantId, async (client) => {
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
        const moving = target !== undefined && target !== path && !(current !== undefined && wanted?.includes(current));
        if (!moving) {
          // What the server has now, so the sync sees no change to bring back.
          await state.db.write(async (tx) => {
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
        await state.db.write(async (tx) => {
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
export async function expunge(
  state: OutgoingState,
  grantId: string,
  links: { path: string; uid: number }[],
): Promise<void> {
  const byPath = new Map<string, number[]>();
  for (const entry of links) byPath.set(entry.path, [...(byPath.get(entry.path) ?? []), entry.uid]);
  await withImap(state, grantId, async (client) => {
    for (const [path, uids] of byPath) {
      await inMailbox(client, path, async () => {
        await client.messageDelete(uids, { uid: true });
      });
      await unlink(state, grantId, path, uids);
    }
  });
}

/** Leaves exactly the current version of a draft in Drafts (none when the draft is gone). */
export async function syncDraft(state: OutgoingState, payload: Extract<PushPayload, { op: 'draft' }>): Promise<void> {
  const grantId = payload.grant_id;
  const drafts = await pathOf(state, grantId, 'drafts');
  if (drafts === undefined) {
    state.logger.warn('imap: the account has no Drafts folder; the draft stays here only', {
      grant_id: grantId,
      draft_id: payload.draft_id,
    });
    return;
  }
  const [record] = await state.db.orm
    .select({ row: tables.messages })
    .from(tables.draftDetails)
    .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
    .where(and(eq(tables.draftDetails.grantId, grantId), eq(tables.draftDetails.id, payload.draft_id)))
    .limit(1);
  await withImap(state, grantId, async (client) => {
    let keep: number | undefined;
    if (record) {
      const [existing] = await state.db.orm
        .select()
        .from(imapMessages)
        .where(and(eq(imapMessages.messageId, record.row.id), eq(imapMessages.path, drafts)))
        .limit(1);
      if (existing) keep = existing.uid;
      else {
        const flags = ['\\Draft', '\\Seen'];
        const raw = draftMime(await loadRaw(state.db.orm, record.row), record.row.bccAddresses);
        const appended = await client.append(drafts, raw, flags, new Date(record.row.date * 1000));
        keep = appended ? appended.uid : undefined;
        if (keep !== undefined)
          await link(state, { grantId, path: drafts, uid: keep, messageId: record.row.id, flags });
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
        await unlink(state, grantId, drafts, stale);
      }
    });
  });
}

/** Keeps the sent copy in Sent (once: a copy already linked is not appended again). */
export async function appendSent(
  state: OutgoingState,
  payload: Extract<PushPayload, { op: 'append_sent' }>,
): Promise<void> {
  const grantId = payload.grant_id;
  const sent = await pathOf(state, grantId, 'sent');
  if (sent === undefined) {
    state.logger.warn('imap: the account has no Sent folder; the sent copy stays here only', {
      grant_id: grantId,
      message_id: payload.message_id,
    });
    return;
  }
  const [linked] = await state.db.orm
    .select({ uid: imapMessages.uid })
    .from(imapMessages)
    .where(eq(imapMessages.messageId, payload.message_id))
    .limit(1);
  if (linked) return;
  const [row] = await state.db.orm
    .select()
    .from(tables.messages)
    .where(eq(tables.messages.id, payload.message_id))
    .limit(1);
  if (!row) return;
  const raw = await loadRaw(state.db.orm, row);
  await withImap(state, grantId, async (client) => {
    const flags = ['\\Seen'];
    const appended = await client.append(sent, raw, flags, new Date(row.date * 1000));
    if (appended && appended.uid !== undefined)
      await link(state, { grantId, path: sent, uid: appended.uid, messageId: row.id, flags });
  });
}

/** The job of the grant enqueued before this one and still to run, if any (dead ones do not hold the line). */
export async function earlierJob(state: OutgoingState, job: Job): Promise<{ runAt: number } | undefined> {
  const runAt = await earlierJobRunAt(state.db.orm, job.orderKey, job.id);
  return runAt !== undefined ? { runAt } : undefined;
}

export async function push(state: OutgoingState, job: Job): Promise<JobOutcome> {
  const payload = job.payload as PushPayload;
  if (job.orderKey) {
    const earlier = await earlierJob(state, job);
    // Behind an earlier change of the grant: run after it (its retry time, or shortly, while it runs).
    if (earlier)
      return {
        type: 'retry',
        at: new Date(Math.max(earlier.runAt, state.nowMs()) + 250),
        error: 'waiting for an earlier change of this mailbox',
      };
  }
  try {
    if (payload.op === 'change') await pushChange(state, payload);
    else if (payload.op === 'expunge') await expunge(state, payload.grant_id, payload.links);
    else if (payload.op === 'draft') await syncDraft(state, payload);
    else if (payload.op === 'append_sent') await appendSent(state, payload);
    return { type: 'done' };
  } catch (error) {
    const message = failureOf(error)?.message ?? (error instanceof Error ? error.message : String(error));
    if (state.nowMs() - job.createdAt >= GIVE_UP_MS) {
      state.logger.error('imap: a change could not be pushed to the server and was given up', {
        job_id: job.id,
        grant_id: payload.grant_id,
        op: payload.op,
        error: message,
      });
      return { type: 'give_up', error: message };
    }
    state.logger.warn('imap: pushing a change failed; it will be retried', {
      job_id: job.id,
      grant_id: payload.grant_id,
      op: payload.op,
      error: message,
    });
    return {
      type: 'retry',
      at: new Date(state.nowMs() + Math.min(defaultBackoffMs(job.attempts), RETRY_CAP_MS)),
      error: message,
    };
  }
}
