/**
 * The `agentpost` command as a user runs it: `node bin/agentpost.js ...` in separate processes on one database
 * file, checked against the real service started on that same file.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ServiceAccountSigner } from 'nylas';
import { afterAll, describe, expect, it } from 'vitest';
import { requireEveryRole, startService, type FullService } from '../../server/main.js';
import { createDb, tables } from '../../storage/index.js';
import { hashApiKey } from '../../src/applications/credentials.js';
import { loadConfig } from '../../src/index.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/service.js';
import { BIN, ROOT, childEnv, freePort } from '../helpers/process.js';

const KEY_PATTERN = /agp_[A-Za-z0-9_-]{43}/;
/** Each CLI process loads the TypeScript sources through tsx (about a second of CPU); a busy machine needs room. */
const E2E_TIMEOUT_MS = 60_000;

const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

/** A fresh database URL in a temporary directory. */
function freshDatabase(): string {
  const dir = tempDir('agentpost-cli-');
  dirs.push(dir);
  return `file:${join(dir.path, 'agentpost.db')}`;
}

/** The environment of a child, with this file's defaults. */
const childEnvOf = (env: Record<string, string>) =>
  childEnv({ AGENTPOST_LOG_LEVEL: 'warn', AGENTPOST_SMTP_PORT: '0', ...env });

/** Runs one CLI command to completion. */
async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: childEnvOf(env),
      timeout: E2E_TIMEOUT_MS,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

/** `agentpost serve` in the background, resolved once it says it is listening. */
async function serve(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; stdout: () => string; stop(): Promise<number | null> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnvOf({ ...env, AGENTPOST_HTTP_PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('is listening on')) ready();
    });
    void exited.then((code) => fail(new Error(`serve exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe.concurrent('agentpost CLI', { timeout: E2E_TIMEOUT_MS }, () => {
  it('manages applications, keys and service accounts on the database the service uses', async () => {
    const database = freshDatabase();
    const env = { AGENTPOST_DATABASE_URL: database };

    const app = await cli(['apps', 'create', '--name', 'Second', '--plan', 'trial'], env);
    expect(app.code, app.stderr).toBe(0);
    const applicationId = /^application_id: (\S+)$/m.exec(app.stdout)?.[1];
    const appKey = /^api_key: (\S+)$/m.exec(app.stdout)?.[1];
    expect(applicationId).toEqual(expect.any(String));
    expect(appKey).toMatch(KEY_PATTERN);
    // On a fresh database the command also made the default application; its key is shown once, on stderr.
    expect(app.stderr).toContain('default application');
    expect(app.stderr).toMatch(KEY_PATTERN);

    // Two processes writing the same database at once.
    const [created, accountRun] = await Promise.all([
      cli(['keys', 'create', '--app', applicationId!, '--name', 'ci'], env),
      cli(['service-accounts', 'create', '--app', applicationId!], env),
    ]);
    expect(created.code, created.stderr).toBe(0);
    const keyId = /^key_id: (\S+)$/m.exec(created.stdout)?.[1];
    const extraKey = /^api_key: (\S+)$/m.exec(created.stdout)?.[1];
    expect(extraKey).toMatch(KEY_PATTERN);
    expect(accountRun.code, accountRun.stderr).toBe(0);
    const credentials = JSON.parse(accountRun.stdout) as Record<string, string>;
    expect(credentials).toMatchObject({
      type: 'service_account',
      organization_id: applicationId,
      private_key_id: expect.any(String),
    });
    expect(credentials.private_key).toContain('BEGIN PRIVATE KEY');

    const service: FullService = requireEveryRole(
      await startService(
        loadConfig({
          AGENTPOST_DATABASE_URL: database,
          AGENTPOST_HTTP_PORT: '0',
          AGENTPOST_SMTP_PORT: '0',
          AGENTPOST_LOG_LEVEL: 'silent',
        }),
      ),
    );
    try {
      for (const key of [appKey!, extraKey!]) {
        const response = await request(service.url, 'GET', '/v3/grants', { key });
        expect(response.status).toBe(200);
      }
      // The printed credentials are what the SDK's signer takes; the domain lands in the new application.
      const { default: Nylas } = (await import('nylas')) as unknown as {
        default: new (options: { apiKey: string; apiUri: string }) => import('../helpers/service.js').Nylas;
      };
      const nylas = new Nylas({ apiKey: 'unused', apiUri: service.url });
      const signer = new ServiceAccountSigner({
        privateKeyPem: credentials.private_key!,
        privateKeyId: credentials.private_key_id!,
      });
      const domain = await nylas.domains.create({
        requestBody: { name: 'CLI', domainAddress: 'cli.agentpost.localhost' },
        signer,
      });
      expect(domain.data.organizationId).toBe(applicationId);
      expect((await nylas.domains.list({ signer })).data.map((item) => item.domainAddress)).toEqual([
        'cli.agentpost.localhost',
      ]);

      const listed = await cli(['keys', 'list', '--app', applicationId!], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(keyId);
      expect(listed.stdout.match(/\tactive\t/g)).toHaveLength(2);
      expect(listed.stdout).not.toContain(extraKey);
      expect(listed.stdout).not.toContain(appKey);

      // Revoked by another process while the service runs: refused from the next request on.
      const revoked = await cli(['keys', 'revoke', keyId!, '--app', applicationId!], env);
      expect(revoked.code, revoked.stderr).toBe(0);
      const refused = await request(service.url, 'GET', '/v3/grants', { key: extraKey });
      expect(refused.status).toBe(401);
      expect(refused.body.error.type).toBe('unauthorized');
      expect((await request(service.url, 'GET', '/v3/grants', { key: appKey })).status).toBe(200);
      expect(
        (await service.core.accounts.applications.listKeys(applicationId!)).find((key) => key.id === keyId)?.revoked_at,
      ).toEqual(expect.any(Number));
    } finally {
      await service.close();
    }
  });

  it('grants suspend and resume: the kill switch from another process, seen by the running service at once', async () => {
    const database = freshDatabase();
    const key = 'my-fixed-api-key-for-the-kill-switch';
    const env = { AGENTPOST_DATABASE_URL: database, AGENTPOST_API_KEY: key };
    const service: FullService = requireEveryRole(
      await startService(
        loadConfig({ ...env, AGENTPOST_HTTP_PORT: '0', AGENTPOST_SMTP_PORT: '0', AGENTPOST_LOG_LEVEL: 'silent' }),
      ),
    );
    try {
      const domain = 'halt-cli.agentpost.localhost';
      await request(service.url, 'POST', '/v3/admin/domains', { key, body: { name: domain, domain_address: domain } });
      const created = await request(service.url, 'POST', '/v3/connect/custom', {
        key,
        body: { provider: 'nylas', settings: { email: `agent@${domain}` } },
      });
      const grantId = created.body.data.id as string;
      const draft = () =>
        request(service.url, 'POST', `/v3/grants/${grantId}/drafts`, { key, body: { subject: 'Hi', body: 'x' } });

      expect((await cli(['grants', 'suspend', grantId], env)).stderr).toContain('reason');
      const suspended = await cli(['grants', 'suspend', grantId, '--reason', 'stopped from the CLI'], env);
      expect(suspended.code, suspended.stderr).toBe(0);
      expect(suspended.stdout).toContain(`suspended ${grantId} (agent@${domain}): stopped from the CLI`);
      const refused = await draft();
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ type: 'grant_suspended' });
      expect(refused.body.error.message).toContain('stopped from the CLI');
      const shown = await request(service.url, 'GET', `/v3/grants/${grantId}`, { key });
      expect(shown.body.data.suspended_reason).toBe('stopped from the CLI');

      const resumed = await cli(['grants', 'resume', grantId], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(`resumed ${grantId}`);
      expect((await draft()).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('exits 1 naming the variable when the configuration is bad', async () => {
    const badConfig = await cli(['apps', 'list'], {
      AGENTPOST_DATABASE_URL: freshDatabase(),
      AGENTPOST_HTTP_PORT: 'abc',
    });
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toContain('AGENTPOST_HTTP_PORT: must be a whole number');
  });

  it('serve prints a generated key once, answers /healthz and exits 0 on SIGTERM', async () => {
    const env = { AGENTPOST_DATABASE_URL: freshDatabase() };
    const first = await serve(env);
    const key = KEY_PATTERN.exec(first.stdout())?.[0];
    expect(key).toBeDefined();
    expect((await request(first.url, 'GET', '/healthz')).status).toBe(200);
    expect((await request(first.url, 'GET', '/v3/grants', { key })).status).toBe(200);
    expect(await first.stop()).toBe(0);
    // The key outlives the process (only its hash is stored).
    const db = await createDb({ url: env.AGENTPOST_DATABASE_URL });
    try {
      const [stored] = await db.orm.select().from(tables.apiKeys);
      expect(stored?.keyHash).toBe(hashApiKey(key!));
    } finally {
      void db.close();
    }
  });

  it('with AGENTPOST_API_KEY, keeps that key valid across restarts and prints no generated key', async () => {
    const env = { AGENTPOST_DATABASE_URL: freshDatabase(), AGENTPOST_API_KEY: 'my-fixed-api-key-for-agentpost' };
    for (let start = 0; start < 2; start += 1) {
      const running = await serve(env);
      try {
        expect(running.stdout()).not.toMatch(KEY_PATTERN);
        expect(running.stdout()).not.toContain('my-fixed-api-key');
        expect(
          (await request(running.url, 'GET', '/v3/grants', { key: 'my-fixed-api-key-for-agentpost' })).status,
        ).toBe(200);
        expect((await request(running.url, 'GET', '/v3/grants', { key: 'agp_some_other_key' })).status).toBe(401);
      } finally {
        expect(await running.stop()).toBe(0);
      }
    }
    // Still one key: restarts do not pile up copies of it.
    const db = await createDb({ url: env.AGENTPOST_DATABASE_URL });
    try {
      expect(await db.orm.select().from(tables.apiKeys)).toHaveLength(1);
    } finally {
      void db.close();
    }
  });
});
