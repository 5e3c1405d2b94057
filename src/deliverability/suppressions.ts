/**
 * @module deliverability/suppressions
 * The per-application suppression list: addresses that hard-bounced or complained (put there by the report intake,
 * ./reports.ts) or that the application added itself. A send with a suppressed recipient is refused with a 400 that
 * names the addresses and how to remove them ({@link createSuppressionGate}), until the address is removed through
 * the API (`DELETE /v3/suppressions/{email}`). Entries of another application do not exist for a caller (404). The
 * bounces and complaints that fill the list are read through it too (./report-log.ts).
 */
import { and, asc, desc, eq, gt, inArray, lt, or, type SQL } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { AddSuppressionInput, ListSuppressionsInput, Suppression } from '../schemas/suppressions.js';
import type { SuppressionService } from './contracts.js';
import { createReportLog } from './report-log.js';
import type { SendGate } from './send-gates.js';

type SuppressionRow = typeof tables.suppressions.$inferSelect;

/** Addresses named in one refusal (the rest are counted). */
const NAMED_IN_REFUSAL = 10;

const wireOf = (row: SuppressionRow): Suppression => ({
  object: 'suppression',
  email: row.email,
  reason: row.reason,
  ...(row.reportId !== null ? { report_id: row.reportId } : {}),
  created_at: row.createdAt,
});

const why = { hard_bounce: 'hard bounce', complaint: 'complaint', manual: 'added manually' } as const;

/** The send gate: refuses a send to any suppressed recipient (400, naming them and how to remove them). */
export function createSuppressionGate(): SendGate {
  return {
    name: 'suppression',
    async check(tx: Tx, send) {
      if (send.recipients.length === 0) return;
      const rows = await tx
        .select({ email: tables.suppressions.email, reason: tables.suppressions.reason })
        .from(tables.suppressions)
        .where(
          and(
            eq(tables.suppressions.applicationId, send.applicationId),
            inArray(tables.suppressions.email, send.recipients),
          ),
        );
      if (rows.length === 0) return;
      rows.sort((a, b) => send.recipients.indexOf(a.email) - send.recipients.indexOf(b.email));
      const named = rows.slice(0, NAMED_IN_REFUSAL).map((row) => `${row.email} (${why[row.reason]})`);
      const more = rows.length > NAMED_IN_REFUSAL ? ` and ${rows.length - NAMED_IN_REFUSAL} more` : '';
      throw new AppError(
        'invalid_request',
        `Recipient${rows.length === 1 ? ' is' : 's are'} on this application's suppression list: ${named.join(', ')}${more}. ` +
          'Nothing was sent. Remove the recipients from the message, or, if an address works again, remove it from the list with DELETE /v3/suppressions/{email} and send again.',
        { suppressed: rows.map((row) => row.email) },
      );
    },
  };
}

/** Lower-cases and checks an address given in a path or body. */
function normalized(email: string): string {
  return email.trim().toLowerCase();
}

/** The suppression list's API. */
export function createSuppressionService(deps: Pick<CoreDeps, 'db' | 'clock'>): SuppressionService {
  const { db, clock } = deps;

  const notFound = (email: string) =>
    new AppError(
      'not_found',
      `Suppression ${JSON.stringify(email)} not found: the address is not on this application's suppression list.`,
    );

  return {
    ...createReportLog(deps),
    /** The application's suppressed addresses, newest first; `email` filters to one address. */
    async list(principal: Principal, input: ListSuppressionsInput) {
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const cursor = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const conditions: (SQL | undefined)[] = [eq(tables.suppressions.applicationId, principal.applicationId)];
      if (input.email !== undefined) conditions.push(eq(tables.suppressions.email, normalized(input.email)));
      if (cursor) {
        const [createdAt, email] = cursor;
        // Newest first, then by address: the next page starts after the cursor's row.
        conditions.push(
          or(
            lt(tables.suppressions.createdAt, createdAt),
            and(eq(tables.suppressions.createdAt, createdAt), gt(tables.suppressions.email, email)),
          ),
        );
      }
      const rows = await db.orm
        .select()
        .from(tables.suppressions)
        .where(and(...conditions))
        .orderBy(desc(tables.suppressions.createdAt), asc(tables.suppressions.email))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.createdAt, row.email], wireOf);
    },

    /** Adds an address (reason `manual`); an address already on the list keeps its entry (and its reason). */
    async add(principal: Principal, input: AddSuppressionInput): Promise<Suppression> {
      const email = normalized(input.email);
      return db.write(async (tx) => {
        await tx
          .insert(tables.suppressions)
          .values({
            applicationId: principal.applicationId,
            email,
            reason: 'manual',
            reportId: null,
            createdAt: unixSeconds(clock.now()),
          })
          .onConflictDoNothing();
        const [row] = await tx
          .select()
          .from(tables.suppressions)
          .where(
            and(eq(tables.suppressions.applicationId, principal.applicationId), eq(tables.suppressions.email, email)),
          );
        return wireOf(row!);
      });
    },

    /** Removes an address, so sends to it are accepted again. 404 when it is not on this application's list. */
    async remove(principal: Principal, email: string): Promise<Record<string, never>> {
      const address = normalized(email);
      const removed = await db.write((tx) =>
        tx
          .delete(tables.suppressions)
          .where(
            and(eq(tables.suppressions.applicationId, principal.applicationId), eq(tables.suppressions.email, address)),
          )
          .returning({ email: tables.suppressions.email }),
      );
      if (removed.length === 0) throw notFound(address);
      return {};
    },
  };
}

/** The suppression list's service. */
export type { SuppressionService } from './contracts.js';
