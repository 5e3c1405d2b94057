/**
 * Thread claims (extension, not in Nylas; issue 40, item 4): an agent holds a thread for a time so that other agents
 * on the mailbox do not answer it too. `claim_token` is shown once, to the holder; reads show the claim without it.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';

/** Bounds of a claim's lease, in seconds. */
export const CLAIM_TTL = { min: 10, max: 3600, default: 300 } as const;

/** The token that lets a send or draft into a claimed thread, and renews or releases the claim. */
export const ClaimTokenSchema = z.string().min(1).max(100);

/** Extension field of the send and draft inputs. */
export const ClaimTokenFieldSchema = ClaimTokenSchema.optional().describe('Your claim_thread token');

export const ClaimedBySchema = z
  .object({
    api_key_id: z.string().nullable().describe('The key that claimed (null: the application)'),
    name: z.string().describe("The key's name"),
    session: z.string().optional().describe('The MCP session that claimed'),
  })
  .meta({ id: 'ClaimedBy' });

/** A claim as thread reads show it (never its token). */
export const ThreadClaimSummarySchema = z
  .object({
    claimed_by: ClaimedBySchema,
    expires_at: UnixSecondsSchema.describe('When the claim lapses (unix seconds)'),
  })
  .meta({ id: 'ThreadClaimSummary' });
export type ThreadClaimSummary = z.infer<typeof ThreadClaimSummarySchema>;

export const ClaimThreadInputSchema = z.object({
  grant_id: GrantIdSchema,
  thread_id: IdSchema.describe('Thread id'),
  ttl_seconds: z
    .number()
    .int()
    .min(CLAIM_TTL.min)
    .max(CLAIM_TTL.max)
    .optional()
    .describe(`${CLAIM_TTL.min}–${CLAIM_TTL.max} (default ${CLAIM_TTL.default})`),
  claim_token: ClaimTokenSchema.optional().describe('Renews your claim'),
});
export type ClaimThreadInput = z.infer<typeof ClaimThreadInputSchema>;

export const ThreadClaimSchema = z
  .object({
    grant_id: z.string(),
    thread_id: z.string(),
    claim_token: z.string().describe('Pass as claim_token to send into the thread, renew or release'),
    expires_at: UnixSecondsSchema,
    claimed_by: ClaimedBySchema,
  })
  .meta({ id: 'ThreadClaim' });
export type ThreadClaim = z.infer<typeof ThreadClaimSchema>;

export const ReleaseThreadInputSchema = z.object({
  grant_id: GrantIdSchema,
  thread_id: IdSchema.describe('Thread id'),
  claim_token: ClaimTokenSchema.describe('From claim_thread'),
});
export type ReleaseThreadInput = z.infer<typeof ReleaseThreadInputSchema>;

export const ReleasedThreadSchema = z.object({
  thread_id: z.string(),
  released: z.boolean().describe('False when the claim had lapsed already'),
});
