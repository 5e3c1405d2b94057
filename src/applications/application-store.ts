/**
 * @module applications/application-store
 * Reads of applications, API keys and redirect URIs that need SQL of their own: lists in the order rows were made
 * (SQLite's rowid breaks ties within one second, as ids are random), the key of a digest (asked on every request,
 * its statement built once) and the number of an application's redirect URIs.
 */
import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
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

/**
 * The grants of some workspaces of an application (`workspaces`: a JSON array of ids): a key scoped to workspaces asks
 * on every request, so its statement is built once and its answer kept while the database is unchanged (a grant
 * moved into a workspace is a change).
 */
export const grantsOfWorkspaces = preparedRead(
  (orm: Orm) =>
    orm
      .select({ id: tables.grants.id })
      .from(tables.grants)
      .where(
        and(
          eq(tables.grants.applicationId, sql.placeholder('application')),
          sql`${tables.grants.workspaceId} in (select value from json_each(${sql.placeholder('workspaces')}))`,
        ),
      ),
  { memo: 256 },
);

/** The key of an application with this id (revoked or not). */
export function apiKeyById(
  db: Executor,
  applicationId: string,
  keyId: string,
): Promise<(typeof tables.apiKeys.$inferSelect)[]> {
  return db
    .select()
    .from(tables.apiKeys)
    .where(and(eq(tables.apiKeys.applicationId, applicationId), eq(tables.apiKeys.id, keyId)))
    .limit(1);
}

/**
 * What a key scope reaches in an application: the workspaces it names that exist, and the grants it names or that
 * belong to those workspaces (resolved on every request, so a grant moved into a workspace is reached at once).
 */
export async function scopeRows(
  db: Executor,
  applicationId: string,
  scope: { workspace_ids?: string[] | undefined; grant_ids?: string[] | undefined },
): Promise<{ workspaceIds: Set<string>; grantIds: Set<string> }> {
  const workspaceIds = scope.workspace_ids ?? [];
  const grantIds = scope.grant_ids ?? [];
  const workspaces =
    workspaceIds.length === 0
      ? []
      : await db
          .select({ id: tables.workspaces.id })
          .from(tables.workspaces)
          .where(and(eq(tables.workspaces.applicationId, applicationId), inArray(tables.workspaces.id, workspaceIds)));
  const reach = [
    ...(grantIds.length > 0 ? [inArray(tables.grants.id, grantIds)] : []),
    ...(workspaces.length > 0
      ? [
          inArray(
            tables.grants.workspaceId,
            workspaces.map((row) => row.id),
          ),
        ]
      : []),
  ];
  const grants =
    reach.length === 0
      ? []
      : await db
          .select({ id: tables.grants.id })
          .from(tables.grants)
          .where(and(eq(tables.grants.applicationId, applicationId), or(...reach)));
  return { workspaceIds: new Set(workspaces.map((row) => row.id)), grantIds: new Set(grants.map((row) => row.id)) };
}

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

/**
 * An application's test clock (`test_clock_at`, null for a production application): every operation of a test-mode
 * application asks, so its statement is built once and its answer kept while the database is unchanged.
 */
export const testClockRow = preparedRead(
  (orm: Orm) =>
    orm
      .select({ at: tables.applications.testClockAt })
      .from(tables.applications)
      .where(eq(tables.applications.id, sql.placeholder('application')))
      .limit(1),
  { memo: 64 },
);

/**
 * Moves a test-mode application's clock forward to `at` (unix ms) in one conditional UPDATE, so two advances racing
 * never move it backwards. True when it moved (or already stood at `at`).
 */
export async function moveTestClock(executor: Executor, applicationId: string, at: number): Promise<boolean> {
  const rows = await executor
    .update(tables.applications)
    .set({ testClockAt: at })
    .where(
      and(
        eq(tables.applications.id, applicationId),
        sql`${tables.applications.testClockAt} is not null and ${tables.applications.testClockAt} <= ${at}`,
      ),
    )
    .returning({ id: tables.applications.id });
  return rows.length > 0;
}
