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
import { columnsOf, toContact, type ContactInsert, type ContactRow } from './contact-mapper.js';
import { createRemoteContactSink, pushContact } from './contact-remote.js';
import type { RemoteCollections } from '../ports/index.js';
import { contactIdByEmail, groupIdsOf, hasEmail, hasPhoneNumber, inGroup } from './contact-store.js';

export type { ContactRow } from './contact-mapper.js';
export { toContact } from './contact-mapper.js';

/** A 400 unless the contact has a name, an email address or a phone number. */
function requireSomething(columns: Partial<ContactInsert>): void {
  const named = columns.displayName || columns.givenName || columns.surname || columns.nickname || columns.companyName;
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
}

/** Creates the contact service. */
export function createContactService(
  { db, clock, newId }: CoreDeps,
  grants: GrantService,
  remote?: RemoteCollections,
): ContactService {
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
      requireSomething(columns);
      const at = now();
      const created = await db.write(async (tx) => {
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
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: grant.id,
          type: 'contact.updated',
          objectId: row!.id,
          object: toContact(row!),
          createdAt: at,
        });
        return row!;
      });
      await pushContact(remote, grant, created.id, created);
      return toContact(created);
    },

    /** Changes a contact; given fields replace (lists replace whole). */
    async update(principal: Principal, input: UpdateContactInput): Promise<Contact> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await requireContact(grant, input.contact_id);
      const columns = columnsOf(input);
      const updated = await db.write(async (tx) => {
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
        return row;
      });
      await pushContact(remote, grant, updated.id, updated);
      return toContact(updated);
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
      await pushContact(remote, grant, current.id, null);
    },

    remote: createRemoteContactSink({ db, clock, newId }),
  };
}

export type { ContactService } from './contracts.js';
