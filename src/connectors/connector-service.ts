/**
 * @module connectors/connector-service
 * Connectors (`/v3/connectors`): at most one per provider and application, holding the OAuth client (the secret
 * sealed by the secret box, never returned), the default scopes and the settings that override the provider's
 * endpoints. `client()` is what the hosted OAuth flow reads.
 */
import type { Principal } from '../access.js';
import { AppError, invalid, notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { CoreDeps } from '../ports/index.js';
import type {
  Connector,
  ConnectorProvider,
  ConnectorSettingsInput,
  CreateConnectorInput,
  ListConnectorsInput,
  UpdateConnectorInput,
} from '../schemas/connectors.js';
import { unixSeconds } from '../time.js';
import {
  deleteConnectorRow,
  findConnectorRow,
  findCredentialRow,
  insertConnector,
  listConnectorRows,
  updateConnectorRow,
  type ConnectorRow,
} from './connector-store.js';
import type { ConnectorClient, ConnectorService } from './contracts.js';
import { connectorEndpoints } from './endpoints.js';

/** Providers whose accounts sign in with OAuth at the provider: their connectors need a client id and secret. */
const OAUTH_PROVIDERS: ReadonlySet<string> = new Set(['google', 'microsoft', 'zoom']);

type StoredSettings = ConnectorRow['settings'];

/** The settings kept in the `settings` column: everything but the client id and secret (their own columns). */
function storedSettings(settings: ConnectorSettingsInput | undefined): StoredSettings {
  const kept: StoredSettings = {};
  for (const [key, value] of Object.entries(settings ?? {})) {
    if (key === 'client_id' || key === 'client_secret' || value === undefined) continue;
    kept[key] = value;
  }
  return kept;
}

/** A row on the wire: `settings` with the client id, never the secret. */
function toConnector(row: ConnectorRow): Connector {
  return {
    provider: row.provider,
    name: row.name,
    settings: { ...(row.clientId !== null ? { client_id: row.clientId } : {}), ...row.settings },
    scope: row.scope,
    ...(row.activeCredentialId !== null ? { active_credential_id: row.activeCredentialId } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Creates the connector service. */
export function createConnectorService(deps: Pick<CoreDeps, 'db' | 'clock' | 'secrets'>): ConnectorService {
  const { db, clock, secrets } = deps;
  const now = () => unixSeconds(clock.now());

  async function requireRow(principal: Principal, provider: ConnectorProvider): Promise<ConnectorRow> {
    const row = await findConnectorRow(db.orm, principal.applicationId, provider);
    if (!row) throw notFound('Connector', provider);
    return row;
  }

  /** A connector of an OAuth provider must end with both a client id and a client secret. */
  function checkClient(provider: string, clientId: string | null, clientSecretSealed: string | null): void {
    if (!OAUTH_PROVIDERS.has(provider)) return;
    if (clientId === null)
      throw invalid('settings.client_id', `a ${provider} connector needs the OAuth client id of your app.`);
    if (clientSecretSealed === null)
      throw invalid('settings.client_secret', `a ${provider} connector needs the OAuth client secret of your app.`);
  }

  return {
    async list(principal: Principal, input: ListConnectorsInput) {
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const rows = await listConnectorRows(db.orm, principal.applicationId, limit + 1, after);
      return toPage(rows, limit, (row) => [row.createdAt, row.provider], toConnector);
    },

    async find(principal: Principal, provider: ConnectorProvider): Promise<Connector> {
      return toConnector(await requireRow(principal, provider));
    },

    async create(principal: Principal, input: CreateConnectorInput): Promise<Connector> {
      const clientId = input.settings?.client_id ?? null;
      const secret = input.settings?.client_secret;
      const clientSecretSealed = secret !== undefined ? secrets.seal(secret) : null;
      checkClient(input.provider, clientId, clientSecretSealed);
      const at = now();
      const row = await db.write(async (tx) => {
        if (await findConnectorRow(tx, principal.applicationId, input.provider))
          throw new AppError(
            'conflict',
            `provider: this application already has a ${input.provider} connector (one per provider); update or delete it instead.`,
            { field: 'provider' },
          );
        return insertConnector(tx, {
          applicationId: principal.applicationId,
          provider: input.provider,
          name: input.name ?? input.provider,
          clientId,
          clientSecretSealed,
          scope: [...new Set(input.scope ?? [])],
          settings: storedSettings(input.settings),
          activeCredentialId: null,
          createdAt: at,
          updatedAt: at,
        });
      });
      return toConnector(row);
    },

    async update(principal: Principal, input: UpdateConnectorInput): Promise<Connector> {
      const row = await db.write(async (tx) => {
        const current = await findConnectorRow(tx, principal.applicationId, input.provider);
        if (!current) throw notFound('Connector', input.provider);
        const clientId = input.settings?.client_id ?? current.clientId;
        const secret = input.settings?.client_secret;
        const clientSecretSealed = secret !== undefined ? secrets.seal(secret) : current.clientSecretSealed;
        checkClient(input.provider, clientId, clientSecretSealed);
        const active = input.active_credential_id;
        if (
          typeof active === 'string' &&
          !(await findCredentialRow(tx, principal.applicationId, input.provider, active))
        )
          throw invalid('active_credential_id', `${JSON.stringify(active)} is not a credential of this connector.`);
        return updateConnectorRow(tx, principal.applicationId, input.provider, {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.scope !== undefined ? { scope: [...new Set(input.scope)] } : {}),
          ...(input.settings !== undefined ? { settings: storedSettings(input.settings) } : {}),
          ...(active !== undefined ? { activeCredentialId: active } : {}),
          clientId,
          clientSecretSealed,
          updatedAt: now(),
        });
      });
      if (!row) throw notFound('Connector', input.provider);
      return toConnector(row);
    },

    async destroy(principal: Principal, provider: ConnectorProvider): Promise<void> {
      const removed = await db.write((tx) => deleteConnectorRow(tx, principal.applicationId, provider));
      if (!removed) throw notFound('Connector', provider);
    },

    async client(principal: Principal, provider: ConnectorProvider): Promise<ConnectorClient> {
      const row = await requireRow(principal, provider);
      return {
        provider,
        ...(row.clientId !== null ? { clientId: row.clientId } : {}),
        ...(row.clientSecretSealed !== null ? { clientSecret: secrets.open(row.clientSecretSealed) } : {}),
        scope: row.scope,
        ...(row.activeCredentialId !== null ? { activeCredentialId: row.activeCredentialId } : {}),
        endpoints: connectorEndpoints(row.provider, row.settings),
      };
    },
  };
}
