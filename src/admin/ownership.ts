/**
 * @module admin/ownership
 * Checks that ids named in an administration request (a workspace's policy and rules, a policy's rules, a rule's
 * lists) are objects of the calling application. Another application's object is reported exactly like a missing
 * one: a 404 that names it, so nothing reveals what other applications hold.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type Database, type Executor, type Tx } from '../../storage/index.js';
import { AppError, notFound } from '../errors.js';

/** The tables whose rows ids may name, with the noun used in messages. */
const OWNED = {
  policy: { table: tables.policies, noun: 'Policy' },
  rule: { table: tables.rules, noun: 'Rule' },
  list: { table: tables.lists, noun: 'List' },
  workspace: { table: tables.workspaces, noun: 'Workspace' },
} as const;

/** Throws a 404 naming every id of `ids` that is not a `kind` of the application (ids repeated count once). */
export async function requireOwned(
  db: Executor,
  applicationId: string,
  kind: keyof typeof OWNED,
  ids: readonly string[],
  field: string,
): Promise<void> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return;
  const { table, noun } = OWNED[kind];
  const found = await db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.applicationId, applicationId), inArray(table.id, wanted)));
  const known = new Set(found.map((row) => row.id));
  const missing = wanted.filter((id) => !known.has(id));
  if (missing.length === 1)
    throw new AppError('not_found', `${field}: ${notFound(noun, missing[0]!).message}`, { field });
  if (missing.length > 1)
    throw new AppError(
      'not_found',
      `${field}: no ${noun.toLowerCase()} of this application has the id(s) ${missing.map((id) => JSON.stringify(id)).join(', ')}.`,
      { field },
    );
}

/** Unique values in first-seen order. */
export function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/**
 * The write transaction of an administration service: runs `work` in one transaction, then `invalidate`s the
 * enforcement caches, so the mail stages of this process apply the change at once.
 */
export function adminWriter(db: Database, invalidate: () => void) {
  return async <T>(work: (tx: Tx) => Promise<T>): Promise<T> => {
    const result = await db.write(work);
    invalidate();
    return result;
  };
}

/** One row of the application, or a 404 naming it (another application's row is as missing as an absent one). */
export async function requireOwnedRow<K extends keyof typeof OWNED>(
  db: Executor,
  kind: K,
  applicationId: string,
  id: string,
): Promise<(typeof OWNED)[K]['table']['$inferSelect']> {
  const { table, noun } = OWNED[kind];
  const owned = table;
  const [row] = await db
    .select()
    .from(owned)
    .where(and(eq(owned.id, id), eq(owned.applicationId, applicationId)));
  if (!row) throw notFound(noun, id);
  return row;
}
