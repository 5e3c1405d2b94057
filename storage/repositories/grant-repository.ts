/**
 * Grant look-ups shared by every grant-scoped service.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../orm.js';
import { preparedRead } from '../engine/fast-read.js';
import { grants } from '../schema/grants.js';

export type GrantRow = typeof grants.$inferSelect;

/** An application's grant by id, and by address (the SQL built once: every grant-scoped request asks). */
const grantById = preparedRead((db: Executor) =>
  db
    .select()
    .from(grants)
    .where(and(eq(grants.id, sql.placeholder('value')), eq(grants.applicationId, sql.placeholder('application'))))
    .limit(1),
);
const grantByEmail = preparedRead((db: Executor) =>
  db
    .select()
    .from(grants)
    .where(and(eq(grants.email, sql.placeholder('value')), eq(grants.applicationId, sql.placeholder('application'))))
    .limit(1),
);

/**
 * Finds an application's grant by any of the forms a path may carry: the id, `grant:<id>`, the email
 * address, or `email:<address>`. A grant of another application is not found.
 */
export async function findGrantByRef(db: Executor, applicationId: string, ref: string): Promise<GrantRow | undefined> {
  let value = ref.trim();
  let byEmail = value.includes('@');
  if (value.startsWith('grant:')) {
    value = value.slice('grant:'.length);
    byEmail = false;
  } else if (value.startsWith('email:')) {
    value = value.slice('email:'.length);
    byEmail = true;
  }
  const rows = byEmail
    ? await grantByEmail(db, { value: value.toLowerCase(), application: applicationId })
    : await grantById(db, { value, application: applicationId });
  return rows[0];
}

/** The hosted grant that owns an address, in any application (inbound mail routing). */
export async function findGrantByEmail(db: Executor, email: string): Promise<GrantRow | undefined> {
  const rows = await db.select().from(grants).where(eq(grants.email, email.toLowerCase())).limit(1);
  return rows[0];
}
