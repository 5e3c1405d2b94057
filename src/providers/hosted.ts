/**
 * @module providers/hosted
 * The hosted mailbox (`nylas`): the store is the mailbox, mail arrives through our MX and leaves through our
 * relay/MX or local delivery, so there is nothing to sync in or push out. Every hook is a no-op and sending keeps
 * the outbound queue's own routing.
 */
import { HOSTED_PROVIDER, type MailboxProvider } from './contracts.js';

/** The hosted mailbox's provider (one for every grant of that kind). */
export const hostedProvider: MailboxProvider = {
  name: HOSTED_PROVIDER,
  async changed() {},
  async destroying() {},
  async draftSaved() {},
  async draftRemoved() {},
  handlers: {},
};
