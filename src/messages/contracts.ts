/**
 * @module messages/contracts
 * The messages area's shared types, as the store and the providers (src/providers/contracts.ts) exchange them.
 */
import type { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type {
  DeleteThreadInput,
  GetThreadInput,
  ListThreadsInput,
  Thread,
  UpdateThreadInput,
} from '../schemas/threads.js';

/** A stored message (or draft), as the messages table holds it. */
export type MessageRow = typeof tables.messages.$inferSelect;

/** Flag and folder changes applied to one or more messages. */
export interface MessageChanges {
  unread?: boolean | undefined;
  starred?: boolean | undefined;
  folders?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** What createThreadService() returns (src/messages/thread-service.ts). */
export interface ThreadService {
  /** A page of threads, the one with the newest message first. */
  list(
    principal: Principal,
    input: ListThreadsInput,
  ): Promise<{
    data: Thread[];
    next_cursor?: string;
  }>;
  /** One thread with its message ids and latest message. */
  find(principal: Principal, input: GetThreadInput): Promise<Thread>;
  /** Applies read, starred or folders to every message of the thread (its drafts stay as they are). */
  update(principal: Principal, input: UpdateThreadInput): Promise<Thread>;
  /**
   * Moves the thread's messages to trash (its drafts stay drafts); the thread is still found, with `trash` among its
   * folders. When all its messages already are in trash, deletes the thread for good (drafts included): then 404.
   */
  destroy(principal: Principal, input: DeleteThreadInput): Promise<void>;
}
