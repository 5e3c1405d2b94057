/**
 * @module schemas/contacts
 * Contacts on the wire, as in Nylas v3 `models/contacts.ts`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, LimitSchema, PageTokenSchema } from './common.js';

const TypeSchema = z.string().max(32).optional().describe('work, home, mobile or other');
const ShortText = z.string().max(256);

export const ContactSourceSchema = z
  .enum(['address_book', 'inbox', 'domain'])
  .describe('address_book (made through the API) or inbox (collected from mail)');

export const ContactEmailSchema = z.object({ email: z.email().max(320).describe('Address'), type: TypeSchema });
export const ContactPhoneSchema = z.object({
  number: z.string().min(1).max(64).describe('Phone number'),
  type: TypeSchema,
});
export const ContactAddressSchema = z.object({
  street_address: ShortText.optional(),
  city: ShortText.optional(),
  postal_code: z.string().max(32).optional(),
  state: ShortText.optional(),
  country: ShortText.optional(),
  type: TypeSchema,
  format: z.string().max(64).optional(),
});
export const ContactWebPageSchema = z.object({
  url: z.string().min(1).max(2048).describe('Web address'),
  type: TypeSchema,
});
export const ContactImSchema = z.object({
  im_address: z.string().min(1).max(256).describe('Instant-messaging handle'),
  type: TypeSchema,
});
export const ContactGroupRefSchema = z.object({ id: z.string().min(1).max(256).describe('Contact group id') });

export const ContactSchema = z
  .object({
    id: z.string().describe('Contact id'),
    grant_id: z.string(),
    object: z.literal('contact'),
    display_name: z.string().describe('Name to show (built from the name parts, or the first address, when not set)'),
    given_name: z.string().optional(),
    middle_name: z.string().optional(),
    surname: z.string().optional(),
    suffix: z.string().optional(),
    nickname: z.string().optional(),
    birthday: z.string().optional().describe('YYYY-MM-DD'),
    company_name: z.string().optional(),
    job_title: z.string().optional(),
    manager_name: z.string().optional(),
    office_location: z.string().optional(),
    notes: z.string().optional(),
    picture_url: z.string().optional(),
    picture: z.string().optional().describe('Base64 picture; only with profile_picture=true'),
    source: ContactSourceSchema,
    emails: z.array(z.object({ email: z.string(), type: z.string().optional() })),
    phone_numbers: z.array(z.object({ number: z.string(), type: z.string().optional() })),
    physical_addresses: z.array(ContactAddressSchema),
    web_pages: z.array(z.object({ url: z.string(), type: z.string().optional() })),
    im_addresses: z.array(z.object({ im_address: z.string(), type: z.string().optional() })),
    groups: z.array(ContactGroupRefSchema),
  })
  .meta({ id: 'Contact' });
export type Contact = z.infer<typeof ContactSchema>;

export const ListContactsInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  email: z.string().max(320).optional().describe('Exactly this address'),
  phone_number: z.string().max(64).optional().describe('Exactly this phone number'),
  source: ContactSourceSchema.optional().describe('From this source'),
  group: z.string().max(256).optional().describe('In this contact group id'),
  recurse: z.boolean().optional().describe('Accepted for compatibility (groups here have no subgroups)'),
});
export type ListContactsInput = z.infer<typeof ListContactsInputSchema>;

export const FindContactInputSchema = z.object({
  grant_id: GrantIdSchema,
  contact_id: IdSchema,
  profile_picture: z.boolean().optional().describe('Include the base64 picture'),
});
export type FindContactInput = z.infer<typeof FindContactInputSchema>;

export const ContactRefInputSchema = z.object({ grant_id: GrantIdSchema, contact_id: IdSchema });
export type ContactRefInput = z.infer<typeof ContactRefInputSchema>;

const contactFields = {
  display_name: ShortText.optional().describe('Name to show'),
  given_name: ShortText.optional().describe('First name'),
  middle_name: ShortText.optional(),
  surname: ShortText.optional().describe('Last name'),
  suffix: z.string().max(64).optional(),
  nickname: ShortText.optional(),
  birthday: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date such as 1990-04-21')
    .optional()
    .describe('YYYY-MM-DD'),
  company_name: ShortText.optional(),
  job_title: ShortText.optional(),
  manager_name: ShortText.optional(),
  office_location: ShortText.optional(),
  notes: z.string().max(10_000).optional(),
  picture_url: z.string().max(2048).optional(),
  picture: z
    .string()
    .max(1_400_000)
    .regex(/^[A-Za-z0-9+/=\s]*$/, 'base64')
    .optional()
    .describe('Base64 picture, up to about 1 MB'),
  emails: z.array(ContactEmailSchema).max(50).optional().describe('Email addresses'),
  phone_numbers: z.array(ContactPhoneSchema).max(50).optional(),
  physical_addresses: z.array(ContactAddressSchema).max(20).optional(),
  web_pages: z.array(ContactWebPageSchema).max(20).optional(),
  im_addresses: z.array(ContactImSchema).max(20).optional(),
  groups: z.array(ContactGroupRefSchema).max(50).optional(),
};

export const CreateContactInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    ...contactFields,
    source: ContactSourceSchema.optional().describe('Default address_book'),
  })
  .meta({ id: 'CreateContactInput' });
export type CreateContactInput = z.infer<typeof CreateContactInputSchema>;

export const UpdateContactInputSchema = z
  .object({ grant_id: GrantIdSchema, contact_id: IdSchema, ...contactFields })
  .meta({ id: 'UpdateContactInput' });
export type UpdateContactInput = z.infer<typeof UpdateContactInputSchema>;

export const ContactGroupSchema = z
  .object({
    id: z.string().describe('Contact group id'),
    grant_id: z.string(),
    object: z.literal('contact_group'),
    name: z.string().optional().describe('Group name'),
    group_type: z.enum(['system', 'user', 'other']).optional().describe('system, user or other'),
    path: z.string().optional().describe('Path of the group in the provider'),
  })
  .meta({ id: 'ContactGroup' });
export type ContactGroup = z.infer<typeof ContactGroupSchema>;

export const ListContactGroupsInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
});
export type ListContactGroupsInput = z.infer<typeof ListContactGroupsInputSchema>;
