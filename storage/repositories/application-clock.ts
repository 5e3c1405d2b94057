/**
 * @module storage/repositories/application-clock
 * Which applications' due work a pass takes: one application's (a test clock advancing it), or every application on
 * the service's own clock (the background loops), never a test-mode one's, whose clock moves only when told.
 */
import { eq, isNotNull, notInArray, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Executor } from '../orm.js';
import { applications } from '../schema/tenancy.js';

/**
 * The condition on `column` (a row's application id): equal to `applicationId` when given; else not the id of an
 * application on a test clock.
 */
export function onClockOf(orm: Pick<Executor, 'select'>, column: AnyColumn, applicationId: string | undefined): SQL {
  if (applicationId !== undefined) return eq(column, applicationId);
  return notInArray(
    column,
    orm.select({ id: applications.id }).from(applications).where(isNotNull(applications.testClockAt)),
  );
}
