/**
 * @module imap
 * The front door of src/imap/: what other areas, the operations and the faces use of it.
 */
export type { FetchedBytes, FetchSession, ImapSync, PassOptions } from './contracts.js';
export { createImapAccounts, saveOAuthAccount, type OAuthAccountServers } from './accounts.js';
export { createConnector } from './connection.js';
export { createImapOutgoing } from './outgoing.js';
export { createImapSyncRunner, type ImapSyncRunner } from './sync-runner.js';
export { createImapSync } from './sync.js';
