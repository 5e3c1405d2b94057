/**
 * The vCard codec of contacts kept on CardDAV servers (src/contacts/vcard.ts): cards as servers and apps write them
 * (3.0 and 4.0, folded lines, escaped separators, grouped properties, CATEGORIES as groups), round trips, and the
 * limits on what is read.
 */
import { describe, expect, it } from 'vitest';
import { buildVCard, parseVCard, VCARD_LIMITS } from '../../../src/contacts/vcard.js';

describe('vCard codec', () => {
  it('reads the fields of a 4.0 card with folded lines, escapes and grouped properties', () => {
    const card = [
      'BEGIN:VCARD',
      'VERSION:4.0',
      'UID:urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1',
      'FN:Dr. Ada King\\, Countess',
      'N:King;Ada;Augusta;;Countess of Lovelace',
      'ORG:Analytical Engines;Research',
      'TITLE:Analyst',
      'NOTE:First line\\nsecond line that is long enough to be folded by any writer that fo',
      ' lds at 75 octets',
      'item1.EMAIL;TYPE=work,pref:ADA@example.org',
      'TEL;TYPE=cell:+44 20 7946 0000',
      "ADR;TYPE=home:;;12 St James's Square;London;;SW1Y 4JH;United Kingdom",
      'CATEGORIES:Friends,Math\\,Science',
      'END:VCARD',
    ].join('\r\n');
    const parsed = parseVCard(card);
    expect(parsed).toEqual({
      ok: true,
      value: {
        uid: 'urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1',
        fields: {
          display_name: 'Dr. Ada King, Countess',
          surname: 'King',
          given_name: 'Ada',
          middle_name: 'Augusta',
          suffix: 'Countess of Lovelace',
          company_name: 'Analytical Engines',
          job_title: 'Analyst',
          notes: 'First line\nsecond line that is long enough to be folded by any writer that folds at 75 octets',
          emails: [{ email: 'ada@example.org', type: 'work' }],
          phone_numbers: [{ number: '+44 20 7946 0000', type: 'cell' }],
          web_pages: [],
          physical_addresses: [
            {
              type: 'home',
              street_address: "12 St James's Square",
              city: 'London',
              postal_code: 'SW1Y 4JH',
              country: 'United Kingdom',
            },
          ],
          groups: [{ id: 'Friends' }, { id: 'Math,Science' }],
        },
      },
    });
  });

  it('writes a 3.0 card that reads back the same, folding long lines without splitting a character', () => {
    const fields = {
      given_name: 'Grace',
      surname: 'Hopper',
      notes: 'ü'.repeat(60) + '; a note, with separators',
      emails: [{ email: 'grace@example.org', type: 'work' }],
      phone_numbers: [{ number: '+1 555 0100' }],
      web_pages: [{ url: 'https://example.org/grace' }],
      physical_addresses: [],
      groups: [{ id: 'Navy' }],
    };
    const text = buildVCard('grace-1', fields);
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    expect(text).toContain('EMAIL;TYPE=WORK:grace@example.org');
    expect(text).toContain('CATEGORIES:Navy');
    expect(parseVCard(text)).toEqual({
      ok: true,
      value: { uid: 'grace-1', fields: { ...fields, display_name: 'Grace Hopper' } },
    });
  });

  it.each([
    ['not a card', 'BEGIN:VCALENDAR\r\nEND:VCALENDAR', /not a vCard/],
    ['too large', `BEGIN:VCARD\r\nNOTE:${'x'.repeat(VCARD_LIMITS.maxBytes)}\r\nEND:VCARD`, /larger than/],
    ['too many lines', `BEGIN:VCARD\r\n${'X-A:b\r\n'.repeat(VCARD_LIMITS.maxLines)}END:VCARD`, /too many lines/],
  ])('refuses %s', (_name, text, error) => {
    const parsed = parseVCard(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(error);
  });
});
