/**
 * @module deliverability/thread-replies-state
 * What the reply watch's parts (./thread-replies.ts) share: the job kind and what it carries, a tracked send as the
 * lookup finds it, and the state `createThreadReplies` makes.
 */
import type { CoreDeps } from '../ports/index.js';
import type { eventRecorder } from '../outbox/index.js';

/** The job kind that records a reply to a tracked send. */
export const THREAD_REPLIED_JOB = 'deliverability.thread_replied';

/** What the job carries: one entry per mailbox the message replies in. */
export interface ThreadRepliedPayload {
  /** Unix seconds at which the reply arrived. */
  at: number;
  /** The reply's normalised Message-ID, when it has one (what makes a reply count once). */
  header_message_id: string | null;
  /** The first Message-ID of its In-Reply-To (normalised), when any. */
  in_reply_to: string | null;
  replies: { grant_id: string; tracked_id: string; message_id: string; from_self: boolean }[];
}

/** A tracked send with reply tracking on, as the lookup of named Message-IDs finds it. */
export type TrackedRow = { id: string; grantId: string; headerMessageId: string };

/** What the functions of the reply watch share, made once by `createThreadReplies`. */
export interface ThreadRepliesState {
  db: CoreDeps['db'];
  /** Records an outbox event in a transaction. */
  record: ReturnType<typeof eventRecorder>;
}
