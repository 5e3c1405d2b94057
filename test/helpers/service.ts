/**
 * Starts the real service for a test: a temporary libSQL file, the HTTP server on an ephemeral port, and a
 * `nylas` SDK client pointed at it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import NylasModule from 'nylas';
import { createDb, migrate, type Database } from '../../storage/index.js';
import {
  createCore,
  createLogger,
  createSecretBox,
  loadConfig,
  openSecretBox,
  randomId,
  type Config,
  type Core,
  type CoreDeps,
  type SecretBox,
} from '../../src/index.js';
import { requireEveryRole, startService, type FullService } from '../../server/main.js';
import { fakeDns, type FakeDns } from './dns.js';
import { randomBytes } from 'node:crypto';

/**
 * The SDK's client class. Its type declarations are CommonJS, so under NodeNext the default import's *type* is the
 * module object while at run time (ESM build) it is the class itself; this works for both.
 */
export const Nylas = ((NylasModule as unknown as { default?: unknown }).default ??
  NylasModule) as typeof NylasModule.default;
/** A client of the SDK. */
export type Nylas = InstanceType<typeof Nylas>;

/** The API key tests use for the default application. */
export const TEST_API_KEY = 'agp_test_key_for_the_default_application';

/** A secret key for tests that build a core by hand (32 characters or more). */
export const TEST_SECRET_KEY = 'agentpost-test-secret-key-of-32-characters';

/** A secret box for tests that build a core by hand; services started by tests make their own key file instead. */
export function testSecretBox(): SecretBox {
  return createSecretBox(TEST_SECRET_KEY);
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix = 'agentpost-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Configuration for tests: temp database, port 0, fixed API key. */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    AGENTPOST_DATABASE_URL: databaseUrl,
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_API_KEY: TEST_API_KEY,
    AGENTPOST_LOG_LEVEL: 'silent',
    // Tests change their resolver's records between messages, as if DNS changed at once: keep no answers.
    AGENTPOST_DNS_CACHE_TTL: '0',
    ...env,
  });
}

/** A running service plus an SDK client of its default application. */
export interface TestService extends FullService {
  apiKey: string;
  nylas: Nylas;
  dns: FakeDns;
  config: Config;
  /** An SDK client for another API key against the same service. */
  client(apiKey: string): Nylas;
}

/**
 * Starts the full service on a temporary database (or on `databaseUrl`, e.g. a libSQL server). Call `close()` in
 * `afterAll`. Its DNS is a {@link fakeDns} the test fills, unless `realDns` asks for the configured resolver.
 */
export async function startTestService(
  options: {
    env?: Record<string, string>;
    deps?: Partial<CoreDeps>;
    rateLimitClock?: () => number;
    databaseUrl?: string;
    realDns?: boolean;
  } = {},
): Promise<TestService> {
  const dir = tempDir();
  const config = testConfig(options.databaseUrl ?? `file:${join(dir.path, 'agentpost.db')}`, options.env);
  const dns = fakeDns();
  // `realDns`: the resolver the service builds from its configuration (AGENTPOST_DNS_SERVERS), as in production;
  // `dns` is then an unused fake.
  const started = await startService(
    config,
    options.realDns ? { ...options.deps } : { dns, ...options.deps },
    options.rateLimitClock ? { rateLimitClock: options.rateLimitClock } : {},
  );
  let service: FullService;
  try {
    service = requireEveryRole(started);
  } catch (error) {
    await started.close();
    throw error;
  }
  const client = (apiKey: string) => new Nylas({ apiKey, apiUri: service.url, timeout: 30 });
  return {
    ...service,
    apiKey: TEST_API_KEY,
    nylas: client(TEST_API_KEY),
    dns,
    config,
    client,
    async close() {
      await service.close();
      dir.remove();
    },
  };
}

/** A core on a temporary database, without HTTP (service-level tests). */
export async function createTestCore(
  overrides: Partial<CoreDeps> = {},
  env: Record<string, string> = {},
): Promise<{ core: Core; db: Database; close(): void }> {
  const dir = tempDir();
  const config = testConfig(`file:${join(dir.path, 'agentpost.db')}`, env);
  const db = await createDb({ url: config.databaseUrl });
  await migrate(db);
  const clock = overrides.clock ?? { now: () => new Date() };
  const logger = createLogger('silent');
  const core = createCore({
    db,
    config,
    clock,
    // The real key source: a key file made beside the temporary database, checked against it.
    secrets: await openSecretBox({ db, config, logger, clock }),
    newId: randomId,
    randomBytes,
    dns: fakeDns(),
    logger,
    ...overrides,
  });
  await core.accounts.applications.ensureDefaultApplication();
  return {
    core,
    db,
    close() {
      void db.close();
      dir.remove();
    },
  };
}
