/**
 * @module schemas/common
 * Building blocks shared by every resource schema. Wire casing is snake_case, as in Nylas v3.
 */
import { z } from 'zod';

/** How a read returns bodies (issue 35): agents read Markdown by default; /v3 keeps the stored HTML unless asked. */
export const BodyFormatSchema = z.enum(['markdown', 'text', 'html']).optional().describe('Default markdown');

/** A read's budget in tokens (o200k_base, src/tokens). */
export const MaxTokensSchema = z.number().int().min(500).max(100_000).optional().describe('Token budget (tools: 5000)');

/** An object id in a path or body. */
export const IdSchema = z.string().min(1).max(256);

/** The grant a call acts on: its id, or its email address (also `grant:<id>` / `email:<address>`). */
export const GrantIdSchema = z.string().min(1).max(320).describe('Grant id or email address');

/** Unix time in seconds, as every timestamp on the wire. */
export const UnixSecondsSchema = z.number().int().min(0).describe('Unix timestamp in seconds');

/** Page size of cursor-paginated lists: default 50, at most 200. */
export const LimitSchema = z.number().int().min(1).max(200).optional().describe('1-200 (default 50)');

/** The opaque `next_cursor` of a previous page. */
export const PageTokenSchema = z.string().min(1).max(1024).optional().describe('A next_cursor');

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

/**
 * Nylas v3's limits on `metadata`: flat string pairs, at most 50 keys of up to 40 characters, values of up to 500
 * characters. Nesting is refused here, so no face ever stores (or serialises, recursively) a deep object.
 */
export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/** Your key-value metadata on messages, drafts, sends, calendars and events: the one schema for all of them. */
export const MetadataSchema = z
  .record(
    z.string().min(1).max(METADATA_LIMITS.keyLength),
    z
      .string({
        error: `metadata values must be strings of at most ${METADATA_LIMITS.valueLength} characters (flat key/value pairs, no nested objects)`,
      })
      .max(METADATA_LIMITS.valueLength, `metadata values are at most ${METADATA_LIMITS.valueLength} characters`),
    {
      error: (issue) =>
        issue.code === 'invalid_key' ? `metadata keys are 1 to ${METADATA_LIMITS.keyLength} characters` : undefined,
    },
  )
  .refine(
    (value) => Object.keys(value).length <= METADATA_LIMITS.keys,
    `metadata has at most ${METADATA_LIMITS.keys} keys`,
  )
  .meta({ maxProperties: METADATA_LIMITS.keys })
  .describe(
    `Your key-value metadata: at most ${METADATA_LIMITS.keys} keys of up to ${METADATA_LIMITS.keyLength} characters, string values of up to ${METADATA_LIMITS.valueLength} characters`,
  );
