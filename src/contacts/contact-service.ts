/**
 * @module contacts/contact-service
 * A grant's contacts in the Nylas model: list (filters email, phone_number, source, group), find, create,
 * update, delete; `collect` adds the people a grant corresponds with (source `inbox`), for the mail flow to call.
 */
import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { deletedEvent, eventRecorder } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type {
  Contact,
  ContactGroup,
  ContactRefInput,
  CreateContactInput,
  FindContactInput,
  ListContactGroupsInput,
  ListContactsInput,
  UpdateContactInput,
} from '../schemas/contacts.js';
import type { ContactService } from './contracts.js';
import { contactIdByEmail, groupIdsOf, hasEmail, hasPhoneNumber, inGroup } from './contact-store.js';

export type ContactRow = typeof tables.contacts.$inferSelect;
type ContactInsert = typeof tables.contacts.$inferInsert;

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

type ContactFields = Omit<UpdateContactInput, 'grant_id' | 'contact_id'>;

/** Row columns of the fields a request gives (absent fields are left out). */
function columnsOf(input: ContactFields): Partial<ContactInsert> {
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

/** Creates the contact service. */
export function createContactService({ db, clock, newId }: CoreDeps, grants: GrantService): ContactService {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

  async function requireContact(grant: GrantRow, contactId: string): Promise<ContactRow> {
    const row = await db.orm.query.contacts.findFirst({
      where: and(eq(tables.contacts.grantId, grant.id), eq(tables.contacts.id, contactId)),
    });
    if (!row) throw notFound('Contact', contactId);
    return row;
  }

  return {
    /**
     * The contact groups of the mailbox: the groups its contacts name (`groups: [{id}]`), each once, in id order.
     * A group's id is the one the contacts give, so it is stable, and it is also its name (a `user` group).
     */
    async groups(
      principal: Principal,
      input: ListContactGroupsInput,
    ): Promise<{ data: ContactGroup[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 1);
      const ids = await groupIdsOf(db.orm, grant.id, after?.[0] as string | undefined, limit + 1);
      return toPage(
        ids,
        limit,
        (id) => [id],
        (id): ContactGroup => ({ id, grant_id: grant.id, object: 'contact_group', name: id, group_type: 'user' }),
      );
    },

    /** A page of the grant's contacts, oldest first. */
    async list(principal: Principal, input: ListContactsInput): Promise<{ data: Contact[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2);
      const conditions: (SQL | undefined)[] = [eq(tables.contacts.grantId, grant.id)];
      if (input.email) conditions.push(hasEmail(input.email.trim().toLowerCase()));
      if (input.phone_number) conditions.push(hasPhoneNumber(input.phone_number.trim()));
      if (input.source) conditions.push(eq(tables.contacts.source, input.source));
      if (input.group) conditions.push(inGroup(input.group));
      if (after) {
        const [created, id] = after as [number, string];
        conditions.push(
          or(
            gt(tables.contacts.createdAt, created),
            and(eq(tables.contacts.createdAt, created), gt(tables.contacts.id, id)),
          ),
        );
      }
      const rows = await db.orm
        .select()
        .from(tables.contacts)
        .where(and(...conditions))
        .orderBy(asc(tables.contacts.createdAt), asc(tables.contacts.id))
        .limit(limit + 1);
      return toPage(
        rows,
        limit,
        (row) => [row.createdAt, row.id],
        (row) => toContact(row),
      );
    },

    /** One contact (with its picture when `profile_picture` is true). */
    async find(principal: Principal, input: FindContactInput): Promise<Contact> {
      const grant = await grants.require(principal, input.grant_id);
      return toContact(await requireContact(grant, input.contact_id), input.profile_picture === true);
    },

    /** Creates a contact; it needs at least a name, an email address or a phone number. */
    async create(principal: Principal, input: CreateContactInput): Promise<Contact> {
      const grant = await grants.require(principal, input.grant_id);
      const columns = columnsOf(input);
      const named =
        columns.displayName || columns.givenName || columns.surname || columns.nickname || columns.companyName;
      if (
        !named &&
        !(columns.emails && columns.emails.length > 0) &&
        !(columns.phoneNumbers && columns.phoneNumbers.length > 0)
      ) {
        throw new AppError(
          'invalid_request',
          'given_name: a contact needs at least a name (given_name, surname, display_name, nickname or company_name), an email address or a phone number.',
          {
            field: 'given_name',
          },
        );
      }
      const at = now();
      return db.write(async (tx) => {
        const [row] = await tx
          .insert(tables.contacts)
          .values({
            ...columns,
            id: newId(),
            grantId: grant.id,
            source: input.source ?? 'address_book',
            createdAt: at,
            updatedAt: at,
          })
          .returning();
        const contact = toContact(row!);
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: grant.id,
          type: 'contact.updated',
          objectId: row!.id,
          object: contact,
          createdAt: at,
        });
        return contact;
      });
    },

    /** Changes a contact; given fields replace (lists replace whole). */
    async update(principal: Principal, input: UpdateContactInput): Promise<Contact> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await requireContact(grant, input.contact_id);
      const columns = columnsOf(input);
      return db.write(async (tx) => {
        const [row] = await tx
          .update(tables.contacts)
          .set({ ...columns, updatedAt: now() })
          .where(and(eq(tables.contacts.grantId, grant.id), eq(tables.contacts.id, current.id)))
          .returning();
        if (!row) throw notFound('Contact', input.contact_id);
        const contact = toContact(row);
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: grant.id,
          type: 'contact.updated',
          objectId: row.id,
          object: contact,
          createdAt: row.updatedAt,
        });
        return contact;
      });
    },

    /**
     * Adds the people a grant corresponds with as contacts (source `inbox`), skipping addresses it already
     * has and its own. Pass the mail transaction as `tx` to commit with the message. Returns how many were added.
     */
    async collect(grant: GrantRow, people: { email: string; name?: string | undefined }[], tx?: Tx): Promise<number> {
      const work = async (executor: Tx) => {
        let added = 0;
        const seen = new Set<string>();
        for (const person of people.slice(0, 100)) {
          const email = person.email.trim().toLowerCase();
          if (!/^[^\s@]+@[^\s@]+$/.test(email) || email === grant.email || seen.has(email)) continue;
          seen.add(email);
          if ((await contactIdByEmail(executor, grant.id, email)) !== undefined) continue;
          const at = now();
          const name = person.name?.trim().slice(0, 256) || null;
          const [row] = await executor
            .insert(tables.contacts)
            .values({
              id: newId(),
              grantId: grant.id,
              displayName: name,
              source: 'inbox',
              emails: [{ email }],
              primaryEmail: email,
              createdAt: at,
              updatedAt: at,
            })
            .returning();
          await record(executor, {
            applicationId: grant.applicationId,
            grantId: grant.id,
            type: 'contact.updated',
            objectId: row!.id,
            object: toContact(row!),
            createdAt: at,
          });
          added++;
        }
        return added;
      };
      return tx ? work(tx) : db.write(work);
    },

    /** Deletes a contact. */
    async destroy(principal: Principal, input: ContactRefInput): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await requireContact(grant, input.contact_id);
      await db.write(async (tx) => {
        await tx
          .delete(tables.contacts)
          .where(and(eq(tables.contacts.grantId, grant.id), eq(tables.contacts.id, current.id)));
        await record(tx, deletedEvent(principal.applicationId, grant.id, 'contact', current.id));
      });
    },
  };
}

export type { ContactService } from './contracts.js';
