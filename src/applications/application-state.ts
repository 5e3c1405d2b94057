/**
 * @module applications/application-state
 * What the application service's keys (./application-keys.ts) and service accounts (./service-accounts.ts) share:
 * the state `createApplicationService` makes, the inserts of a key and of an application, and an application's
 * listing.
 */
import { eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import { API_KEY_PREFIX, hashApiKey } from './credentials.js';
import type { ApplicationInfo, Plan } from './contracts.js';

/** What the functions of the application service share, made once by `createApplicationService`. */
export interface ApplicationState {
  db: CoreDeps['db'];
  newId: CoreDeps['newId'];
  randomBytes: CoreDeps['randomBytes'];
  config: CoreDeps['config'];
  logger: CoreDeps['logger'];
  /** The clock's time in unix seconds. */
  now: () => number;
}

/** What a key row holds beside its name and secret (each absent: the whole application, everything, never). */
export type KeyLimits = Pick<
  typeof tables.apiKeys.$inferInsert,
  'scope' | 'permissions' | 'expiresAt' | 'createdBy' | 'agent'
>;

export async function insertKey(
  state: ApplicationState,
  tx: Tx,
  applicationId: string,
  name: string,
  key: string,
  limits: KeyLimits = {},
) {
  const id = state.newId();
  await tx.insert(tables.apiKeys).values({
    id,
    applicationId,
    name,
    prefix: key.slice(0, API_KEY_PREFIX.length + 6),
    keyHash: hashApiKey(key),
    createdAt: state.now(),
    ...limits,
  });
  return id;
}

export async function insertApplication(
  state: ApplicationState,
  tx: Tx,
  name: string,
  plan: Plan,
  isDefault: boolean,
  testClockAt: number | null = null,
) {
  const id = state.newId();
  const at = state.now();
  await tx.insert(tables.applications).values({ id, name, plan, isDefault, testClockAt, createdAt: at, updatedAt: at });
  // Every application has exactly one default workspace from the start (spec: Workspace).
  await tx.insert(tables.workspaces).values({
    id: state.newId(),
    applicationId: id,
    name: 'Default workspace',
    isDefault: true,
    autoGroup: false,
    createdAt: at,
    updatedAt: at,
  });
  return id;
}

export function toInfo(row: typeof tables.applications.$inferSelect): ApplicationInfo {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    is_default: row.isDefault,
    test_mode: row.testClockAt !== null,
    created_at: row.createdAt,
  };
}

/** The application with this id, or a 404. */
export async function getApplication(state: ApplicationState, applicationId: string): Promise<ApplicationInfo> {
  const row = await state.db.orm.query.applications.findFirst({ where: eq(tables.applications.id, applicationId) });
  if (!row) throw new AppError('not_found', `Application ${JSON.stringify(applicationId)} was not found.`);
  return toInfo(row);
}
