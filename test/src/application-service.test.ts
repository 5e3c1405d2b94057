import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { ServiceAccountSigner } from 'nylas';
import { afterEach, describe, expect, it } from 'vitest';
import { createDb, migrate, tables, type Database } from '../../storage/index.js';
import { AppError, createCore, createLogger, loadConfig, randomId, type Core } from '../../src/index.js';
import { fixedClock } from '../helpers/clock.js';
import { fakeDns } from '../helpers/dns.js';
import { tempDir, testSecretBox } from '../helpers/service.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const clock = fixedClock('2026-03-30T00:30:00Z');

/** A database file of its own, and a way to start "the service" on it with a given environment. */
async function database(): Promise<{ db: Database; start(env?: Record<string, string>): Core }> {
  const dir = tempDir();
  const db = await createDb({ url: `file:${join(dir.path, 'agentpost.db')}` });
  await migrate(db);
  cleanups.push(() => {
    void db.close();
    dir.remove();
  });
  return {
    db,
    start: (env = {}) =>
      createCore({
        db,
        config: loadConfig({ AGENTPOST_LOG_LEVEL: 'silent', ...env }),
        clock,
        newId: randomId,
        randomBytes,
        dns: fakeDns(),
        logger: createLogger('silent'),
        secrets: testSecretBox(),
      }),
  };
}

async function rejection(call: Promise<unknown>): Promise<AppError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('the default application', () => {
  it('is made on first start with a generated key that is returned once and then works', async () => {
    const { db, start } = await database();
    const first = await start().accounts.applications.ensureDefaultApplication();
    expect(first.application).toMatchObject({ plan: 'production', is_default: true });
    expect(first.generatedKey).toMatch(/^agp_[A-Za-z0-9_-]{43}$/);
    const core = start();
    const principal = await core.accounts.applications.authenticateApiKey(first.generatedKey);
    // The generated key reaches the whole application with every permission (issue 36: no scope, no list).
    expect(principal).toMatchObject({ applicationId: first.application.id, via: 'api_key', key: { name: 'default' } });
    expect(principal.grantIds).toBeUndefined();
    expect(principal.permissions).toBeUndefined();

    const again = await core.accounts.applications.ensureDefaultApplication();
    expect(again.generatedKey).toBeUndefined();
    expect(again.application.id).toBe(first.application.id);
    const [key] = await db.orm.select().from(tables.apiKeys);
    expect(key?.keyHash).not.toContain(first.generatedKey!.slice(4));
    const workspaces = await db.orm
      .select()
      .from(tables.workspaces)
      .where(eq(tables.workspaces.applicationId, first.application.id));
    expect(workspaces).toEqual([expect.objectContaining({ isDefault: true })]);
  });

  it('takes AGENTPOST_API_KEY as its key, idempotently across restarts', async () => {
    const { db, start } = await database();
    const env = { AGENTPOST_API_KEY: 'fixed-key-0123456789' };
    for (let restart = 0; restart < 3; restart += 1) {
      const result = await start(env).accounts.applications.ensureDefaultApplication();
      expect(result.generatedKey).toBeUndefined();
    }
    expect(await db.orm.select().from(tables.apiKeys)).toHaveLength(1);
    expect((await start(env).accounts.applications.authenticateApiKey('fixed-key-0123456789')).via).toBe('api_key');
  });

  it('revokes the previous AGENTPOST_API_KEY when the variable changes, and keeps other keys', async () => {
    const { start } = await database();
    const core = start({ AGENTPOST_API_KEY: 'first-key-0123456789' });
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const other = await core.accounts.applications.createKey(application.id, { name: 'ci' });

    const rotated = start({ AGENTPOST_API_KEY: 'second-key-0123456789' });
    await rotated.accounts.applications.ensureDefaultApplication();
    expect((await rotated.accounts.applications.authenticateApiKey('second-key-0123456789')).applicationId).toBe(
      application.id,
    );
    expect((await rejection(rotated.accounts.applications.authenticateApiKey('first-key-0123456789'))).code).toBe(
      'unauthorized',
    );
    expect((await rotated.accounts.applications.authenticateApiKey(other.apiKey)).applicationId).toBe(application.id);
  });
});

describe('applications and keys', () => {
  it('creates an application with its own default workspace and a working key', async () => {
    const { db, start } = await database();
    const core = start();
    const { application: defaultApp } = await core.accounts.applications.ensureDefaultApplication();
    const created = await core.accounts.applications.createApplication({ name: 'Second', plan: 'trial' });
    expect(created.application).toMatchObject({ name: 'Second', plan: 'trial', is_default: false });
    expect((await core.accounts.applications.authenticateApiKey(created.apiKey)).applicationId).toBe(
      created.application.id,
    );
    expect((await core.accounts.applications.listApplications()).map((app) => app.id)).toEqual([
      defaultApp.id,
      created.application.id,
    ]);
    const workspaces = await db.orm
      .select()
      .from(tables.workspaces)
      .where(eq(tables.workspaces.applicationId, created.application.id));
    expect(workspaces.map((workspace) => workspace.isDefault)).toEqual([true]);
    expect(await core.accounts.applications.defaultApplicationId()).toBe(defaultApp.id);
  });

  it('lists keys without their secret, revokes at once, and scopes keys to their application', async () => {
    const { start } = await database();
    const core = start();
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const other = await core.accounts.applications.createApplication({ name: 'Other', plan: 'production' });
    const made = await core.accounts.applications.createKey(application.id, { name: 'deploy' });

    const keys = await core.accounts.applications.listKeys(application.id);
    expect(keys.map((key) => key.name)).toEqual(['default', 'deploy']);
    expect(keys[1]).toMatchObject({
      id: made.id,
      application_id: application.id,
      prefix: made.apiKey.slice(0, 10),
      revoked_at: null,
    });
    expect(JSON.stringify(keys)).not.toContain(made.apiKey);

    expect((await rejection(core.accounts.applications.revokeKey(other.application.id, made.id))).code).toBe(
      'not_found',
    );
    await core.accounts.applications.revokeKey(application.id, made.id);
    expect((await rejection(core.accounts.applications.revokeKey(application.id, made.id))).code).toBe('not_found');
    expect((await core.accounts.applications.listKeys(application.id))[1]?.revoked_at).toBe(
      Math.floor(clock.now().getTime() / 1000),
    );
    const refused = await rejection(core.accounts.applications.authenticateApiKey(made.apiKey));
    expect(refused.code).toBe('unauthorized');

    expect((await rejection(core.accounts.applications.authenticateApiKey(undefined))).message).toContain(
      'Missing API key',
    );
    expect((await rejection(core.accounts.applications.authenticateApiKey('agp_nope'))).code).toBe('unauthorized');
    expect((await rejection(core.accounts.applications.listKeys('no_such_app'))).code).toBe('not_found');
    expect((await rejection(core.accounts.applications.createKey('no_such_app'))).code).toBe('not_found');
  });
});

describe('service-account signatures', () => {
  it('accept a fresh signed request once, and forget nonces once their window has passed', async () => {
    const { db, start } = await database();
    const core = start();
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const credentials = await core.accounts.applications.createServiceAccount(application.id);
    expect(credentials).toMatchObject({
      type: 'service_account',
      organization_id: application.id,
      application_id: application.id,
      region: 'us',
    });
    const signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    const now = () => Math.floor(clock.now().getTime() / 1000);

    const signed = (timestamp = now(), nonce?: string) => {
      const { headers, serializedBody } = signer.buildHeaders({
        method: 'POST',
        path: '/v3/admin/domains',
        body: { name: 'x', domain_address: 'x.example.com' },
        timestamp,
        ...(nonce ? { nonce } : {}),
      });
      return {
        keyId: headers['X-Nylas-Kid']!,
        timestamp: headers['X-Nylas-Timestamp']!,
        nonce: headers['X-Nylas-Nonce']!,
        signature: headers['X-Nylas-Signature']!,
        method: 'POST',
        path: '/v3/admin/domains',
        body: serializedBody,
      };
    };

    const request = signed();
    expect(await core.accounts.applications.authenticateSignedRequest(request)).toEqual({
      applicationId: application.id,
      via: 'service_account',
    });
    expect((await rejection(core.accounts.applications.authenticateSignedRequest(request))).message).toContain(
      'X-Nylas-Nonce was already used',
    );
    expect(
      (await rejection(core.accounts.applications.authenticateSignedRequest(signed(now() - 301)))).message,
    ).toContain('X-Nylas-Timestamp');
    expect(
      (await rejection(core.accounts.applications.authenticateSignedRequest({ ...signed(), timestamp: 'yesterday' })))
        .message,
    ).toContain('X-Nylas-Timestamp');
    expect(
      (await rejection(core.accounts.applications.authenticateSignedRequest(signed(now(), 'short')))).message,
    ).toContain('X-Nylas-Nonce');
    expect(
      (await rejection(core.accounts.applications.authenticateSignedRequest({ ...signed(), keyId: 'unknown' })))
        .message,
    ).toContain('X-Nylas-Kid');
    // A request that failed its signature does not use up its nonce.
    const tampered = signed();
    await rejection(
      core.accounts.applications.authenticateSignedRequest({ ...tampered, path: '/v3/admin/domains/other' }),
    );
    expect((await core.accounts.applications.authenticateSignedRequest(tampered)).via).toBe('service_account');

    expect(await db.orm.select().from(tables.serviceAccountNonces)).toHaveLength(2);
    clock.advance(11 * 60 * 1000);
    expect((await core.accounts.applications.authenticateSignedRequest(signed())).via).toBe('service_account');
    expect(await db.orm.select().from(tables.serviceAccountNonces)).toHaveLength(1);
  });

  it('answer a body nested too deep to canonicalise with a 400, not a stack overflow', async () => {
    const { start } = await database();
    const core = start();
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const credentials = await core.accounts.applications.createServiceAccount(application.id);
    const signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    const { headers } = signer.buildHeaders({
      method: 'POST',
      path: '/v3/admin/domains',
      body: { name: 'x' },
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
    const error = await rejection(
      core.accounts.applications.authenticateSignedRequest({
        keyId: headers['X-Nylas-Kid']!,
        timestamp: headers['X-Nylas-Timestamp']!,
        nonce: headers['X-Nylas-Nonce']!,
        signature: headers['X-Nylas-Signature']!,
        method: 'POST',
        path: '/v3/admin/domains',
        body: `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
      }),
    );
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('nested more than 64 levels');
  });

  it('are refused for a revoked service account', async () => {
    const { db, start } = await database();
    const core = start();
    const { application } = await core.accounts.applications.ensureDefaultApplication();
    const credentials = await core.accounts.applications.createServiceAccount(application.id);
    const signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    await db.write((tx) =>
      tx
        .update(tables.serviceAccounts)
        .set({ revokedAt: 1 })
        .where(eq(tables.serviceAccounts.id, credentials.private_key_id)),
    );
    const { headers } = signer.buildHeaders({
      method: 'GET',
      path: '/v3/admin/domains',
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
    const error = await rejection(
      core.accounts.applications.authenticateSignedRequest({
        keyId: headers['X-Nylas-Kid']!,
        timestamp: headers['X-Nylas-Timestamp']!,
        nonce: headers['X-Nylas-Nonce']!,
        signature: headers['X-Nylas-Signature']!,
        method: 'GET',
        path: '/v3/admin/domains',
        body: undefined,
      }),
    );
    expect(error.code).toBe('unauthorized');
  });
});
