/**
 * Connector and credential operations (`/v3/connectors`, `/v3/connectors/{provider}/creds`), as the nylas SDK's
 * `connectors` and `connectors.credentials` resources call them. Application configuration, so HTTP only (not
 * agent tools). Secrets (`settings.client_secret`, `credential_data`) go in and never come out.
 */
import {
  ConnectorRefInputSchema,
  ConnectorSchema,
  CreateConnectorInputSchema,
  CreateCredentialInputSchema,
  CredentialRefInputSchema,
  CredentialSchema,
  ListConnectorsInputSchema,
  ListCredentialsInputSchema,
  UpdateConnectorInputSchema,
  UpdateCredentialInputSchema,
} from '../schemas/connectors.js';
import { DeletedSchema, pageOf } from '../schemas/common.js';
import { defineOperation } from './define-operation.js';

export const listConnectors = defineOperation({
  name: 'list_connectors',
  title: 'List connectors',
  description:
    'Lists the connectors of this application (one per provider), oldest first (limit up to 200, then page_token = next_cursor). Client secrets are never included.',
  input: ListConnectorsInputSchema,
  output: pageOf(ConnectorSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/connectors', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectors.list(principal, input),
});

export const getConnector = defineOperation({
  name: 'get_connector',
  title: 'Get a connector',
  description: "Returns the application's connector of a provider: client_id, scopes and endpoint overrides.",
  input: ConnectorRefInputSchema,
  output: ConnectorSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/connectors/:provider' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectors.find(principal, input.provider),
});

export const createConnector = defineOperation({
  name: 'create_connector',
  title: 'Create a connector',
  description:
    'Creates the connector of a provider (one per provider). google and microsoft need settings.client_id and settings.client_secret (sealed at rest, never returned). ' +
    'settings may override the provider endpoints (authorization_url, token_url, revocation_url, userinfo_url, imap_host, imap_port, smtp_host, smtp_port, caldav_url, carddav_url, allow_insecure_tls).',
  input: CreateConnectorInputSchema,
  output: ConnectorSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/connectors' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectors.create(principal, input),
});

export const updateConnector = defineOperation({
  name: 'update_connector',
  title: 'Update a connector',
  description:
    'Changes a connector: name, scope, active_credential_id (null clears it) or settings. settings replaces the stored settings wholesale, ' +
    'except client_id and client_secret, which are kept unless given.',
  input: UpdateConnectorInputSchema,
  output: ConnectorSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/connectors/:provider' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectors.update(principal, input),
});

// The nylas SDK (8.x) sends connectors.update as PUT; Nylas documents PATCH. Both are answered alike: the PUT route
// is the PATCH operation under its own name (an operation has one route, and OpenAPI one operationId per route).
export const updateConnectorByPut = defineOperation({
  ...updateConnector,
  name: 'update_connector_put',
  title: 'Update a connector (PUT)',
  description: `${updateConnector.description} The same as PATCH, as the nylas SDK sends it.`,
  http: { method: 'PUT', path: '/connectors/:provider' },
});

export const deleteConnector = defineOperation({
  name: 'delete_connector',
  title: 'Delete a connector',
  description: 'Deletes the connector of a provider and its credentials.',
  input: ConnectorRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true, idempotent: false },
  http: { method: 'DELETE', path: '/connectors/:provider', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.accounts.connectors.destroy(principal, input.provider);
    return {};
  },
});

export const listCredentials = defineOperation({
  name: 'list_connector_credentials',
  title: 'List connector credentials',
  description:
    "Lists a connector's credentials, newest first by default (sort_by created_at or updated_at, order_by asc or desc; limit up to 200, then offset or page_token = next_cursor). The credential data is never included, only hashed_data.",
  input: ListCredentialsInputSchema,
  output: pageOf(CredentialSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/connectors/:provider/creds', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectorCredentials.list(principal, input),
});

export const getCredential = defineOperation({
  name: 'get_connector_credential',
  title: 'Get a connector credential',
  description: 'Returns one credential of a connector, without its data (hashed_data tells versions apart).',
  input: CredentialRefInputSchema,
  output: CredentialSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/connectors/:provider/creds/:credential_id' },
  tool: false,
  run: (core, input, { principal }) =>
    core.accounts.connectorCredentials.find(principal, input.provider, input.credential_id),
});

export const createCredential = defineOperation({
  name: 'create_connector_credential',
  title: 'Create a connector credential',
  description:
    'Adds a credential to a connector: serviceaccount (google: private_key_id, private_key, client_email), adminconsent (microsoft: client_id, client_secret) or connector (values overriding the connector). ' +
    'credential_data is sealed at rest and never returned.',
  input: CreateCredentialInputSchema,
  output: CredentialSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/connectors/:provider/creds' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectorCredentials.create(principal, input),
});

export const updateCredential = defineOperation({
  name: 'update_connector_credential',
  title: 'Update a connector credential',
  description: 'Renames a credential or replaces its credential_data wholesale (checked as on create).',
  input: UpdateCredentialInputSchema,
  output: CredentialSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/connectors/:provider/creds/:credential_id' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.connectorCredentials.update(principal, input),
});

export const deleteCredential = defineOperation({
  name: 'delete_connector_credential',
  title: 'Delete a connector credential',
  description: "Deletes a credential; if it was the connector's active credential, the connector has none after.",
  input: CredentialRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true, idempotent: false },
  http: { method: 'DELETE', path: '/connectors/:provider/creds/:credential_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.accounts.connectorCredentials.destroy(principal, input.provider, input.credential_id);
    return {};
  },
});
