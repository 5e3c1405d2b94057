/**
 * @module messages/contracts
 * The messages area's shared types, as the store and the providers (src/providers/contracts.ts) exchange them.
 */
import type { tables } from '../../storage/index.js';

/** A stored message (or draft), as the messages table holds it. */
export type MessageRow = typeof tables.messages.$inferSelect;

/** Flag and folder changes applied to one or more messages. */
export interface MessageChanges {
  unread?: boolean | undefined;
  starred?: boolean | undefined;
  folders?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}
