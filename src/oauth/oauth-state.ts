/**
 * @module oauth/oauth-state
 * What the hosted OAuth functions share: the dependencies and the services of other areas they call.
 */
import type { Tx } from '../../storage/index.js';
import type { ApplicationDetailsService, ApplicationService } from '../applications/index.js';
import type { ConnectorService, CredentialService } from '../connectors/index.js';
import type { GrantService } from '../grants/index.js';
import type { eventRecorder } from '../outbox/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { ProviderClient } from './provider-client.js';

/** The mail servers of an OAuth grant's account, and its address (the XOAUTH2 login name). */
export interface MailServers {
  email: string;
  imap: { host: string; port: number; secure: boolean };
  smtp: { host: string; port: number; secure: boolean };
  allowInsecureTls: boolean;
}

/** The state of the hosted OAuth area. */
export interface OAuthState extends Pick<
  CoreDeps,
  'db' | 'config' | 'clock' | 'randomBytes' | 'secrets' | 'logger' | 'dns'
> {
  applications: Pick<ApplicationService, 'authenticateApiKey'>;
  applicationDetails: Pick<ApplicationDetailsService, 'listRedirectUris'>;
  connectors: Pick<ConnectorService, 'client'>;
  /** The connector credentials that mint the tokens of service-account and app-only grants (./app-tokens.ts). */
  credentials: Pick<CredentialService, 'open'>;
  /** `create`: the hosted IMAP form connects its account as `POST /v3/connect/custom` does. */
  grants: Pick<GrantService, 'connect' | 'create'>;
  provider: ProviderClient;
  /**
   * Stores the mail account of an OAuth grant in the grant's transaction (src/imap/accounts.ts `saveOAuthAccount`:
   * IMAP and SMTP with XOAUTH2 on the connector's servers).
   */
  mailAccounts: {
    save(tx: Tx, grantId: string, servers: MailServers, atMs: number): Promise<void>;
  };
  /**
   * The calendars and contacts of an OAuth grant's account over CalDAV and CardDAV with its bearer token
   * (src/dav/dav-accounts.ts `oauthDavAccounts`): found before the grant is stored, stored in its transaction.
   * Without it, OAuth grants have mail alone.
   */
  davAccounts?: {
    discover(
      urls: { caldavUrl?: string; carddavUrl?: string },
      accessToken: string,
    ): Promise<{ save(tx: Tx, grantId: string, atMs: number): Promise<void> }>;
  };
  record: ReturnType<typeof eventRecorder>;
}
