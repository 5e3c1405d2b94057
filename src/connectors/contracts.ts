/**
 * @module connectors/contracts
 * The connectors area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type {
  Connector,
  ConnectorProvider,
  CreateConnectorInput,
  CreateCredentialInput,
  Credential,
  CredentialData,
  ListConnectorsInput,
  ListCredentialsInput,
  UpdateConnectorInput,
  UpdateCredentialInput,
} from '../schemas/connectors.js';

/** A mail server of a connector's accounts. */
export interface ConnectorServer {
  host: string;
  port: number;
  /** TLS from the start (993, 465); otherwise STARTTLS. */
  secure: boolean;
}

/** Where a connector's accounts are reached: each the connector's override, else the real provider's, else absent. */
export interface ConnectorEndpoints {
  authorizationUrl?: string;
  tokenUrl?: string;
  revocationUrl?: string;
  userinfoUrl?: string;
  imap?: ConnectorServer;
  smtp?: ConnectorServer;
  caldavUrl?: string;
  carddavUrl?: string;
  /** Accept TLS certificates that fail verification (self-signed test servers). */
  allowInsecureTls: boolean;
}

/** What the hosted OAuth flow needs of a connector: its client (the secret opened), scopes and endpoints. */
export interface ConnectorClient {
  provider: ConnectorProvider;
  clientId?: string;
  /** The client secret in clear; never sent to a client of this service. */
  clientSecret?: string;
  scope: string[];
  activeCredentialId?: string;
  endpoints: ConnectorEndpoints;
}

/** A credential with its data opened, for the flows that use it (service accounts, admin consent). */
export interface OpenedCredential {
  id: string;
  name: string;
  credentialType: Credential['credential_type'];
  data: CredentialData;
}

/** What createConnectorService() returns (src/connectors/connector-service.ts); every call is scoped to the caller's application. */
export interface ConnectorService {
  /** The application's connectors, oldest first, cursor-paginated. */
  list(principal: Principal, input: ListConnectorsInput): Promise<{ data: Connector[]; next_cursor?: string }>;
  /** The connector of one provider. */
  find(principal: Principal, provider: ConnectorProvider): Promise<Connector>;
  /** Creates the provider's connector (one per provider: a second is a conflict); the client secret is sealed. */
  create(principal: Principal, input: CreateConnectorInput): Promise<Connector>;
  /** Changes name, scope, settings (wholesale; the client id and secret kept unless given) or the active credential. */
  update(principal: Principal, input: UpdateConnectorInput): Promise<Connector>;
  /** Deletes the connector and its credentials. */
  destroy(principal: Principal, provider: ConnectorProvider): Promise<void>;
  /** The connector's client with its secret opened, scopes and effective endpoints (see `connectorEndpoints`), for the hosted OAuth flow. */
  client(principal: Principal, provider: ConnectorProvider): Promise<ConnectorClient>;
}

/** What createCredentialService() returns (src/connectors/credential-service.ts); scoped like the connectors. */
export interface CredentialService {
  /** The connector's credentials, newest first unless asked otherwise, by offset or cursor. */
  list(principal: Principal, input: ListCredentialsInput): Promise<{ data: Credential[]; next_cursor?: string }>;
  /** One credential (without its data). */
  find(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<Credential>;
  /** Checks the data for the type and provider, seals it, stores the credential. */
  create(principal: Principal, input: CreateCredentialInput): Promise<Credential>;
  /** Renames a credential or replaces its data (checked as on create). */
  update(principal: Principal, input: UpdateCredentialInput): Promise<Credential>;
  /** Deletes a credential; a connector whose active credential it was has none after. */
  destroy(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<void>;
  /** A credential with its data opened, for the flows that use it. */
  open(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<OpenedCredential>;
}
