/**
 * @module dav
 * The front door of src/dav/: calendars and contacts of connected accounts over CalDAV (RFC 4791) and CardDAV
 * (RFC 6352): connecting them (`withDavAccounts`), where a grant's calendars and contacts are and the writes of the
 * API's changes (`createDavRemote`, the providers' `RemoteCollections`), and their sync (`createDavSyncRunner`).
 */
export type { DavPassSummary, DavSyncRunner } from './contracts.js';
export { createDavClient, type DavClient } from './dav-client.js';
export { oauthDavAccounts, withDavAccounts } from './dav-accounts.js';
export { createDavRemote } from './dav-remote.js';
export { createDavSyncRunner } from './dav-runner.js';
