/**
 * @module core-hooks
 * The core's typed event hook: how one area reacts to what happens in another that is built before it (a grant
 * deleted, a connected account made, an invitation received) without a forward reference. `createCore` makes it
 * first; an area built early emits through it, and the area that reacts, built later, listens. Reactions that must
 * survive a crash or reach another process go through the outbox instead (src/outbox/).
 */
import type { GrantRow } from '../storage/index.js';
import type { InboundInvitation, InvitationOutcome } from './calendar/index.js';

/** The events, by name, and the signature of their listeners. */
export interface CoreEvents {
  /** A grant was deleted (committed): caches of this process keyed by what it owned forget it. */
  grantDeleted: (grantId: string) => void;
  /**
   * A grant is about to be deleted: what it holds at its provider (an OAuth refresh token) is revoked first, best
   * effort (a listener never throws; the deletion goes on whatever the provider answers).
   */
  grantDeleting: (grantId: string) => Promise<void>;
  /**
   * The current OAuth access token of a grant, for its mail's XOAUTH2 logins (the connector of src/imap/ asks; the
   * grant tokens of src/oauth/ answer): refreshed first when it is about to expire, or at once with `force`.
   */
  grantAccessToken: (grantId: string, options: { force: boolean }) => Promise<string>;
  /** A connected account was created or re-authenticated (committed): its sync starts now. */
  grantConnected: (grantId: string) => void;
  /** A write to a connected account's CalDAV/CardDAV server was refused (changed there): its sync runs now. */
  remoteChanged: (grantId: string) => void;
  /** A suspended grant was resumed (committed): the scheduled sends it held are due now. */
  grantResumed: (grantId: string) => void;
  /** An iCalendar object arrived in a mailbox's mail: the calendar applies it and says what it did. */
  invitationReceived: (grant: GrantRow, invitation: InboundInvitation) => Promise<InvitationOutcome[]>;
}

/** The hook: listeners by event name, called in the order they were added. */
export interface CoreHooks {
  /** Adds a listener; returns the function that removes it. */
  on<Name extends keyof CoreEvents>(name: Name, listener: CoreEvents[Name]): () => void;
  /** Calls every listener of `name` with `args`, in order; returns what each returned. */
  emit<Name extends keyof CoreEvents>(
    name: Name,
    ...args: Parameters<CoreEvents[Name]>
  ): ReturnType<CoreEvents[Name]>[];
}

/** Creates the core's event hook, with no listeners. */
export function createCoreHooks(): CoreHooks {
  const listeners = new Map<keyof CoreEvents, ((...args: never[]) => unknown)[]>();
  return {
    on(name, listener) {
      const list = listeners.get(name) ?? [];
      list.push(listener);
      listeners.set(name, list);
      return () => {
        const at = list.indexOf(listener);
        if (at >= 0) list.splice(at, 1);
      };
    },
    emit(name, ...args) {
      return (listeners.get(name) ?? [])
        .slice()
        .map((listener) => (listener as (...values: typeof args) => ReturnType<CoreEvents[typeof name]>)(...args));
    },
  };
}
