/**
 * @module secrets/stored-secrets
 * Keeps every secret column sealed with the current key. Run at start-up, after the migrations and the key check
 * (src/secrets/key-source.ts): a value still in clear (stored before secrets were sealed at rest) is sealed, and a
 * value sealed with a previous key (`AGENTPOST_PREVIOUS_SECRET_KEYS`, a rotation) is sealed again with the current
 * one, so that the previous key can be dropped after one start.
 *
 * Each value is replaced only if it is still the one read (a compare-and-set), so a process that changed it meanwhile
 * (a rotated webhook secret) wins, and several processes starting together do no harm.
 */
import { and, eq, isNotNull, like } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { tables, type Database } from '../../storage/index.js';
import { ConfigError } from '../config.js';
import type { Logger, SecretBox } from '../ports/index.js';
import { SEALED_PREFIX, SecretKeyError, openStored } from './secret-box.js';

/** One column that holds secrets, and the column that identifies its row. */
interface SecretColumn {
  /** For messages: `table.column`. */
  name: string;
  table: SQLiteTable;
  key: SQLiteColumn;
  column: SQLiteColumn;
  /** Only these rows hold secrets (service_keys holds the signing key among others). */
  where?: ReturnType<typeof eq>;
}

/** Every column that holds a secret at rest. */
const SECRET_COLUMNS: SecretColumn[] = [
  {
    name: 'domains.dkim_private_key_pem',
    table: tables.domains,
    key: tables.domains.id,
    column: tables.domains.dkimPrivateKeyPem,
  },
  { name: 'webhooks.secret', table: tables.webhooks, key: tables.webhooks.id, column: tables.webhooks.secret },
  // The tracking and VERP signing key (src/deliverability/signing.ts).
  {
    name: 'service_keys.value',
    table: tables.serviceKeys,
    key: tables.serviceKeys.name,
    column: tables.serviceKeys.value,
    where: eq(tables.serviceKeys.name, 'deliverability-signing'),
  },
  {
    name: 'imap_accounts.imap_password_sealed',
    table: tables.imapAccounts,
    key: tables.imapAccounts.grantId,
    column: tables.imapAccounts.imapPasswordSealed,
  },
  {
    name: 'imap_accounts.smtp_password_sealed',
    table: tables.imapAccounts,
    key: tables.imapAccounts.grantId,
    column: tables.imapAccounts.smtpPasswordSealed,
  },
  // The CalDAV and CardDAV passwords of connected accounts (src/dav/), when not the IMAP one.
  {
    name: 'dav_accounts.caldav_password_sealed',
    table: tables.davAccounts,
    key: tables.davAccounts.grantId,
    column: tables.davAccounts.caldavPasswordSealed,
  },
  {
    name: 'dav_accounts.carddav_password_sealed',
    table: tables.davAccounts,
    key: tables.davAccounts.grantId,
    column: tables.davAccounts.carddavPasswordSealed,
  },
  // A connector's key is (application, provider); the compare-and-set on the sealed value (unique by its random
  // nonce) pins the one row, so the application id serves as the key here.
  {
    name: 'connectors.client_secret_sealed',
    table: tables.connectors,
    key: tables.connectors.applicationId,
    column: tables.connectors.clientSecretSealed,
  },
  {
    name: 'connector_credentials.data_sealed',
    table: tables.connectorCredentials,
    key: tables.connectorCredentials.id,
    column: tables.connectorCredentials.dataSealed,
  },
];

/**
 * Whether any secret column holds a sealed value: such a database is not a fresh installation even without its
 * key check value, so a missing key must not be replaced by a new one.
 */
export async function holdsSealedSecrets(db: Database): Promise<boolean> {
  for (const spec of SECRET_COLUMNS) {
    const [row] = await db.orm
      .select({ key: spec.key })
      .from(spec.table)
      .where(and(like(spec.column, `${SEALED_PREFIX}%`), spec.where))
      .limit(1);
    if (row) return true;
  }
  return false;
}

/** Rows updated in one transaction: small, so a start does not hold the write lock long. */
const BATCH = 200;

/**
 * Seals what is clear and seals again what a previous key sealed, in every secret column. Returns how many values
 * it wrote. A value no key given can open stops the start (ConfigError): it says which key is missing.
 */
export async function sealStoredSecrets({
  db,
  secrets,
  logger,
}: {
  db: Database;
  secrets: SecretBox;
  logger: Logger;
}): Promise<number> {
  let written = 0;
  for (const spec of SECRET_COLUMNS) {
    const rows = (await db.orm
      .select({ key: spec.key, value: spec.column })
      .from(spec.table)
      .where(and(isNotNull(spec.column), spec.where))) as { key: string; value: string }[];
    const property = columnProperty(spec);
    const stale = rows.filter((row) => !secrets.isCurrent(row.value));
    for (let start = 0; start < stale.length; start += BATCH) {
      const batch = stale.slice(start, start + BATCH).map((row) => {
        try {
          return { ...row, sealed: secrets.seal(openStored(secrets, row.value)) };
        } catch (error) {
          if (!(error instanceof SecretKeyError)) throw error;
          throw new ConfigError(
            `A secret in ${spec.name} cannot be opened with the keys given (${error.message}). Give the key it was sealed with in AGENTPOST_PREVIOUS_SECRET_KEYS (comma-separated), start once, then drop it.`,
          );
        }
      });
      await db.write(async (tx) => {
        for (const row of batch) {
          const updated = await tx
            .update(spec.table)
            .set({ [property]: row.sealed })
            .where(and(eq(spec.key, row.key), eq(spec.column, row.value)))
            .returning({ key: spec.key });
          written += updated.length;
        }
      });
    }
  }
  if (written > 0) logger.info('sealed stored secrets with the current secret key', { values: written });
  return written;
}

/** The property name of a column in its table (what `.set()` takes). */
function columnProperty(spec: SecretColumn): string {
  const entry = Object.entries(spec.table).find(([, value]) => value === spec.column);
  if (!entry) throw new Error(`no column ${spec.name}`);
  return entry[0];
}
