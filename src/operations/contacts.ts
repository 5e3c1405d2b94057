/**
 * Contact operations.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  ContactGroupSchema,
  ContactRefInputSchema,
  ContactSchema,
  CreateContactInputSchema,
  FindContactInputSchema,
  ListContactGroupsInputSchema,
  ListContactsInputSchema,
  UpdateContactInputSchema,
} from '../schemas/contacts.js';
import { defineOperation } from './define-operation.js';

export const listContacts = defineOperation({
  name: 'list_contacts',
  title: 'List contacts',
  description: 'Contacts: saved ones (source address_book) and people the mailbox wrote with (inbox).',
  input: ListContactsInputSchema,
  output: pageOf(ContactSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/contacts', envelope: 'list' },
  tool: true,
  agent: { omit: ['recurse'] },
  run: (core, input, { principal }) => core.contacts.list(principal, input),
});

export const listContactGroups = defineOperation({
  name: 'list_contact_groups',
  title: 'List contact groups',
  description:
    "Lists the mailbox's contact groups: the groups its contacts name (a contact's groups: [{id}]), each once, in id order; the id is stable and is also the group's name. Pass next_cursor as page_token for more.",
  input: ListContactGroupsInputSchema,
  output: pageOf(ContactGroupSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/contacts/groups', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.contacts.groups(principal, input),
});

export const getContact = defineOperation({
  name: 'get_contact',
  title: 'Get a contact',
  description: 'Returns one contact; profile_picture=true adds the base64 picture.',
  input: FindContactInputSchema,
  output: ContactSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/contacts/:contact_id' },
  tool: false,
  run: (core, input, { principal }) => core.contacts.find(principal, input),
});

export const createContact = defineOperation({
  name: 'create_contact',
  title: 'Create a contact',
  description: 'Saves a contact (source address_book). It needs at least a name, an email address or a phone number.',
  input: CreateContactInputSchema,
  output: ContactSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/contacts' },
  tool: false,
  run: (core, input, { principal }) => core.contacts.create(principal, input),
});

export const updateContact = defineOperation({
  name: 'update_contact',
  title: 'Update a contact',
  description: 'Changes a contact: given fields replace the old ones (lists such as emails replace the whole list).',
  input: UpdateContactInputSchema,
  output: ContactSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/contacts/:contact_id' },
  tool: false,
  run: (core, input, { principal }) => core.contacts.update(principal, input),
});

export const deleteContact = defineOperation({
  name: 'delete_contact',
  title: 'Delete a contact',
  description: 'Deletes a contact.',
  input: ContactRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/contacts/:contact_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.contacts.destroy(principal, input);
    return {};
  },
});
