/**
 * @module schemas/common
 * Building blocks shared by every resource schema. Wire casing is snake_case, as in Nylas v3.
 */
import { z } from 'zod';

/** An object id in a path or body. */
export const IdSchema = z.string().min(1).max(256);

/** The grant a call acts on: its id, or its email address (also `grant:<id>` / `email:<address>`). */
export const GrantIdSchema = z.string().min(1).max(320).describe('Grant id, or the grant\'s email address');

/** Unix time in seconds, as every timestamp on the wire. */
export const UnixSecondsSchema = z.number().int().min(0).describe('Unix timestamp in seconds');

/** Page size of cursor-paginated lists: default 50, at most 200. */
export const LimitSchema = z.number().int().min(1).max(200).optional().describe('Page size, 1 to 200 (default 50)');

/** The opaque `next_cursor` of a previous page. */
export const PageTokenSchema = z.string().min(1).max(1024).optional().describe('The next_cursor of the previous page');

/** `{ name, email }` as used for senders and recipients. */
export const EmailAddressSchema = z.object({
  name: z.string().max(256).optional().describe('Display name'),
  email: z.email().max(320).describe('Email address'),
});

/** A list page: `data` plus the cursor of the next page (absent on the last one). */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item).describe('The items of this page'),
    next_cursor: z.string().optional().describe('Pass as page_token to get the next page; absent on the last page'),
  });
}

/** Output of deletions: nothing but the request id on the wire. */
export const DeletedSchema = z.object({}).describe('Empty on success');

/** Free-form key-value metadata (keys kept verbatim). */
export const MetadataSchema = z.record(z.string().max(256), z.string().max(1024));
