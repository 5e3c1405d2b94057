/**
 * @module connectors/credential-service
 * Connector credentials (`/v3/connectors/{provider}/creds`): Google service accounts, Microsoft admin consent apps
 * and connector overrides. The data is sealed at rest and never returned: the wire shows `hashed_data`, a SHA-256
 * of it, so a client can tell whether two credentials hold the same data.
 */
import { createHash } from 'node:crypto';
import type { Principal } from '../access.js';
import { AppError, invalid, notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { CoreDeps } from '../ports/index.js';
import type {
  ConnectorProvider,
  CreateCredentialInput,
  Credential,
  CredentialData,
  ListCredentialsInput,
  UpdateCredentialInput,
} from '../schemas/connectors.js';
import { unixSeconds } from '../time.js';
import {
  deleteCredentialRow,
  findConnectorRow,
  findCredentialByName,
  findCredentialRow,
  insertCredential,
  listCredentialRows,
  updateCredentialRow,
  type CredentialRow,
} from './connector-store.js';
import type { CredentialService, OpenedCredential } from './contracts.js';

type CredentialType = CredentialRow['credentialType'];

/** What each credential type needs: the provider it belongs to (if only one) and the keys its data must hold. */
const CREDENTIAL_RULES: Record<CredentialType, { provider?: ConnectorProvider; required: readonly string[] }> = {
  serviceaccount: { provider: 'google', required: ['private_key_id', 'private_key', 'client_email'] },
  adminconsent: { provider: 'microsoft', required: ['client_id', 'client_secret'] },
  connector: { required: [] },
};

/** Throws a 400 naming the first thing wrong with `data` for a credential of this type on this provider. */
function checkCredentialData(provider: ConnectorProvider, type: CredentialType, data: CredentialData): void {
  const rule = CREDENTIAL_RULES[type];
  if (rule.provider !== undefined && rule.provider !== provider)
    throw invalid('credential_type', `${type} credentials belong to the ${rule.provider} connector, not ${provider}.`);
  for (const key of rule.required) {
    const value = data[key];
    if (typeof value !== 'string' || value === '')
      throw invalid(
        `credential_data.${key}`,
        `a ${type} credential needs ${rule.required.join(', ')} (strings); ${key} is missing or empty.`,
      );
  }
  if (Object.keys(data).length === 0) throw invalid('credential_data', 'give at least one value.');
}

/** SHA-256 (hex) of the data as JSON with its keys sorted, so the same data always hashes alike. */
function hashData(data: CredentialData): string {
  const sorted = Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

/** A row on the wire: never the data. */
function toCredential(row: CredentialRow): Credential {
  return {
    id: row.id,
    name: row.name,
    credential_type: row.credentialType,
    hashed_data: row.hashedData,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function nameTaken(name: string): AppError {
  return new AppError('conflict', `name: this connector already has a credential named ${JSON.stringify(name)}.`, {
    field: 'name',
  });
}

/** Creates the credential service. */
export function createCredentialService(deps: Pick<CoreDeps, 'db' | 'clock' | 'secrets' | 'newId'>): CredentialService {
  const { db, clock, secrets, newId } = deps;
  const now = () => unixSeconds(clock.now());

  async function requireRow(principal: Principal, provider: ConnectorProvider, id: string): Promise<CredentialRow> {
    const row = await findCredentialRow(db.orm, principal.applicationId, provider, id);
    if (!row) throw notFound('Credential', id);
    return row;
  }

  return {
    async list(principal: Principal, input: ListCredentialsInput) {
      if (!(await findConnectorRow(db.orm, principal.applicationId, input.provider)))
        throw notFound('Connector', input.provider);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const cursor = decodeCursor(input.page_token, 1);
      const offset = cursor !== undefined ? Number(cursor[0]) : (input.offset ?? 0);
      if (!Number.isInteger(offset) || offset < 0) throw invalid('page_token', 'pass next_cursor unchanged.');
      const sortBy = input.sort_by === 'updated_at' || input.sort_by === 'updatedAt' ? 'updatedAt' : 'createdAt';
      const rows = await listCredentialRows(db.orm, principal.applicationId, input.provider, {
        limit: limit + 1,
        offset,
        sortBy,
        order: input.order_by ?? 'desc',
      });
      // The cursor is the offset of the next page: the SDK pages credentials by offset.
      return toPage(rows, limit, () => [offset + limit], toCredential);
    },

    async find(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<Credential> {
      return toCredential(await requireRow(principal, provider, credentialId));
    },

    async create(principal: Principal, input: CreateCredentialInput): Promise<Credential> {
      checkCredentialData(input.provider, input.credential_type, input.credential_data);
      const at = now();
      const row = await db.write(async (tx) => {
        if (!(await findConnectorRow(tx, principal.applicationId, input.provider)))
          throw notFound('Connector', input.provider);
        if (await findCredentialByName(tx, principal.applicationId, input.provider, input.name))
          throw nameTaken(input.name);
        return insertCredential(tx, {
          id: newId(),
          applicationId: principal.applicationId,
          provider: input.provider,
          name: input.name,
          credentialType: input.credential_type,
          dataSealed: secrets.seal(JSON.stringify(input.credential_data)),
          hashedData: hashData(input.credential_data),
          createdAt: at,
          updatedAt: at,
        });
      });
      return toCredential(row);
    },

    async update(principal: Principal, input: UpdateCredentialInput): Promise<Credential> {
      const row = await db.write(async (tx) => {
        const current = await findCredentialRow(tx, principal.applicationId, input.provider, input.credential_id);
        if (!current) throw notFound('Credential', input.credential_id);
        if (input.name !== undefined && input.name !== current.name) {
          if (await findCredentialByName(tx, principal.applicationId, input.provider, input.name))
            throw nameTaken(input.name);
        }
        const data = input.credential_data;
        if (data !== undefined) checkCredentialData(input.provider, current.credentialType, data);
        return updateCredentialRow(tx, principal.applicationId, input.provider, input.credential_id, {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(data !== undefined ? { dataSealed: secrets.seal(JSON.stringify(data)), hashedData: hashData(data) } : {}),
          updatedAt: now(),
        });
      });
      if (!row) throw notFound('Credential', input.credential_id);
      return toCredential(row);
    },

    async destroy(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<void> {
      const removed = await db.write((tx) => deleteCredentialRow(tx, principal.applicationId, provider, credentialId));
      if (!removed) throw notFound('Credential', credentialId);
    },

    async open(principal: Principal, provider: ConnectorProvider, credentialId: string): Promise<OpenedCredential> {
      const row = await requireRow(principal, provider, credentialId);
      return {
        id: row.id,
        name: row.name,
        credentialType: row.credentialType,
        data: JSON.parse(secrets.open(row.dataSealed)) as CredentialData,
      };
    },
  };
}
