/**
 * @module connectors
 * The front door of src/connectors/: connectors (one per provider and application: the OAuth client, scopes and the
 * endpoint overrides) and their credentials, and the effective endpoints the hosted OAuth flow reads.
 */
export type {
  ConnectorClient,
  ConnectorEndpoints,
  ConnectorServer,
  ConnectorService,
  CredentialService,
  OpenedCredential,
} from './contracts.js';
export { createConnectorService } from './connector-service.js';
export { createCredentialService } from './credential-service.js';
export { connectorEndpoints } from './endpoints.js';
