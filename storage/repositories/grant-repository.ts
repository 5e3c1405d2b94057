/**
 * Grant look-ups shared by every grant-scoped service.
 */
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../db.js';
import { grants } from '../schema/grants.js';

export type GrantRow = typeof grants.$inferSelect;

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
  const where = byEmail ? eq(grants.email, value.toLowerCase()) : eq(grants.id, value);
  const rows = await db.select().from(grants).where(and(where, eq(grants.applicationId, applicationId))).limit(1);
  return rows[0];
}

/** The hosted grant that owns an address, in any application (inbound mail routing). */
export async function findGrantByEmail(db: Executor, email: string): Promise<GrantRow | undefined> {
  const rows = await db.select().from(grants).where(eq(grants.email, email.toLowerCase())).limit(1);
  return rows[0];
}
