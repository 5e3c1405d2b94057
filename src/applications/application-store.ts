/**
 * @module applications/application-store
 * Reads of applications, API keys and redirect URIs that need SQL of their own: lists in the order rows were made
 * (SQLite's rowid breaks ties within one second, as ids are random), the key of a digest (asked on every request,
 * its statement built once) and the number of an application's redirect URIs.
 */
import { asc, eq, sql } from 'drizzle-orm';
import { preparedRead, tables, type Executor, type Orm } from '../../storage/index.js';

/** SQLite's rowid: ties within one second (ids are random) list in the order they were made. */
const INSERTION_ORDER = sql`rowid`;

/** The API key row of a digest: every request asks, so its SQL is built once. */
/** Asked on every request: kept while the database is unchanged (a revocation, anywhere, is a change). */
export const apiKeyByHash = preparedRead(
  (orm: Orm) =>
    orm
      .select()
      .from(tables.apiKeys)
      .where(eq(tables.apiKeys.keyHash, sql.placeholder('hash')))
      .limit(1),
  { memo: 256 },
);

/** Every application, oldest first. */
export function allApplications(db: Executor): Promise<(typeof tables.applications.$inferSelect)[]> {
  return db.select().from(tables.applications).orderBy(tables.applications.createdAt, INSERTION_ORDER);
}

/** An application's keys, revoked ones included, oldest first. */
export function apiKeysOf(db: Executor, applicationId: string): Promise<(typeof tables.apiKeys.$inferSelect)[]> {
  return db
    .select()
    .from(tables.apiKeys)
    .where(eq(tables.apiKeys.applicationId, applicationId))
    .orderBy(tables.apiKeys.createdAt, INSERTION_ORDER);
}

/** An application's redirect URIs, oldest first. */
export function redirectUrisOf(
  db: Executor,
  applicationId: string,
): Promise<(typeof tables.redirectUris.$inferSelect)[]> {
  return db
    .select()
    .from(tables.redirectUris)
    .where(eq(tables.redirectUris.applicationId, applicationId))
    .orderBy(asc(tables.redirectUris.createdAt), asc(INSERTION_ORDER));
}

/** How many redirect URIs an application has. */
export async function countRedirectUris(db: Executor, applicationId: string): Promise<number> {
  const [count] = await db
    .select({ n: sql<number>`count(*)` })
    .from(tables.redirectUris)
    .where(eq(tables.redirectUris.applicationId, applicationId));
  return count?.n ?? 0;
}
