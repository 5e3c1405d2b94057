/**
 * @module contacts/contact-mapper
 * A contact row and its wire form (the Nylas contact), and the row columns of the fields a request (or a vCard read
 * from a CardDAV server) gives.
 */
import { tables } from '../../storage/index.js';
import type { Contact, UpdateContactInput } from '../schemas/contacts.js';

export type ContactRow = typeof tables.contacts.$inferSelect;
export type ContactInsert = typeof tables.contacts.$inferInsert;

const TEXT_FIELDS = [
  ['given_name', 'givenName'],
  ['middle_name', 'middleName'],
  ['surname', 'surname'],
  ['suffix', 'suffix'],
  ['nickname', 'nickname'],
  ['birthday', 'birthday'],
  ['company_name', 'companyName'],
  ['job_title', 'jobTitle'],
  ['manager_name', 'managerName'],
  ['office_location', 'officeLocation'],
  ['notes', 'notes'],
  ['picture_url', 'pictureUrl'],
] as const;

/** The name shown for a contact: its display name, else its name parts, nickname, company, address or number. */
function displayNameOf(row: ContactRow): string {
  if (row.displayName) return row.displayName;
  const parts = [row.givenName, row.middleName, row.surname, row.suffix].filter(Boolean).join(' ');
  return parts || row.nickname || row.companyName || row.emails[0]?.email || row.phoneNumbers[0]?.number || '';
}

/** The wire form of a contact row (`picture` only when asked for). */
export function toContact(row: ContactRow, withPicture = false): Contact {
  const text: Record<string, string> = {};
  for (const [wire, column] of TEXT_FIELDS) {
    const value = row[column];
    if (value !== null && value !== '') text[wire] = value;
  }
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'contact',
    display_name: displayNameOf(row),
    ...text,
    ...(withPicture && row.picture ? { picture: row.picture } : {}),
    source: row.source,
    emails: row.emails,
    phone_numbers: row.phoneNumbers,
    physical_addresses: row.physicalAddresses,
    web_pages: row.webPages,
    im_addresses: row.imAddresses,
    groups: row.groups,
  };
}

export type ContactFields = Omit<UpdateContactInput, 'grant_id' | 'contact_id'>;

/** Row columns of the fields a request gives (absent fields are left out). */
export function columnsOf(input: ContactFields): Partial<ContactInsert> {
  const values: Partial<ContactInsert> = {};
  for (const [wire, column] of TEXT_FIELDS) {
    const value = input[wire];
    if (value !== undefined) values[column] = value.trim() === '' ? null : value;
  }
  if (input.display_name !== undefined)
    values.displayName = input.display_name.trim() === '' ? null : input.display_name;
  if (input.picture !== undefined) values.picture = input.picture.replace(/\s+/g, '') || null;
  if (input.emails !== undefined) {
    const seen = new Set<string>();
    values.emails = input.emails
      .map(({ email, type }) => ({ email: email.trim().toLowerCase(), ...(type ? { type } : {}) }))
      .filter((item) => !seen.has(item.email) && seen.add(item.email));
    values.primaryEmail = values.emails[0]?.email ?? null;
  }
  if (input.phone_numbers !== undefined)
    values.phoneNumbers = input.phone_numbers.map(({ number, type }) => ({
      number: number.trim(),
      ...(type ? { type } : {}),
    }));
  if (input.physical_addresses !== undefined) {
    values.physicalAddresses = input.physical_addresses.map(
      (address) =>
        Object.fromEntries(Object.entries(address).filter(([, value]) => value !== undefined)) as Record<
          string,
          string
        >,
    );
  }
  if (input.web_pages !== undefined)
    values.webPages = input.web_pages.map(({ url, type }) => ({ url, ...(type ? { type } : {}) }));
  if (input.im_addresses !== undefined)
    values.imAddresses = input.im_addresses.map(({ im_address, type }) => ({ im_address, ...(type ? { type } : {}) }));
  if (input.groups !== undefined) values.groups = input.groups.map(({ id }) => ({ id }));
  return values;
}
