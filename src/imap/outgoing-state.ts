/**
 * @module imap/outgoing-state
 * What the parts of the outgoing side (./outgoing.ts) share: the state made once by `createImapOutgoing`, the jobs'
 * payloads and their limits.
 */
import type { imapAccounts, imapMessages } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import type { Connector } from './connection.js';

/** The job kind of every change pushed to an account's IMAP server. */
export const IMAP_PUSH_JOB = 'imap.push';

/** Longest wait between two attempts of a job whose server fails. */
export const RETRY_CAP_MS = 30 * 60_000;

/** A job still failing this long after it was made is given up (logged, kept dead in the jobs table). */
export const GIVE_UP_MS = 3 * 24 * 60 * 60_000;

/** What an `imap.push` job does. */
export type PushPayload =
  | { op: 'change'; grant_id: string; message_ids: string[]; seen?: boolean; flagged?: boolean; folders?: string[] }
  | { op: 'expunge'; grant_id: string; links: { path: string; uid: number }[] }
  | { op: 'draft'; grant_id: string; draft_id: string; header_message_id: string }
  | { op: 'append_sent'; grant_id: string; message_id: string };

export type AccountRow = typeof imapAccounts.$inferSelect;
export type LinkRow = typeof imapMessages.$inferSelect;

/** What the functions of the outgoing side share, made once by `createImapOutgoing`. */
export interface OutgoingState {
  db: CoreDeps['db'];
  logger: CoreDeps['logger'];
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'secrets'>;
  connector: Connector;
  nowMs: () => number;
}
