/**
 * @module contacts/contact-store
 * What the contacts need of SQL beyond drizzle's operators: conditions on the JSON arrays of a contact (its
 * addresses, phone numbers, groups), and the lookup of a grant's contact by address.
 */
import { and, eq, or, sql, type SQL } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';

/** A row of the JSON array `column` whose `path` is `value` (compared in lower case when `caseInsensitive`). */
function jsonArrayHas(
  column: typeof tables.contacts.emails | typeof tables.contacts.phoneNumbers | typeof tables.contacts.groups,
  path: string,
  value: string,
  caseInsensitive: boolean,
): SQL {
  const extracted = sql`json_extract(json_each.value, ${path})`;
  return sql`exists (select 1 from json_each(${column}) where ${caseInsensitive ? sql`lower(${extracted})` : extracted} = ${value})`;
}

/** A condition: the contact has the address `email` (lower case) among its emails, in any case. */
export function hasEmail(email: string): SQL {
  return jsonArrayHas(tables.contacts.emails, '$.email', email, true);
}

/** A condition: the contact has the phone number `number`. */
export function hasPhoneNumber(number: string): SQL {
  return jsonArrayHas(tables.contacts.phoneNumbers, '$.number', number, false);
}

/** A condition: the contact is in the group `groupId`. */
export function inGroup(groupId: string): SQL {
  return jsonArrayHas(tables.contacts.groups, '$.id', groupId, false);
}

/**
 * Up to `limit` distinct group ids the grant's contacts name, in id order, after `after` (a page of contact groups).
 * One pass over the grant's contacts and their groups (at most 50 each), then a sort of the distinct ids.
 */
export async function groupIdsOf(
  db: Executor,
  grantId: string,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const id = sql`json_extract(g.value, '$.id')`;
  const rows = await db.all<{ group_id: string }>(
    sql`select distinct ${id} as group_id from ${tables.contacts}, json_each(${tables.contacts.groups}) g
      where ${tables.contacts.grantId} = ${grantId} and ${id} is not null
        ${after !== undefined ? sql`and ${id} > ${after}` : sql``}
      order by group_id limit ${limit}`,
  );
  return rows.map((row) => row.group_id);
}

/** The id of a grant's contact whose primary address or one of whose emails is `email` (lower case), if any. */
export async function contactIdByEmail(db: Executor, grantId: string, email: string): Promise<string | undefined> {
  const [known] = await db
    .select({ id: tables.contacts.id })
    .from(tables.contacts)
    .where(and(eq(tables.contacts.grantId, grantId), or(eq(tables.contacts.primaryEmail, email), hasEmail(email))))
    .limit(1);
  return known?.id;
}
