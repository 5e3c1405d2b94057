/**
 * @module contacts/vcard
 * vCard (RFC 6350, and the 3.0 of RFC 2426 that most servers still hold) to and from the contact fields of the Nylas
 * model, for contacts kept on a CardDAV server (RFC 6352). Pure functions, linear in the text, bounded: a card over
 * {@link VCARD_LIMITS} is refused, never read in part. Groups are the card's CATEGORIES.
 */

/** Bounds on a card read from a server. */
export const VCARD_LIMITS = { maxBytes: 256_000, maxLines: 2_000, maxValues: 50 } as const;

/** The contact fields a card carries (wire names of the contact model). */
export interface VCardFields {
  display_name?: string;
  given_name?: string;
  middle_name?: string;
  surname?: string;
  suffix?: string;
  nickname?: string;
  birthday?: string;
  company_name?: string;
  job_title?: string;
  notes?: string;
  emails: { email: string; type?: string }[];
  phone_numbers: { number: string; type?: string }[];
  web_pages: { url: string; type?: string }[];
  physical_addresses: Record<string, string>[];
  groups: { id: string }[];
}

/** A card read: its UID and fields. */
export interface ParsedVCard {
  uid: string | null;
  fields: VCardFields;
}

const unescape = (value: string) =>
  value.replace(/\\([\\,;nN])/g, (_match, character: string) =>
    character === 'n' || character === 'N' ? '\n' : character,
  );
const escape = (value: string) => value.replace(/[\\,;]/g, (character) => `\\${character}`).replace(/\r?\n/g, '\\n');

/** Splits at unescaped `separator`. */
function splitValue(value: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  for (let index = 0; index < value.length; index++) {
    const character = value[index]!;
    if (character === '\\' && index + 1 < value.length) {
      current += character + value[index + 1]!;
      index++;
    } else if (character === separator) {
      parts.push(current);
      current = '';
    } else current += character;
  }
  parts.push(current);
  return parts;
}

/** The TYPE of a property, lower-cased (first of several; `pref` skipped), or undefined. */
function typeOf(params: string[]): string | undefined {
  for (const param of params) {
    const [name, value] = param.split('=', 2);
    if (name?.toLowerCase() !== 'type' || !value) continue;
    const type = value
      .replace(/"/g, '')
      .split(',')
      .map((item) => item.toLowerCase())
      .find((item) => item !== 'pref' && item !== 'internet' && item !== 'voice');
    if (type) return type;
  }
  return undefined;
}

/** Reads a vCard; `{ ok: false }` for text that is not one, or over the limits. */
export function parseVCard(text: string): { ok: true; value: ParsedVCard } | { ok: false; error: string } {
  if (Buffer.byteLength(text, 'utf8') > VCARD_LIMITS.maxBytes)
    return { ok: false, error: `the card is larger than ${VCARD_LIMITS.maxBytes} bytes` };
  const lines = text
    .replace(/\r\n|\r/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n');
  if (lines.length > VCARD_LIMITS.maxLines) return { ok: false, error: 'the card has too many lines' };
  if (!/^BEGIN:VCARD$/i.test(lines.find((line) => line.trim() !== '')?.trim() ?? ''))
    return { ok: false, error: 'not a vCard (no BEGIN:VCARD)' };
  const fields: VCardFields = { emails: [], phone_numbers: [], web_pages: [], physical_addresses: [], groups: [] };
  let uid: string | null = null;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const [rawName = '', ...params] = line.slice(0, colon).split(';');
    const name = rawName.slice(rawName.lastIndexOf('.') + 1).toUpperCase();
    const value = line.slice(colon + 1);
    const type = typeOf(params);
    const typed = <T extends object>(item: T): T & { type?: string } => (type ? { ...item, type } : item);
    switch (name) {
      case 'UID':
        uid = unescape(value).slice(0, 256);
        break;
      case 'FN':
        fields.display_name = unescape(value).slice(0, 256);
        break;
      case 'N': {
        const [surname, given, middle, , suffix] = splitValue(value, ';').map((part) => unescape(part).trim());
        if (surname) fields.surname = surname.slice(0, 256);
        if (given) fields.given_name = given.slice(0, 256);
        if (middle) fields.middle_name = middle.slice(0, 256);
        if (suffix) fields.suffix = suffix.slice(0, 256);
        break;
      }
      case 'NICKNAME':
        fields.nickname = unescape(splitValue(value, ',')[0] ?? '').slice(0, 256);
        break;
      case 'BDAY':
        fields.birthday = value.trim().slice(0, 32);
        break;
      case 'ORG':
        fields.company_name = unescape(splitValue(value, ';')[0] ?? '').slice(0, 256);
        break;
      case 'TITLE':
        fields.job_title = unescape(value).slice(0, 256);
        break;
      case 'NOTE':
        fields.notes = unescape(value).slice(0, 10_000);
        break;
      case 'EMAIL':
        if (fields.emails.length < VCARD_LIMITS.maxValues && value.includes('@'))
          fields.emails.push(
            typed({
              email: unescape(value)
                .replace(/^mailto:/i, '')
                .trim()
                .toLowerCase(),
            }),
          );
        break;
      case 'TEL':
        if (fields.phone_numbers.length < VCARD_LIMITS.maxValues)
          fields.phone_numbers.push(typed({ number: unescape(value).replace(/^tel:/i, '').trim() }));
        break;
      case 'URL':
        if (fields.web_pages.length < VCARD_LIMITS.maxValues)
          fields.web_pages.push(typed({ url: unescape(value).trim() }));
        break;
      case 'ADR': {
        if (fields.physical_addresses.length >= VCARD_LIMITS.maxValues) break;
        const [, , street, city, state, postal, country] = splitValue(value, ';').map((part) => unescape(part).trim());
        const address: Record<string, string> = { ...(type ? { type } : {}) };
        if (street) address.street_address = street;
        if (city) address.city = city;
        if (state) address.state = state;
        if (postal) address.postal_code = postal;
        if (country) address.country = country;
        fields.physical_addresses.push(address);
        break;
      }
      case 'CATEGORIES':
        for (const category of splitValue(value, ',')) {
          const id = unescape(category).trim().slice(0, 256);
          if (id && fields.groups.length < VCARD_LIMITS.maxValues && !fields.groups.some((group) => group.id === id))
            fields.groups.push({ id });
        }
        break;
    }
  }
  return { ok: true, value: { uid, fields } };
}

/** Folds a content line at 75 octets (RFC 6350 §3.2), never inside a UTF-8 sequence. */
function fold(line: string): string {
  const bytes = Buffer.from(line, 'utf8');
  if (bytes.length <= 75) return line;
  const parts: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + (start === 0 ? 75 : 74));
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    parts.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return parts.join('\r\n ');
}

/** Writes a vCard 3.0 (what CardDAV servers, Google's among them, all take) of `fields` with UID `uid`. */
export function buildVCard(uid: string, fields: VCardFields): string {
  const typeParam = (type: string | undefined) =>
    type ? `;TYPE=${type.replace(/[^A-Za-z0-9-]/g, '').toUpperCase()}` : '';
  const name = [fields.given_name, fields.middle_name, fields.surname].filter(Boolean).join(' ');
  const display =
    fields.display_name ||
    name ||
    fields.nickname ||
    fields.company_name ||
    fields.emails[0]?.email ||
    fields.phone_numbers[0]?.number ||
    '';
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `UID:${escape(uid)}`, `FN:${escape(display)}`];
  lines.push(
    `N:${[fields.surname, fields.given_name, fields.middle_name, '', fields.suffix].map((part) => escape(part ?? '')).join(';')}`,
  );
  if (fields.nickname) lines.push(`NICKNAME:${escape(fields.nickname)}`);
  if (fields.birthday) lines.push(`BDAY:${escape(fields.birthday)}`);
  if (fields.company_name) lines.push(`ORG:${escape(fields.company_name)}`);
  if (fields.job_title) lines.push(`TITLE:${escape(fields.job_title)}`);
  if (fields.notes) lines.push(`NOTE:${escape(fields.notes)}`);
  for (const email of fields.emails) lines.push(`EMAIL${typeParam(email.type)}:${escape(email.email)}`);
  for (const phone of fields.phone_numbers) lines.push(`TEL${typeParam(phone.type)}:${escape(phone.number)}`);
  for (const page of fields.web_pages) lines.push(`URL${typeParam(page.type)}:${escape(page.url)}`);
  for (const address of fields.physical_addresses) {
    const parts = ['', '', address.street_address, address.city, address.state, address.postal_code, address.country];
    lines.push(`ADR${typeParam(address.type)}:${parts.map((part) => escape(part ?? '')).join(';')}`);
  }
  if (fields.groups.length > 0) lines.push(`CATEGORIES:${fields.groups.map((group) => escape(group.id)).join(',')}`);
  lines.push('END:VCARD');
  return lines.map(fold).join('\r\n') + '\r\n';
}
