/**
 * @module contacts/contact-remote
 * Contacts kept on the account's CardDAV server (src/providers `RemoteCollections`, src/dav/): a contact created,
 * changed or deleted through the API is written there after its commit, as a vCard guarded by its ETag; and the
 * cards the account's sync finds changed on the server replace the contact they are (`contact.updated`,
 * `contact.deleted`), their CATEGORIES its groups.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { deletedEvent, eventRecorder } from '../outbox/index.js';
import type { RemoteCollections } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { RemoteContactSink } from './contracts.js';
import { columnsOf, toContact, type ContactRow } from './contact-mapper.js';
import { buildVCard, parseVCard, type VCardFields } from './vcard.js';

/** The card fields of a stored contact. */
export function cardFieldsOf(row: ContactRow): VCardFields {
  const text = (value: string | null | undefined) => (value ? value : undefined);
  const fields: VCardFields = {
    emails: row.emails,
    phone_numbers: row.phoneNumbers,
    web_pages: row.webPages,
    physical_addresses: row.physicalAddresses,
    groups: row.groups,
  };
  const optional: [keyof VCardFields, string | null | undefined][] = [
    ['display_name', row.displayName],
    ['given_name', row.givenName],
    ['middle_name', row.middleName],
    ['surname', row.surname],
    ['suffix', row.suffix],
    ['nickname', row.nickname],
    ['birthday', row.birthday],
    ['company_name', row.companyName],
    ['job_title', row.jobTitle],
    ['notes', row.notes],
  ];
  for (const [key, value] of optional) if (text(value)) (fields as unknown as Record<string, string>)[key] = value!;
  return fields;
}

/** After the commit of a change to `row` (null: deleted) of a grant whose contacts are on its CardDAV server: writes it there. */
export async function pushContact(
  remote: RemoteCollections | undefined,
  grant: GrantRow,
  contactId: string,
  row: ContactRow | null,
): Promise<void> {
  if (!remote || (await remote.contactsOf(grant)) !== 'remote') return;
  if (row === null) await remote.deleteContact(grant, { contactId });
  else await remote.putContact(grant, { contactId, vcard: (uid) => buildVCard(uid, cardFieldsOf(row)) });
}

/** Creates the sink the account's sync writes server cards through. */
export function createRemoteContactSink({
  db,
  clock,
  newId,
}: Pick<CoreDeps, 'db' | 'clock' | 'newId'>): RemoteContactSink {
  const record = eventRecorder({ newId, clock });
  return {
    async apply(grant, cards, within) {
      const at = unixSeconds(clock.now());
      return db.write(async (tx) => {
        const results: ({ ok: true; contactId: string } | { ok: false; error: string })[] = [];
        const stored: { index: number; contactId: string; uid: string | null }[] = [];
        for (const [index, { vcard, contactId }] of cards.entries()) {
          const parsed = parseVCard(vcard);
          if (!parsed.ok) {
            results.push(parsed);
            continue;
          }
          const columns = columnsOf(parsed.value.fields);
          const existing =
            contactId === undefined
              ? undefined
              : await tx.query.contacts.findFirst({
                  where: and(eq(tables.contacts.grantId, grant.id), eq(tables.contacts.id, contactId)),
                });
          const [row] = existing
            ? await tx
                .update(tables.contacts)
                .set({ ...columns, updatedAt: at })
                .where(eq(tables.contacts.id, existing.id))
                .returning()
            : await tx
                .insert(tables.contacts)
                .values({
                  ...columns,
                  id: newId(),
                  grantId: grant.id,
                  source: 'address_book',
                  createdAt: at,
                  updatedAt: at,
                })
                .returning();
          await record(tx, {
            applicationId: grant.applicationId,
            grantId: grant.id,
            type: 'contact.updated',
            objectId: row!.id,
            object: toContact(row!),
            createdAt: at,
          });
          stored.push({ index, contactId: row!.id, uid: parsed.value.uid });
          results.push({ ok: true, contactId: row!.id });
        }
        if (stored.length > 0) await within?.(tx, stored);
        return results;
      });
    },

    async remove(grant, contactId) {
      await db.write(async (tx) => {
        const gone = await tx
          .delete(tables.contacts)
          .where(and(eq(tables.contacts.grantId, grant.id), eq(tables.contacts.id, contactId)))
          .returning({ id: tables.contacts.id });
        if (gone.length > 0) await record(tx, deletedEvent(grant.applicationId, grant.id, 'contact', contactId));
      });
    },
  };
}
