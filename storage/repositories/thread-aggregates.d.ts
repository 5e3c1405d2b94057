/** Types of thread-aggregates.js (plain JavaScript, shared with the mail writer thread). */
import type { StoredAddress, messages, threads } from '../schema/mail.js';

type MessageRow = typeof messages.$inferSelect;
type ThreadRow = typeof threads.$inferSelect;

/** Participants kept on a thread. */
export declare const MAX_THREAD_PARTICIPANTS: number;
/** The folder whose messages count as sent. */
export declare const SENT_FOLDER: string;
/** Union of address lists, first spelling wins (case-insensitively), at most `limit`. */
export declare function mergeParticipants(base: StoredAddress[], more: StoredAddress[], limit?: number): StoredAddress[];
/** Union of two lists, order kept. */
export declare function union(base: string[], more: string[]): string[];
/** Folds one new message into a thread's aggregates, without reading its other messages. */
export declare function foldIntoThread(thread: ThreadRow, row: MessageRow): ThreadRow;
/** A new thread holding only `row`. */
export declare function newThread(id: string, row: MessageRow): ThreadRow;
