/**
 * @module admin/list-store
 * Writes of lists (`/v3/lists`) that bump a list's `version` in SQL, inside the caller's transaction: a rename or
 * new description, and the new item count after items changed.
 */
import { count, eq, sql } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';

type ListRow = typeof tables.lists.$inferSelect;

/** Sets a list's name and/or description, bumps its version and sets `updatedAt`; the changed row. */
export async function updateListDetails(
  tx: Tx,
  listId: string,
  changes: { name?: string | undefined; description?: string | null | undefined },
  updatedAt: number,
): Promise<ListRow> {
  const [row] = await tx
    .update(tables.lists)
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      version: sql`${tables.lists.version} + 1`,
      updatedAt,
    })
    .where(eq(tables.lists.id, listId))
    .returning();
  return row!;
}

/** After items changed: counts them, sets `itemsCount`, bumps the version and sets `updatedAt`. */
export async function touchListItems(tx: Tx, listId: string, updatedAt: number): Promise<ListRow> {
  const [counted] = await tx
    .select({ value: count() })
    .from(tables.listItems)
    .where(eq(tables.listItems.listId, listId));
  const [row] = await tx
    .update(tables.lists)
    .set({ itemsCount: counted?.value ?? 0, version: sql`${tables.lists.version} + 1`, updatedAt })
    .where(eq(tables.lists.id, listId))
    .returning();
  return row!;
}
