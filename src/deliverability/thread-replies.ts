/**
 * @module deliverability/thread-replies
 * `thread.replied`: a message that arrives for a grant and names, in its In-Reply-To or References, the Message-ID of
 * a send of that grant tracked with `thread_replies`, is a reply to it. It works the same for mail from any outside
 * mailer (the SMTP listener) and for a reply from another mailbox of this service (local delivery): both go through
 * `deliverInbound` (src/mail/inbound.ts), which asks {@link ThreadReplies.jobsFor} before it stores the message.
 *
 * - The check is cheap where it must be: a message without In-Reply-To or References costs one bounded scan of its
 *   header section ({@link namesEarlierMessages}), no query. One that has them costs one indexed read of
 *   `tracked_messages` (grant, Message-ID), for the message's mailboxes; a connected account's synced mail is asked
 *   about many messages at once ({@link ThreadReplies.jobsForMany}): first one short read of whether its mailbox has
 *   any tracked send (most have none, and then no header is read), then one read for them all.
 * - When it replies to a tracked send, a durable job (`deliverability.thread_replied`) is stored IN THE MESSAGE'S OWN
 *   TRANSACTION (on the writer thread's fast path as on the parsed path), so the reply is counted if and only if it
 *   was stored, and after the sender was answered.
 * - The job records an `engagement_events` row (kind `reply`), adds one to `tracked_messages.replies_count` and
 *   records the `thread.replied` event, in one transaction. A reply counts once: the event row's id is derived from
 *   the tracked send and the reply's own Message-ID (or, without one, its id), so a job that runs twice, or the same
 *   reply delivered twice (a sender retrying after a lost answer), adds nothing the second time.
 * - When a message names several tracked sends of one mailbox, the closest counts: In-Reply-To first, then
 *   References from the last (the parent) back to the first (the root).
 *
 * The watch is plain functions over a small state made here: reading a message's headers
 * (./thread-replies-headers.ts), finding the tracked sends it replies to (./thread-replies-find.ts), the job that
 * records the replies (./thread-replies-record.ts) and what they share (./thread-replies-state.ts).
 */
import type { GrantRow } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { JobInput, JobHandler } from '../jobs/index.js';
import type { StoredCopy } from '../mail/contracts.js';
import { jobsForMany } from './thread-replies-find.js';
import { recordReplies } from './thread-replies-record.js';
import { THREAD_REPLIED_JOB, type ThreadRepliesState } from './thread-replies-state.js';

export { namesEarlierMessages, replyHeadersOf } from './thread-replies-headers.js';
export { THREAD_REPLIED_JOB } from './thread-replies-state.js';

/** Finds the tracked sends a message replies to, and records the replies. */
export interface ThreadReplies {
  /**
   * For a message about to be stored for `grants`: undefined when it replies to no send of theirs tracked with
   * `thread_replies` (most mail, decided without a query when it names no earlier message), else the jobs to store
   * in its transaction, given its stored copies (one per grant, in order).
   */
  jobsFor(
    raw: Buffer,
    grants: readonly Pick<GrantRow, 'id' | 'email'>[],
    at: number,
  ): Promise<((copies: readonly StoredCopy[]) => JobInput[]) | undefined>;
  /**
   * {@link jobsFor} of many messages at once (a connected account's synced mail), with one read of
   * `tracked_messages` for all of them; one answer per message, in order.
   */
  jobsForMany(
    messages: readonly { raw: Buffer; grants: readonly Pick<GrantRow, 'id' | 'email'>[] }[],
    at: number,
  ): Promise<(((copies: readonly StoredCopy[]) => JobInput[]) | undefined)[]>;
  /** The job's handler, by kind. */
  handlers: Record<string, JobHandler>;
}

/** Creates the reply watch of tracked sends. */
export function createThreadReplies(deps: Pick<CoreDeps, 'db' | 'clock' | 'newId'>): ThreadReplies {
  const state: ThreadRepliesState = { db: deps.db, record: eventRecorder(deps) };
  const run: JobHandler = (job) => recordReplies(state, job);

  return {
    async jobsFor(raw, grants, at) {
      const [jobs] = await jobsForMany(state, [{ raw, grants }], at);
      return jobs;
    },
    jobsForMany: (messages, at) => jobsForMany(state, messages, at),
    handlers: { [THREAD_REPLIED_JOB]: run },
  };
}
