/**
 * @module oauth/oauth-state
 * What the hosted OAuth functions share: the dependencies and the services of other areas they call.
 */
import type { ApplicationDetailsService, ApplicationService } from '../applications/index.js';
import type { ConnectorService } from '../connectors/index.js';
import type { GrantService } from '../grants/index.js';
import type { eventRecorder } from '../outbox/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { ProviderClient } from './provider-client.js';

/** The state of the hosted OAuth area. */
export interface OAuthState extends Pick<
  CoreDeps,
  'db' | 'config' | 'clock' | 'randomBytes' | 'secrets' | 'logger' | 'dns'
> {
  applications: Pick<ApplicationService, 'authenticateApiKey'>;
  applicationDetails: Pick<ApplicationDetailsService, 'listRedirectUris'>;
  connectors: Pick<ConnectorService, 'client'>;
  grants: Pick<GrantService, 'connect'>;
  provider: ProviderClient;
  record: ReturnType<typeof eventRecorder>;
}
