/**
 * @module messages/contracts
 * The messages area's shared types, as the store and the providers (src/providers/contracts.ts) exchange them.
 */

/** Flag and folder changes applied to one or more messages. */
export interface MessageChanges {
  unread?: boolean | undefined;
  starred?: boolean | undefined;
  folders?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}
