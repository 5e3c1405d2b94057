/**
 * @module grants/folder-store
 * Aggregates over a mailbox's folders: how many children each folder has, and the highest sort position taken
 * (user folders take the next one).
 */
import { eq, sql } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';

/** The number of folders under each parent of the grant (parent id, or null for top-level folders). */
export async function childCountsOf(db: Executor, grantId: string): Promise<Map<string | null, number>> {
  const children = await db
    .select({ parentId: tables.folders.parentId, count: sql<number>`count(*)` })
    .from(tables.folders)
    .where(eq(tables.folders.grantId, grantId))
    .groupBy(tables.folders.parentId);
  return new Map(children.map((child) => [child.parentId, child.count]));
}

/** The highest sort position among the grant's folders, or null when it has none. */
export async function lastSortOrderOf(db: Executor, grantId: string): Promise<number | null> {
  const [last] = await db
    .select({ sortOrder: sql<number | null>`max(${tables.folders.sortOrder})` })
    .from(tables.folders)
    .where(eq(tables.folders.grantId, grantId));
  return last?.sortOrder ?? null;
}
