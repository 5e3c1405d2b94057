/**
 * @module secrets/key-source
 * Where the installation's secret key comes from, and the check that it is the key of this database.
 *
 * 1. `AGENTPOST_SECRET_KEY` when given (32 characters or more).
 * 2. Else the key file (`AGENTPOST_SECRET_KEY_FILE`, by default `agentpost.key` beside the database file).
 * 3. Else, on a fresh installation only, a new random key, written to that file with mode 0600 and announced once
 *    in the log: zero configuration keeps working, as in n8n or Grafana.
 *
 * A database that holds secrets keeps a sealed check value in `service_keys` (written the first time a key is
 * used on it); one with sealed values in its secret columns holds secrets too, check value or not. Start-up opens it: a key that is missing (no variable, no file) or another (it does not open the check
 * value) stops the start with a {@link ConfigError} that says which setting to fix, instead of a service that
 * fails later on every DKIM signature, webhook delivery or IMAP login. An in-memory database has nothing to keep,
 * so it gets a random key of its own and no file.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import { tables, type Database } from '../../storage/index.js';
import { ConfigError, type Config } from '../config.js';
import type { Logger, SecretBox } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { createSecretBox, MIN_SECRET_LENGTH, SecretKeyError } from './secret-box.js';
import { holdsSealedSecrets } from './stored-secrets.js';

/** Name of the key file made beside an embedded database file. */
export const DEFAULT_KEY_FILE_NAME = 'agentpost.key';

/** Name of the check value in `service_keys`. */
export const KEY_CHECK_NAME = 'secret-key-check';

/** What the check value holds, sealed. */
const KEY_CHECK_TEXT = 'agentpost secret key check v1';

/** Where the key came from: said in messages, so the operator knows which setting to look at. */
export type SecretKeyOrigin =
  | { kind: 'variable' }
  | { kind: 'file'; path: string }
  | { kind: 'created'; path: string }
  | { kind: 'ephemeral' }
  /** A box the embedder or a test built itself (`CoreDeps.secrets` given to `createDeps`). */
  | { kind: 'given' };

/** The key (and earlier keys) an installation seals with, and where it came from. */
export interface ResolvedSecretKey {
  key: string;
  previousKeys: string[];
  origin: SecretKeyOrigin;
}

/**
 * The key file of a configuration and database: `AGENTPOST_SECRET_KEY_FILE`, else `agentpost.key` beside an
 * embedded database file; undefined for an in-memory database and for a libSQL server (which has no file beside
 * which to keep one).
 */
export function secretKeyFileOf(config: Config, db: Pick<Database, 'file'>): string | undefined {
  if (config.secrets.keyFile) return resolve(config.secrets.keyFile);
  return db.file ? join(dirname(db.file), DEFAULT_KEY_FILE_NAME) : undefined;
}

/** Whether the database holds secrets sealed at rest (its check value was written). */
async function readKeyCheck(db: Database): Promise<string | undefined> {
  const [row] = await db.orm
    .select({ value: tables.serviceKeys.value })
    .from(tables.serviceKeys)
    .where(eq(tables.serviceKeys.name, KEY_CHECK_NAME));
  return row?.value;
}

/** Reads a key file; undefined when it does not exist. */
function readKeyFile(path: string, logger: Logger): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(
      `Cannot read the secret key file ${path} (AGENTPOST_SECRET_KEY_FILE): ${(error as Error).message}`,
    );
  }
  if (text.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `The secret key file ${path} (AGENTPOST_SECRET_KEY_FILE) holds ${text.length} characters; a key has at least ${MIN_SECRET_LENGTH}.`,
    );
  }
  // Anyone who can read the file can open every secret in the database.
  if ((statSync(path).mode & 0o077) !== 0)
    logger.warn('the secret key file can be read by other users; make it mode 0600', { path });
  return text;
}

/**
 * Writes a new key file (mode 0600); when another process made it first, its key is the one used. The key is
 * written to a file of its own first and then linked to its name, so the name never shows a half-written key to a
 * process starting at the same moment.
 */
function createKeyFile(path: string, logger: Logger): { key: string; created: boolean } {
  const key = randomBytes(32).toString('base64url');
  const draft = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(draft, `${key}\n`, { mode: 0o600, flag: 'wx' });
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: readKeyFile(path, logger)!, created: false };
    throw new ConfigError(
      `Cannot write the secret key file ${path} (AGENTPOST_SECRET_KEY_FILE names another place, AGENTPOST_SECRET_KEY gives the key): ${(error as Error).message}`,
    );
  } finally {
    rmSync(draft, { force: true });
  }
  return { key, created: true };
}

/**
 * Finds the key: the variable, the key file, or (fresh installation only: the database holds no secrets yet) a new
 * key written to the key file. Throws a {@link ConfigError} when a database that holds secrets has no key, and when
 * a libSQL server database has neither the variable nor a key file named.
 */
export async function resolveSecretKey({
  db,
  config,
  logger,
}: {
  db: Database;
  config: Config;
  logger: Logger;
}): Promise<ResolvedSecretKey> {
  const previousKeys = config.secrets.previousKeys;
  if (config.secrets.key) return { key: config.secrets.key, previousKeys, origin: { kind: 'variable' } };
  const path = secretKeyFileOf(config, db);
  if (!path) {
    if (!config.databaseUrl.startsWith('file:')) {
      throw new ConfigError(
        'AGENTPOST_SECRET_KEY: required with a libSQL server database (AGENTPOST_DATABASE_URL is not a file:, so there is no place beside it for a key file). ' +
          `Give every process the same key of ${MIN_SECRET_LENGTH} or more characters, or name a key file in AGENTPOST_SECRET_KEY_FILE.`,
      );
    }
    // In memory: nothing outlives the process, so neither does the key.
    return { key: randomBytes(32).toString('base64url'), previousKeys, origin: { kind: 'ephemeral' } };
  }
  const fromFile = readKeyFile(path, logger);
  if (fromFile !== undefined) return { key: fromFile, previousKeys, origin: { kind: 'file', path } };
  if ((await readKeyCheck(db)) !== undefined || (await holdsSealedSecrets(db))) {
    throw new ConfigError(
      `This database holds secrets sealed at rest, but their key is missing: AGENTPOST_SECRET_KEY is unset and the key file ${path} does not exist. ` +
        'Restore the key file from the backup taken with the database (or set AGENTPOST_SECRET_KEY_FILE to where it is, or AGENTPOST_SECRET_KEY to the key); a new key could not open the secrets already stored.',
    );
  }
  const made = createKeyFile(path, logger);
  if (made.created) {
    logger.info(
      'made a new secret key for secrets at rest (fresh installation); back it up with the database, or set AGENTPOST_SECRET_KEY',
      { path },
    );
  }
  return { key: made.key, previousKeys, origin: made.created ? { kind: 'created', path } : { kind: 'file', path } };
}

/** The setting an operator fixes when the key is wrong, for messages. */
function originText(origin: SecretKeyOrigin): string {
  switch (origin.kind) {
    case 'variable':
      return 'AGENTPOST_SECRET_KEY';
    case 'file':
    case 'created':
      return `the key file ${origin.path} (AGENTPOST_SECRET_KEY is unset)`;
    case 'ephemeral':
      return 'a key made for this in-memory database';
    case 'given':
      return 'the secret box given to the service';
  }
}

/**
 * Checks that `box` is the key of this database: opens the check value, or writes it on a database that has none.
 * A check value sealed with a previous key (a rotation) is sealed again with the current one.
 * @throws ConfigError when the key is another than the one the database's secrets were sealed with.
 */
export async function checkSecretKey(
  { db, clock }: { db: Database; clock: { now(): Date } },
  box: SecretBox,
  origin: SecretKeyOrigin,
): Promise<void> {
  let stored = await readKeyCheck(db);
  if (stored === undefined) {
    const sealed = box.seal(KEY_CHECK_TEXT);
    await db.write((tx) =>
      tx
        .insert(tables.serviceKeys)
        .values({ name: KEY_CHECK_NAME, value: sealed, createdAt: unixSeconds(clock.now()) })
        .onConflictDoNothing(),
    );
    // Another process may have written its own first: that one is the check.
    stored = await readKeyCheck(db);
    if (stored === undefined) throw new Error('the secret key check could not be stored');
  }
  let opened: string | undefined;
  try {
    opened = box.open(stored);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
  }
  if (opened !== KEY_CHECK_TEXT) {
    throw new ConfigError(
      `The secret key is not the one this database's secrets were sealed with: ${originText(origin)} gives key ${box.keyId}, and no key given opens them. ` +
        'Set AGENTPOST_SECRET_KEY (or the key file) back to the key in use before; to move to a new key, give the new one in AGENTPOST_SECRET_KEY and the old one in AGENTPOST_PREVIOUS_SECRET_KEYS, and start once.',
    );
  }
  if (!box.isCurrent(stored)) {
    const resealed = box.seal(KEY_CHECK_TEXT);
    await db.write((tx) =>
      tx.update(tables.serviceKeys).set({ value: resealed }).where(eq(tables.serviceKeys.name, KEY_CHECK_NAME)),
    );
  }
}

/**
 * The installation's secret box, checked against the database: {@link resolveSecretKey}, then
 * {@link checkSecretKey}. Call after the migrations, before anything reads a secret.
 */
export async function openSecretBox(deps: {
  db: Database;
  config: Config;
  logger: Logger;
  clock: { now(): Date };
}): Promise<SecretBox> {
  const resolved = await resolveSecretKey(deps);
  const box = createSecretBox(resolved.key, resolved.previousKeys);
  await checkSecretKey(deps, box, resolved.origin);
  return box;
}
