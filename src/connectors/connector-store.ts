/**
 * @module connectors/connector-store
 * The reads and writes of connectors and their credentials, each scoped to one application.
 */
import { and, asc, desc, eq, gt, or, type SQL } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';

/** A connector row. */
export type ConnectorRow = typeof tables.connectors.$inferSelect;
/** A credential row. */
export type CredentialRow = typeof tables.connectorCredentials.$inferSelect;

const c = tables.connectors;
const k = tables.connectorCredentials;

/** The application's connector of a provider, if any. */
export async function findConnectorRow(
  db: Executor,
  applicationId: string,
  provider: string,
): Promise<ConnectorRow | undefined> {
  const [row] = await db
    .select()
    .from(c)
    .where(and(eq(c.applicationId, applicationId), eq(c.provider, provider)));
  return row;
}

/** Up to `limit` connectors of the application after the key `after` (created_at, provider), oldest first. */
export async function listConnectorRows(
  db: Executor,
  applicationId: string,
  limit: number,
  after: readonly [number, string] | undefined,
): Promise<ConnectorRow[]> {
  const conditions: SQL[] = [eq(c.applicationId, applicationId)];
  if (after) {
    const [createdAt, provider] = after;
    conditions.push(or(gt(c.createdAt, createdAt), and(eq(c.createdAt, createdAt), gt(c.provider, provider)))!);
  }
  return db
    .select()
    .from(c)
    .where(and(...conditions))
    .orderBy(asc(c.createdAt), asc(c.provider))
    .limit(limit);
}

/** Inserts a connector; returns the row. */
export async function insertConnector(db: Executor, row: ConnectorRow): Promise<ConnectorRow> {
  const [inserted] = await db.insert(c).values(row).returning();
  return inserted!;
}

/** Changes a connector; returns the row after, or undefined when it is gone. */
export async function updateConnectorRow(
  db: Executor,
  applicationId: string,
  provider: string,
  changes: Partial<Omit<ConnectorRow, 'applicationId' | 'provider' | 'createdAt'>>,
): Promise<ConnectorRow | undefined> {
  const [row] = await db
    .update(c)
    .set(changes)
    .where(and(eq(c.applicationId, applicationId), eq(c.provider, provider)))
    .returning();
  return row;
}

/** Deletes a connector and (by the foreign key's cascade) its credentials; whether one was deleted. */
export async function deleteConnectorRow(db: Executor, applicationId: string, provider: string): Promise<boolean> {
  const removed = await db
    .delete(c)
    .where(and(eq(c.applicationId, applicationId), eq(c.provider, provider)))
    .returning({ provider: c.provider });
  return removed.length > 0;
}

/** One credential of the application's connector of `provider`, if any. */
export async function findCredentialRow(
  db: Executor,
  applicationId: string,
  provider: string,
  credentialId: string,
): Promise<CredentialRow | undefined> {
  const [row] = await db
    .select()
    .from(k)
    .where(and(eq(k.id, credentialId), eq(k.applicationId, applicationId), eq(k.provider, provider)));
  return row;
}

/** The credential of the connector named `name`, if any (names are unique within a connector). */
export async function findCredentialByName(
  db: Executor,
  applicationId: string,
  provider: string,
  name: string,
): Promise<CredentialRow | undefined> {
  const [row] = await db
    .select()
    .from(k)
    .where(and(eq(k.applicationId, applicationId), eq(k.provider, provider), eq(k.name, name)));
  return row;
}

/** A page of the connector's credentials by offset, sorted by `sortBy` then id. */
export async function listCredentialRows(
  db: Executor,
  applicationId: string,
  provider: string,
  page: { limit: number; offset: number; sortBy: 'createdAt' | 'updatedAt'; order: 'asc' | 'desc' },
): Promise<CredentialRow[]> {
  const direction = page.order === 'asc' ? asc : desc;
  return db
    .select()
    .from(k)
    .where(and(eq(k.applicationId, applicationId), eq(k.provider, provider)))
    .orderBy(direction(k[page.sortBy]), direction(k.id))
    .limit(page.limit)
    .offset(page.offset);
}

/** Inserts a credential; returns the row. */
export async function insertCredential(db: Executor, row: CredentialRow): Promise<CredentialRow> {
  const [inserted] = await db.insert(k).values(row).returning();
  return inserted!;
}

/** Changes a credential; returns the row after, or undefined when it is gone. */
export async function updateCredentialRow(
  db: Executor,
  applicationId: string,
  provider: string,
  credentialId: string,
  changes: Partial<Pick<CredentialRow, 'name' | 'dataSealed' | 'hashedData' | 'updatedAt'>>,
): Promise<CredentialRow | undefined> {
  const [row] = await db
    .update(k)
    .set(changes)
    .where(and(eq(k.id, credentialId), eq(k.applicationId, applicationId), eq(k.provider, provider)))
    .returning();
  return row;
}

/** Deletes a credential, and unsets it as its connector's active one; whether one was deleted. */
export async function deleteCredentialRow(
  db: Executor,
  applicationId: string,
  provider: string,
  credentialId: string,
): Promise<boolean> {
  const removed = await db
    .delete(k)
    .where(and(eq(k.id, credentialId), eq(k.applicationId, applicationId), eq(k.provider, provider)))
    .returning({ id: k.id });
  if (removed.length === 0) return false;
  await db
    .update(c)
    .set({ activeCredentialId: null })
    .where(and(eq(c.applicationId, applicationId), eq(c.provider, provider), eq(c.activeCredentialId, credentialId)));
  return true;
}
