/**
 * @module admin/policy-upkeep
 * The periodic work policies ask for, run by the background role with the retention purge (jobs/background.ts):
 * - `limit_inbox_retention_period` / `limit_spam_retention_period` (days): messages of a mailbox under the policy
 *   that are in `inbox` (resp. `junk`) and were received longer ago than that are deleted for good, through the
 *   message service's delete (`destroyForGood`: thread aggregates, attachments, raw MIME and `message.deleted`
 *   webhooks as for any delete). Times come from the injected clock.
 * - `options.additional_folders`: each mailbox under the policy gets the folders it lacks (by name), with a
 *   `folder.created` event. New mailboxes get them when they are created (grants/policy-folders.ts); this
 *   reconcile covers a workspace that gets the policy, a policy whose options change and mailboxes moved between
 *   workspaces, within one interval.
 *
 * A mailbox is under a policy when its workspace names it, or, without a workspace, when its application's default
 * workspace does. Deletes go in chunks of at most {@link UPKEEP_CHUNK_ROWS} messages, each in its own write with
 * the conditions checked again, with a turn of the event loop between chunks (the inbound writer shares the lock).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { and, eq, exists, inArray, isNull, lt, or, type SQL } from 'drizzle-orm';
import { onClockOf, tables, type StoredPolicyLimits, type StoredPolicyOptions } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import { toFolder, additionalFolderNames, addMissingFolders } from '../grants/index.js';
import type { MessageService } from '../messages/index.js';
import type { PolicyUpkeep, UpkeepResult } from './contracts.js';

/** Most messages one delete transaction removes. */
export const UPKEEP_CHUNK_ROWS = 200;
/** Mailboxes read at once when looking for those under a policy. */
const GRANT_PAGE = 500;
const DAY_SECONDS = 86_400;

/** A policy with upkeep to do, and the mailboxes under it. */
interface PolicyScope {
  limits: StoredPolicyLimits;
  options: StoredPolicyOptions;
  grants: { id: string; applicationId: string }[];
}

/** A retention period in days, when it is one: 0, negative (-1) or absent keeps mail for ever. */
function retentionDays(value: number | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Creates the policy upkeep. `run` may go in several processes at once: each chunk checks its conditions again. */
export function createPolicyUpkeep(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId'>,
  parts: { destroyForGood: MessageService['destroyForGood'] },
  options: { chunkRows?: number } = {},
): PolicyUpkeep {
  const { db, clock, newId } = deps;
  const chunkRows = options.chunkRows ?? UPKEEP_CHUNK_ROWS;
  const record = eventRecorder({ newId, clock });

  /** The policies with retention or additional folders, and the mailboxes under each. */
  async function scopes(applicationId: string | undefined): Promise<PolicyScope[]> {
    // One application's (a test-mode one, as of its test clock), or every production application's: a test-mode
    // application's mail is kept or deleted by its test clock only.
    const policies = (
      await db.orm
        .select()
        .from(tables.policies)
        .where(onClockOf(db.orm, tables.policies.applicationId, applicationId))
    ).filter(
      (policy) =>
        retentionDays(policy.limits.limit_inbox_retention_period) !== undefined ||
        retentionDays(policy.limits.limit_spam_retention_period) !== undefined ||
        additionalFolderNames(policy.options).length > 0,
    );
    if (policies.length === 0) return [];
    const workspaces = await db.orm
      .select()
      .from(tables.workspaces)
      .where(
        inArray(
          tables.workspaces.policyId,
          policies.map((policy) => policy.id),
        ),
      );
    const result: PolicyScope[] = [];
    for (const policy of policies) {
      const own = workspaces.filter(
        (workspace) => workspace.policyId === policy.id && workspace.applicationId === policy.applicationId,
      );
      if (own.length === 0) continue;
      const conditions: SQL[] = [
        inArray(
          tables.grants.workspaceId,
          own.map((workspace) => workspace.id),
        ),
      ];
      if (own.some((workspace) => workspace.isDefault)) conditions.push(isNull(tables.grants.workspaceId));
      const grants: PolicyScope['grants'] = [];
      for (let offset = 0; ; offset += GRANT_PAGE) {
        const page = await db.orm
          .select({ id: tables.grants.id, applicationId: tables.grants.applicationId })
          .from(tables.grants)
          .where(and(eq(tables.grants.applicationId, policy.applicationId), or(...conditions)))
          .orderBy(tables.grants.id)
          .limit(GRANT_PAGE)
          .offset(offset);
        grants.push(...page);
        if (page.length < GRANT_PAGE) break;
      }
      result.push({ limits: policy.limits, options: policy.options, grants });
    }
    return result;
  }

  /** Deletes the grant's messages in `folder` received before `before` (unix seconds), in chunks. */
  async function expire(
    grant: { id: string; applicationId: string },
    folder: 'inbox' | 'junk',
    before: number,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const { messages, messageFolders } = tables;
    const expired = and(
      eq(messages.grantId, grant.id),
      lt(messages.date, before),
      exists(
        db.orm
          .select({ one: messageFolders.messageId })
          .from(messageFolders)
          .where(and(eq(messageFolders.messageId, messages.id), eq(messageFolders.folderId, folder))),
      ),
    );
    let total = 0;
    while (signal?.aborted !== true) {
      const ids = (
        await db.orm.select({ id: messages.id }).from(messages).where(expired).orderBy(messages.date).limit(chunkRows)
      ).map((row) => row.id);
      if (ids.length === 0) break;
      const deleted = await db.write(async (tx) => {
        const rows = await tx
          .select()
          .from(messages)
          .where(and(inArray(messages.id, ids), expired));
        await parts.destroyForGood(tx, grant.applicationId, rows);
        return rows.length;
      });
      total += deleted;
      if (deleted === 0 || ids.length < chunkRows) break;
      await nextTurn();
    }
    return total;
  }

  /** Gives the grant the policy's folders it lacks, with their `folder.created` events. */
  async function addFolders(grant: { id: string; applicationId: string }, names: string[]): Promise<number> {
    // Read first: a mailbox that has them all (the usual case) costs no write.
    const present = await db.orm
      .select({ name: tables.folders.name })
      .from(tables.folders)
      .where(and(eq(tables.folders.grantId, grant.id), inArray(tables.folders.name, names)));
    if (present.length >= names.length) return 0;
    return db.write(async (tx) => {
      const at = unixSeconds(clock.now());
      const created = await addMissingFolders(tx, grant.id, names, at, newId);
      for (const row of created) {
        await record(tx, {
          applicationId: grant.applicationId,
          grantId: grant.id,
          type: 'folder.created',
          objectId: row.id,
          object: toFolder(row, undefined, 0),
          createdAt: at,
        });
      }
      return created.length;
    });
  }

  return {
    /** One pass over every policy with upkeep to do, as of the clock's now. Stops early when `signal` is aborted. */
    async run(signal?: AbortSignal, applicationId?: string): Promise<UpkeepResult> {
      const result: UpkeepResult = { inboxDeleted: 0, junkDeleted: 0, foldersCreated: 0 };
      const now = unixSeconds(clock.now());
      for (const scope of await scopes(applicationId)) {
        const inboxDays = retentionDays(scope.limits.limit_inbox_retention_period);
        const spamDays = retentionDays(scope.limits.limit_spam_retention_period);
        const folders = additionalFolderNames(scope.options);
        for (const grant of scope.grants) {
          if (signal?.aborted === true) return result;
          if (folders.length > 0) result.foldersCreated += await addFolders(grant, folders);
          if (inboxDays !== undefined)
            result.inboxDeleted += await expire(grant, 'inbox', now - inboxDays * DAY_SECONDS, signal);
          if (spamDays !== undefined)
            result.junkDeleted += await expire(grant, 'junk', now - spamDays * DAY_SECONDS, signal);
        }
      }
      return result;
    },
  };
}

export type { PolicyUpkeep, UpkeepResult } from './contracts.js';
