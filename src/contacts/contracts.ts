/**
 * @module contacts/contracts
 * The contacts area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
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
import type { GrantRow, Tx } from '../../storage/index.js';

/** What createContactService() returns (src/contacts/contact-service.ts). */
export interface ContactService {
  /** The contact groups of the mailbox: the groups its contacts name, each once, in id order (a page). */
  groups(
    principal: Principal,
    input: ListContactGroupsInput,
  ): Promise<{
    data: ContactGroup[];
    next_cursor?: string;
  }>;
  /** A page of the grant's contacts, oldest first. */
  list(
    principal: Principal,
    input: ListContactsInput,
  ): Promise<{
    data: Contact[];
    next_cursor?: string;
  }>;
  /** One contact (with its picture when `profile_picture` is true). */
  find(principal: Principal, input: FindContactInput): Promise<Contact>;
  /** Creates a contact; it needs at least a name, an email address or a phone number. */
  create(principal: Principal, input: CreateContactInput): Promise<Contact>;
  /** Changes a contact; given fields replace (lists replace whole). */
  update(principal: Principal, input: UpdateContactInput): Promise<Contact>;
  /**
   * Adds the people a grant corresponds with as contacts (source `inbox`), skipping addresses it already
   * has and its own. Pass the mail transaction as `tx` to commit with the message. Returns how many were added.
   */
  collect(
    grant: GrantRow,
    people: {
      email: string;
      name?: string | undefined;
    }[],
    tx?: Tx,
  ): Promise<number>;
  /** Deletes a contact. */
  destroy(principal: Principal, input: ContactRefInput): Promise<void>;
  /** Where the sync of CardDAV address books writes the server's cards. */
  readonly remote: RemoteContactSink;
}

/**
 * Where the sync of an account whose contacts are on a CardDAV server (src/dav/) writes the cards it finds there:
 * one card replaces the contact it is (`contactId`, or a new contact); a card gone removes it.
 */
export interface RemoteContactSink {
  /**
   * Stores cards in one transaction, each replacing its contact (`contactId`) or making a new one: a result per card,
   * `{ ok: false }` (nothing stored of it) for text that is not a readable vCard. `within` runs once in the transaction,
   * after the writes, given the index, the contact's id and the card's UID of each card stored (the sync records the
   * objects there).
   */
  apply(
    grant: GrantRow,
    cards: { vcard: string; contactId: string | undefined }[],
    within?: (tx: Tx, stored: { index: number; contactId: string; uid: string | null }[]) => Promise<void>,
  ): Promise<({ ok: true; contactId: string } | { ok: false; error: string })[]>;
  /** Removes a contact (with `contact.deleted`). */
  remove(grant: GrantRow, contactId: string): Promise<void>;
}
