/**
 * @module calendar/calendar-store
 * SQL conditions over the calendar tables that drizzle's operators cannot write: a JSON metadata column holding
 * given key/value pairs (calendars' and events' `metadata_pair` filter).
 */
import { and, sql, type AnyColumn, type SQL } from 'drizzle-orm';

/** A SQL condition: the JSON metadata `column` has every pair (quotes and backslashes dropped from keys). */
export function metadataHasPairs(column: AnyColumn, pairs: readonly (readonly [string, string])[]): SQL {
  const conditions = pairs.map(
    ([key, value]) => sql`json_extract(${column}, ${`$."${key.replace(/["\\]/g, '')}"`}) = ${value}`,
  );
  return and(...conditions)!;
}
