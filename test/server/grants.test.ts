import { and, eq } from 'drizzle-orm';
import { type Grant } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { verifyPassword } from '../../src/applications/credentials.js';
import { fixedClock } from '../helpers/clock.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

describe('grants (Agent Accounts)', () => {
  let service: TestService;
  const clock = fixedClock('2026-03-30T00:30:00Z');
  const domain = 'grants.agentpost.localhost';

  const createAccount = (email: string, extra: Record<string, unknown> = {}, provider = 'nylas') =>
    request(service.url, 'POST', '/v3/connect/custom', {
      key: service.apiKey,
      body: { provider, settings: { email }, ...extra },
    });

  beforeAll(async () => {
    service = await startTestService({ deps: { clock } });
    const created = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Grants', domain_address: domain },
    });
    expect(created.status).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('POST /v3/connect/custom', () => {
    let first: Grant;

    it('creates an Agent Account with provider "nylas" through the SDK: 201 and the grant', async () => {
      const response = await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'first@grants.agentpost.localhost' } },
      });
      first = response.data;
      expect(first).toMatchObject({
        id: expect.any(String),
        provider: 'nylas',
        grantStatus: 'valid',
        email: 'first@grants.agentpost.localhost',
        scope: [],
        createdAt: Math.floor(clock.now().getTime() / 1000),
        settings: { email: 'first@grants.agentpost.localhost' },
      });
      const raw = await createAccount('status@grants.agentpost.localhost');
      expect(raw.status).toBe(201);
      expect(raw.body).toEqual({
        request_id: expect.any(String),
        data: expect.objectContaining({ email: 'status@grants.agentpost.localhost' }),
      });
    });

    it('accepts provider "hosted" (the spec) as the same thing, with top-level name and the default workspace', async () => {
      const response = await createAccount(
        'hosted@grants.agentpost.localhost',
        { name: 'Hosted Bot', state: 'opaque-1' },
        'hosted',
      );
      expect(response.status).toBe(201);
      expect(response.body.data).toMatchObject({
        provider: 'nylas',
        name: 'Hosted Bot',
        state: 'opaque-1',
        email: 'hosted@grants.agentpost.localhost',
        workspace_id: expect.any(String),
      });
      const workspace = await service.core.deps.db.orm.query.workspaces.findFirst({
        where: eq(tables.workspaces.id, response.body.data.workspace_id),
      });
      expect(workspace?.isDefault).toBe(true);
    });

    it('gives the new grant six system folders and a primary calendar', async () => {
      const db = service.core.deps.db.orm;
      const folders = await db.select().from(tables.folders).where(eq(tables.folders.grantId, first.id));
      expect(folders.map((folder) => folder.id).sort()).toEqual([
        'archive',
        'drafts',
        'inbox',
        'junk',
        'sent',
        'trash',
      ]);
      const calendars = await db.select().from(tables.calendars).where(eq(tables.calendars.grantId, first.id));
      expect(calendars).toHaveLength(1);
      expect(calendars[0]?.isPrimary).toBe(true);
      const events = await db
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.type, 'grant.created'), eq(tables.outboxEvents.objectId, first.id)));
      expect(events).toHaveLength(1);
    });

    it('returns the existing grant for the same address again (any case, either provider)', async () => {
      const again = await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'FIRST@Grants.AgentPost.localhost' } },
      });
      expect(again.data.id).toBe(first.id);
      const hosted = await createAccount('first@grants.agentpost.localhost', {}, 'hosted');
      expect(hosted.body.data.id).toBe(first.id);
      const db = service.core.deps.db.orm;
      expect(
        await db.select().from(tables.grants).where(eq(tables.grants.email, 'first@grants.agentpost.localhost')),
      ).toHaveLength(1);
      expect(await db.select().from(tables.folders).where(eq(tables.folders.grantId, first.id))).toHaveLength(6);
    });

    it('refuses an address on an unregistered domain with 400 saying why', async () => {
      const error = await sdkError(
        service.nylas.auth.customAuthentication({
          requestBody: { provider: 'nylas', settings: { email: 'bot@unknown.example.com' } },
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toContain('settings.email');
      expect(error.message).toContain('unknown.example.com is not a registered domain');
    });

    it('refuses an address on an unverified custom domain with 400 saying why', async () => {
      const custom = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'Custom', domain_address: 'unverified.example.com' },
      });
      const response = await createAccount('bot@unverified.example.com');
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain('not verified');
      expect(response.body.error.message).toContain(`/v3/admin/domains/${custom.body.data.id}/verify`);
    });

    it.each([
      [{ provider: 'zoom', settings: { email: 'x@grants.agentpost.localhost' } }, 'provider'],
      // google (and microsoft) connect with a refresh token (test/server/oauth-custom-token.test.ts).
      [{ provider: 'google', settings: { email: 'x@grants.agentpost.localhost' } }, 'settings.refresh_token'],
      [{ settings: { email: 'x@grants.agentpost.localhost' } }, 'provider'],
      [{ provider: 'nylas', settings: { email: 'not-an-address' } }, 'settings.email'],
      [{ provider: 'nylas', settings: {} }, 'settings.email'],
      [{ provider: 'nylas' }, 'settings'],
      [
        { provider: 'nylas', settings: { email: 'x@grants.agentpost.localhost', app_password: 'short' } },
        'settings.app_password',
      ],
      [
        {
          provider: 'nylas',
          settings: { email: 'x@grants.agentpost.localhost', app_password: 'alllowercaseandlongenough1' },
        },
        'settings.app_password',
      ],
      [{ provider: 'nylas', settings: { email: 'x@grants.agentpost.localhost' }, name: 42 }, 'name'],
    ])('rejects invalid input %j with 400 naming %s', async (body, field) => {
      const response = await request(service.url, 'POST', '/v3/connect/custom', { key: service.apiKey, body });
      expect(response.status).toBe(400);
      expect(isErrorEnvelope(response.body)).toBe(true);
      expect(response.body.error.message).toContain(`${field}:`);
    });

    it('rejects a workspace_id of another application', async () => {
      const other = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
      const [workspace] = await service.core.deps.db.orm
        .select()
        .from(tables.workspaces)
        .where(eq(tables.workspaces.applicationId, other.application.id));
      const response = await createAccount('placed@grants.agentpost.localhost', { workspace_id: workspace!.id });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain('workspace_id');
      expect(
        (await request(service.url, 'GET', '/v3/grants/placed@grants.agentpost.localhost', { key: service.apiKey }))
          .status,
      ).toBe(404);
    });

    it('stores app_password as a hash only and never returns it', async () => {
      const password = 'Agent-Password-2026-abc';
      const response = await createAccount('imap@grants.agentpost.localhost', { name: 'Imap' }, 'nylas');
      expect(response.status).toBe(201);
      const withPassword = await request(service.url, 'POST', '/v3/connect/custom', {
        key: service.apiKey,
        body: {
          provider: 'nylas',
          settings: { email: 'secret@grants.agentpost.localhost', app_password: password, policy_id: 'policy_1' },
        },
      });
      expect(withPassword.status).toBe(201);
      expect(withPassword.text).not.toContain(password);
      expect(withPassword.body.data.settings).toEqual({
        email: 'secret@grants.agentpost.localhost',
        policy_id: 'policy_1',
      });
      const row = await service.core.deps.db.orm.query.grants.findFirst({
        where: eq(tables.grants.id, withPassword.body.data.id),
      });
      expect(JSON.stringify(row?.settings)).not.toContain(password);
      expect(await verifyPassword(password, row!.appPasswordHash!)).toBe(true);
      const fetched = await request(service.url, 'GET', `/v3/grants/${withPassword.body.data.id}`, {
        key: service.apiKey,
      });
      expect(fetched.text).not.toContain(password);
      expect(fetched.text).not.toContain('app_password');
    });
  });

  describe('GET /v3/grants', () => {
    const emails = ['list-a', 'list-b', 'list-c', 'list-d', 'list-e'].map(
      (name) => `${name}@grants.agentpost.localhost`,
    );

    beforeAll(async () => {
      // Later grants are created later, so the default order (newest first) is known.
      for (const email of emails) {
        clock.advance(60_000);
        expect((await createAccount(email)).status).toBe(201);
      }
    });

    it('lists newest first with offset pagination through the SDK', async () => {
      const firstPage = await service.nylas.grants.list({ queryParams: { limit: 2 } });
      expect(firstPage.data.map((grant) => grant.email)).toEqual([emails[4], emails[3]]);
      const secondPage = await service.nylas.grants.list({ queryParams: { limit: 2, offset: 2 } });
      expect(secondPage.data.map((grant) => grant.email)).toEqual([emails[2], emails[1]]);
      const raw = await request(service.url, 'GET', '/v3/grants?limit=2&offset=2', { key: service.apiKey });
      expect(raw.body).toMatchObject({ request_id: expect.any(String), limit: 2, offset: 2 });
      expect(raw.body.next_cursor).toBeUndefined();
    });

    it('defaults to 10 and sorts and filters as asked', async () => {
      const all = await request(service.url, 'GET', '/v3/grants', { key: service.apiKey });
      expect(all.body.limit).toBe(10);
      expect(all.body.offset).toBe(0);
      expect(all.body.data.length).toBe(10);
      const ascending = await service.nylas.grants.list({
        queryParams: { limit: 200, sortBy: 'created_at', orderBy: 'asc' },
      });
      const created = ascending.data.map((grant) => grant.createdAt);
      expect(created).toEqual([...created].sort((a, b) => a - b));
      expect(ascending.data.slice(-5).map((grant) => grant.email)).toEqual(emails);
      const one = await service.nylas.grants.list({ queryParams: { email: emails[2]! } });
      expect(one.data.map((grant) => grant.email)).toEqual([emails[2]]);
      const hosted = await request(service.url, 'GET', '/v3/grants?provider=hosted&limit=200', { key: service.apiKey });
      expect(hosted.body.data.length).toBe(ascending.data.length);
      const since = await request(service.url, 'GET', `/v3/grants?since=${ascending.data.at(-2)!.createdAt}`, {
        key: service.apiKey,
      });
      expect(since.body.data.map((grant: { email: string }) => grant.email)).toEqual([emails[4], emails[3]]);
    });

    it.each([
      ['limit=201', 'limit'],
      ['limit=0', 'limit'],
      ['limit=ten', 'limit'],
      ['offset=-1', 'offset'],
      ['order_by=sideways', 'order_by'],
    ])('rejects %s with 400 naming %s', async (query, field) => {
      const response = await request(service.url, 'GET', `/v3/grants?${query}`, { key: service.apiKey });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain(`${field}:`);
    });
  });

  describe('one grant', () => {
    let grant: Grant;
    beforeAll(async () => {
      grant = (
        await service.nylas.auth.customAuthentication({
          requestBody: {
            provider: 'nylas',
            settings: { email: 'one@grants.agentpost.localhost', policyId: 'policy_a' },
          },
        })
      ).data;
    });

    it('is found by id and by email address (also grant: and email: forms)', async () => {
      expect((await service.nylas.grants.find({ grantId: grant.id })).data).toEqual(grant);
      expect((await service.nylas.grants.find({ grantId: 'one@grants.agentpost.localhost' })).data.id).toBe(grant.id);
      expect((await service.nylas.grants.find({ grantId: 'ONE@grants.agentpost.localhost' })).data.id).toBe(grant.id);
      expect(
        (await request(service.url, 'GET', `/v3/grants/grant:${grant.id}`, { key: service.apiKey })).body.data.id,
      ).toBe(grant.id);
      expect(
        (await request(service.url, 'GET', '/v3/grants/email:one@grants.agentpost.localhost', { key: service.apiKey }))
          .body.data.id,
      ).toBe(grant.id);
      const missing = await sdkError(service.nylas.grants.find({ grantId: 'nobody@grants.agentpost.localhost' }));
      expect(missing.statusCode).toBe(404);
      expect(missing.type).toBe('not_found_error');
    });

    it('updates name and merges settings; app_password is write-only', async () => {
      clock.advance(1000);
      const updated = await service.nylas.grants.update({
        grantId: grant.id,
        requestBody: { settings: { label: 'blue' } },
      });
      // (The SDK camel-cases response keys, settings included: policy_id arrives as policyId.)
      expect(updated.data.settings).toEqual({
        email: 'one@grants.agentpost.localhost',
        policyId: 'policy_a',
        label: 'blue',
      });
      expect(updated.data.updatedAt).toBeGreaterThan(grant.updatedAt!);

      const renamed = await request(service.url, 'PATCH', '/v3/grants/one@grants.agentpost.localhost', {
        key: service.apiKey,
        body: { name: 'Renamed Bot', settings: { policy_id: 'policy_b', app_password: 'New-Password-For-Imap-9' } },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({
        id: grant.id,
        name: 'Renamed Bot',
        settings: { email: 'one@grants.agentpost.localhost', policy_id: 'policy_b', label: 'blue' },
      });
      expect(renamed.text).not.toContain('New-Password-For-Imap-9');
      expect(renamed.text).not.toContain('app_password');
      const row = await service.core.deps.db.orm.query.grants.findFirst({ where: eq(tables.grants.id, grant.id) });
      expect(await verifyPassword('New-Password-For-Imap-9', row!.appPasswordHash!)).toBe(true);

      // The address cannot be changed through settings.
      const readdressed = await request(service.url, 'PATCH', `/v3/grants/${grant.id}`, {
        key: service.apiKey,
        body: { settings: { email: 'other@grants.agentpost.localhost' } },
      });
      expect(readdressed.body.data.email).toBe('one@grants.agentpost.localhost');
      expect(readdressed.body.data.settings.email).toBe('one@grants.agentpost.localhost');

      const bad = await request(service.url, 'PATCH', `/v3/grants/${grant.id}`, {
        key: service.apiKey,
        body: { settings: { app_password: 'weak' } },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('settings.app_password:');
      const missing = await request(service.url, 'PATCH', '/v3/grants/nope', {
        key: service.apiKey,
        body: { name: 'x' },
      });
      expect(missing.status).toBe(404);
    });

    it('moves only to a workspace of the same application', async () => {
      const other = await service.core.accounts.applications.createApplication({ name: 'Elsewhere', plan: 'trial' });
      const [foreign] = await service.core.deps.db.orm
        .select()
        .from(tables.workspaces)
        .where(eq(tables.workspaces.applicationId, other.application.id));
      const refused = await request(service.url, 'PATCH', `/v3/grants/${grant.id}`, {
        key: service.apiKey,
        body: { workspace_id: foreign!.id },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/^workspace_id: /);
      const own = (await service.nylas.grants.find({ grantId: grant.id })).data as Grant & { workspaceId?: string };
      const kept = await request(service.url, 'PATCH', `/v3/grants/${grant.id}`, {
        key: service.apiKey,
        body: { workspace_id: own.workspaceId },
      });
      expect(kept.status).toBe(200);
      expect(kept.body.data.workspace_id).toBe(own.workspaceId);
    });

    it('is deleted with its folders and calendars, then 404', async () => {
      const destroyed = await service.nylas.grants.destroy({ grantId: grant.id });
      expect(destroyed.requestId).toEqual(expect.any(String));
      expect((await sdkError(service.nylas.grants.find({ grantId: grant.id }))).statusCode).toBe(404);
      expect((await sdkError(service.nylas.grants.destroy({ grantId: grant.id }))).statusCode).toBe(404);
      expect((await sdkError(service.nylas.folders.list({ identifier: grant.id }))).statusCode).toBe(404);
      const db = service.core.deps.db.orm;
      expect(await db.select().from(tables.folders).where(eq(tables.folders.grantId, grant.id))).toEqual([]);
      expect(await db.select().from(tables.calendars).where(eq(tables.calendars.grantId, grant.id))).toEqual([]);
      // The address is free again: creating it makes a new grant.
      const again = await createAccount('one@grants.agentpost.localhost');
      expect(again.status).toBe(201);
      expect(again.body.data.id).not.toBe(grant.id);
    });
  });
});
