/**
 * Thread (conversation) operations.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  DeleteThreadInputSchema,
  GetThreadInputSchema,
  ListThreadsInputSchema,
  ThreadSchema,
  UpdateThreadInputSchema,
} from '../schemas/threads.js';
import {
  ClaimThreadInputSchema,
  ReleasedThreadSchema,
  ReleaseThreadInputSchema,
  ThreadClaimSchema,
} from '../schemas/thread-claims.js';
import type { Core } from '../core-types.js';
import { fieldText } from './agent.js';
import { bodyAsAsked } from './read-body.js';
import { defineOperation } from './define-operation.js';

export const listThreads = defineOperation({
  name: 'list_threads',
  title: 'List threads',
  description: 'Lists conversations, newest first, filtered as list_messages.',
  input: ListThreadsInputSchema,
  output: pageOf(ThreadSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/threads', envelope: 'list' },
  tool: true,
  agent: { compact: 'threads', omit: ['cc', 'bcc', 'any_email'] },
  run: async (core, input, { principal }) => {
    const page = await core.mail.threads.list(principal, input);
    return { ...page, data: await withClaims(core, page.data) };
  },
});

export const getThread = defineOperation({
  name: 'get_thread',
  title: 'Get a thread',
  description: 'One conversation with its messages, participants, folders and flags.',
  input: GetThreadInputSchema,
  output: ThreadSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/threads/:thread_id' },
  tool: true,
  agent: { body: 'thread' },
  run: async (core, input, { principal }) => {
    const [thread] = await withClaims(core, [await core.mail.threads.find(principal, input)]);
    const latest = thread!.latest_draft_or_message;
    return latest ? { ...thread!, latest_draft_or_message: await bodyAsAsked(latest, input) } : thread!;
  },
});

export const updateThread = defineOperation({
  name: 'update_thread',
  title: 'Update a thread',
  description: 'Marks every message of a conversation read or unread, starred or not, or moves them all to folders.',
  input: UpdateThreadInputSchema,
  output: ThreadSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/threads/:thread_id' },
  // Not a tool: update_message does the same per message, and tools/list stays within its 24,000 characters.
  tool: false,
  agent: { headline: (thread) => `Updated thread ${fieldText(thread.id ?? '')}` },
  run: (core, input, { principal }) => core.mail.threads.update(principal, input),
});

export const deleteThread = defineOperation({
  name: 'delete_thread',
  title: 'Delete a thread',
  description:
    'Moves every message of a conversation to trash (its drafts stay): get_thread still returns it, with "trash" among its folders. ' +
    'When they all are in trash already, deletes the conversation for good, drafts included; then get_thread answers not_found.',
  input: DeleteThreadInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/threads/:thread_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.mail.threads.destroy(principal, input);
    return {};
  },
});

/** Threads with the claim each one is under (issue 40, item 4), never its token. */
async function withClaims<T extends { id?: string | undefined; grant_id?: string | undefined }>(
  core: Core,
  threads: T[],
): Promise<T[]> {
  const grantId = threads.find((thread) => thread.grant_id)?.grant_id;
  if (!grantId) return threads;
  const claims = await core.oversight.claims.summaries(
    grantId,
    threads.flatMap((thread) => (thread.id ? [thread.id] : [])),
  );
  if (claims.size === 0) return threads;
  return threads.map((thread) => {
    const claim = thread.id ? claims.get(thread.id) : undefined;
    return claim ? { ...thread, claim } : thread;
  });
}

export const claimThread = defineOperation({
  name: 'claim_thread',
  title: 'Claim a thread',
  description: 'Holds a thread ttl_seconds so only you send into it: reply with its claim_token (that releases it).',
  input: ClaimThreadInputSchema,
  output: ThreadClaimSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/threads/:thread_id/claim' },
  tool: true,
  agent: { headline: (claim) => `Claimed thread ${fieldText(claim.thread_id ?? '')}` },
  run: (core, input, { principal, client }) => core.oversight.claims.claim(principal, { client }, input),
});

export const releaseThread = defineOperation({
  name: 'release_thread',
  title: 'Release a thread',
  description: 'Ends your thread claim.',
  input: ReleaseThreadInputSchema,
  output: ReleasedThreadSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/grants/:grant_id/threads/:thread_id/release' },
  tool: true,
  agent: {
    headline: (result) =>
      `${result.released ? 'Released' : 'No claim was running on'} thread ${fieldText(result.thread_id ?? '')}`,
  },
  run: (core, input, { principal }) => core.oversight.claims.release(principal, input),
});
