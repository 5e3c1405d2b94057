/**
 * Connecting an IMAP/SMTP account (`POST /v3/connect/custom`, `provider: "imap"`) where no mail server is needed,
 * through the `nylas` SDK: bad input is a 400 naming each field and stores nothing; a closed port and a server that
 * accepts and stays silent are 400s within the connect timeout (`AGENTPOST_IMAP_CONNECT_TIMEOUT` 1s here); and an
 * imap grant (made in the database as the connect flow leaves it) reads back through get and list with its servers
 * and sync progress but no password, is 404 to another application, refuses server and credential changes by PATCH,
 * cannot be taken over as an Agent Account, and is deleted with its account row. The real logins are in
 * test/e2e/imap-connect.test.ts (Dovecot and Postfix).
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { createImapGrant, imapConnectSettings } from '../helpers/imap-grant.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { sdkError } from '../helpers/sdk.js';
import { startSilentServer, type SilentServer } from '../helpers/silent-server.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

/** A port of this file's range (36400-36449) where nothing listens. */
const CLOSED_PORT = 36411;

/** The connect timeout of this file's service. */
const CONNECT_TIMEOUT_MS = 1_000;

describe(
  'connecting an IMAP/SMTP account: input, unreachable servers, and the grant it makes',
  { timeout: 30_000 },
  () => {
    let service: TestService;
    let silent: SilentServer;
    let silentPort: number;
    let applicationId: string;
    let other: Nylas;

    const connect = (settings: Record<string, unknown>, provider = 'imap') =>
      service.nylas.auth.customAuthentication({ requestBody: { provider: provider as 'imap', settings } });
    const grantCount = async () =>
      (await service.core.deps.db.orm.select({ id: tables.grants.id }).from(tables.grants)).length;

    beforeAll(async () => {
      service = await startTestService({
        env: { AGENTPOST_IMAP_CONNECT_TIMEOUT: `${CONNECT_TIMEOUT_MS / 1000}s`, AGENTPOST_IMAP_COMMAND_TIMEOUT: '2s' },
      });
      // Accepts connections and never says a word (no IMAP greeting, no SMTP banner).
      silent = await startSilentServer();
      silentPort = silent.port;
      const [application] = await service.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      applicationId = application!.id;
      other = service.client(
        (await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' })).apiKey,
      );
    });
    afterAll(async () => {
      await silent?.close();
      await service?.close();
    });

    describe('bad input: a 400 naming the field, nothing stored, no server contacted', () => {
      const good = imapConnectSettings({
        user: 'someone@example.test',
        password: 'secret',
        imapPort: CLOSED_PORT,
        smtpPort: CLOSED_PORT,
      });

      it.each([
        [
          'missing fields',
          { imap_username: 'someone@example.test' },
          /^settings\.imap_password: .*; settings\.imap_host: .*; settings\.imap_port: .*; settings\.smtp_host: .*; settings\.smtp_port: /,
        ],
        ['a port out of range', { ...good, imap_port: 70_000 }, /^settings\.imap_port: Too big/],
        [
          'a port given as text',
          { ...good, smtp_port: '587' },
          /^settings\.smtp_port: Invalid input: expected number, received string$/,
        ],
        ['a port that is not whole', { ...good, imap_port: 993.5 }, /^settings\.imap_port: /],
        [
          'a host with a scheme',
          { ...good, imap_host: 'imaps://mail.example.test' },
          /^settings\.imap_host: a host name or IP address/,
        ],
        ['an unknown security', { ...good, imap_security: 'ssl' }, /^settings\.imap_security: Invalid option/],
        ['sync_days out of range', { ...good, sync_days: 0 }, /^settings\.sync_days: Too small/],
        ['sync_days too large', { ...good, sync_days: 40_000 }, /^settings\.sync_days: Too big/],
        ['allow_insecure_tls as text', { ...good, allow_insecure_tls: 'yes' }, /^settings\.allow_insecure_tls: /],
        ['an empty password', { ...good, imap_password: '' }, /^settings\.imap_password: Too small/],
      ])('%s', async (_name, settings, message) => {
        const before = await grantCount();
        const error = await sdkError(connect(settings));
        expect(error.statusCode).toBe(400);
        expect(error.type).toBe('invalid_request_error');
        expect(error.message).toMatch(message);
        expect(await grantCount()).toBe(before);
      });

      it('an unknown provider is a 400 listing the ones accepted', async () => {
        // google and microsoft connect with a refresh token now (test/server/oauth-custom-token.test.ts).
        const error = await sdkError(connect(good, 'zoom'));
        expect(error.statusCode).toBe(400);
        expect(error.message).toBe(
          'provider: Invalid option: expected one of "nylas"|"hosted"|"imap"|"google"|"microsoft"',
        );
      });

      it("an Agent Account's settings are still checked as before (email required) and imap settings do not stand in for them", async () => {
        const error = await sdkError(connect(good, 'nylas'));
        expect(error.statusCode).toBe(400);
        expect(error.message).toBe('settings.email: Invalid input: expected string, received undefined');
      });

      it("an IMAP username that is not an address needs settings.email (the grant's address)", async () => {
        const error = await sdkError(connect({ ...good, imap_username: 'someone' }));
        expect(error.statusCode).toBe(400);
        expect(error.message).toMatch(/^settings\.email: the IMAP username is not an email address/);
        const invalid = await sdkError(connect({ ...good, imap_username: 'someone', email: 'not an address' }));
        expect(invalid.message).toMatch(/^settings\.email: Invalid email address/);
      });

      it('a body that is not JSON of the right shape is a 400 in the Nylas error envelope', async () => {
        const response = await request(service.url, 'POST', '/v3/connect/custom', {
          key: service.apiKey,
          body: { provider: 'imap', settings: 'imap.example.test' },
        });
        expect(response.status).toBe(400);
        expect(isErrorEnvelope(response.body)).toBe(true);
        expect(response.body.error.message).toMatch(/^settings: /);
      });
    });

    describe('unreachable servers: a 400 saying so, within the connect timeout', () => {
      it('a closed port: refused at once', async () => {
        const before = await grantCount();
        const error = await sdkError(
          connect(
            imapConnectSettings({
              user: 'closed@example.test',
              password: 'secret',
              imapPort: CLOSED_PORT,
              smtpPort: CLOSED_PORT,
            }),
          ),
        );
        expect(error.statusCode).toBe(400);
        expect(error.message).toMatch(
          new RegExp(`^IMAP server 127\\.0\\.0\\.1:${CLOSED_PORT} could not be reached: .*ECONNREFUSED`),
        );
        expect(await grantCount()).toBe(before);
      });

      it('a server that accepts and never answers: given up after the connect timeout (1s here, not the default 15s)', async () => {
        const before = await grantCount();
        const started = Date.now();
        const error = await sdkError(
          connect(
            imapConnectSettings({
              user: 'silent@example.test',
              password: 'secret',
              imapPort: silentPort,
              smtpPort: silentPort,
            }),
          ),
        );
        const elapsed = Date.now() - started;
        expect(error.statusCode).toBe(400);
        expect(error.message).toMatch(
          new RegExp(
            `^IMAP server 127\\.0\\.0\\.1:${silentPort} could not be reached: .*(in required time|timeout|timed out)`,
            'i',
          ),
        );
        // Not a speed measurement: the configured timeout (1s) applied rather than the 15s default.
        expect(elapsed).toBeLessThan(10_000);
        expect(await grantCount()).toBe(before);
      });
    });

    describe('an imap grant through the grant endpoints', () => {
      let grantId: string;
      // On a domain the application registers too (a trial subdomain, usable at once), for the takeover test.
      const email = 'stored@connect.agentpost.localhost';

      beforeAll(async () => {
        grantId = await createImapGrant(service.core, {
          applicationId,
          email,
          password: 'imap-secret-password',
          smtpPassword: 'smtp-secret-password',
          imapPort: 36412,
          smtpPort: 36413,
          secrets: service.core.deps.secrets,
        });
      });

      it('reads back (find and list) with its servers, security and sync progress, and no password anywhere', async () => {
        const response = await request(service.url, 'GET', `/v3/grants/${grantId}`, { key: service.apiKey });
        expect(response.status).toBe(200);
        expect(response.body.data).toMatchObject({
          id: grantId,
          provider: 'imap',
          grant_status: 'valid',
          email,
          settings: {
            email,
            imap_host: '127.0.0.1',
            imap_port: 36412,
            imap_username: email,
            imap_security: 'starttls',
            smtp_host: '127.0.0.1',
            smtp_port: 36413,
            smtp_username: email,
            smtp_security: 'starttls',
            allow_insecure_tls: false,
            sync_days: 30,
            // The sync may have looked at it already (last_sync_at); its progress shows either way.
            sync: expect.objectContaining({ state: 'idle', total: 0, done: 0, last_error: null }),
          },
        });
        const text = JSON.stringify(response.body);
        expect(text).not.toContain('secret-password');
        expect(text).not.toMatch(/password/i);

        const { data: listed } = await service.nylas.grants.list({ queryParams: { provider: 'imap' } as never });
        expect(listed.map((grant) => grant.id)).toEqual([grantId]);
        expect(listed[0]!.settings).toMatchObject({ imapHost: '127.0.0.1', imapPort: 36412, sync: { state: 'idle' } });
        expect(JSON.stringify(listed)).not.toMatch(/password/i);
      });

      it('is 404 to another application (get, update, delete), which cannot connect its address either', async () => {
        expect((await sdkError(other.grants.find({ grantId }))).statusCode).toBe(404);
        expect((await sdkError(other.grants.update({ grantId, requestBody: { settings: {} } }))).statusCode).toBe(404);
        expect((await sdkError(other.grants.destroy({ grantId }))).statusCode).toBe(404);
        const { data: listed } = await other.grants.list();
        expect(listed.map((grant) => grant.id)).not.toContain(grantId);
        const taken = await sdkError(
          other.auth.customAuthentication({
            requestBody: {
              provider: 'imap',
              settings: imapConnectSettings({
                user: email,
                password: 'x',
                imapPort: CLOSED_PORT,
                smtpPort: CLOSED_PORT,
              }),
            },
          }),
        );
        expect(taken.statusCode).toBe(409);
        expect(taken.message).toBe(`settings.email: ${email} is already in use.`);
      });

      it('refuses server, credential and sync changes by PATCH (connect again instead); a name change works and is grant.updated', async () => {
        for (const key of ['imap_password', 'smtp_host', 'allow_insecure_tls', 'sync_days', 'app_password']) {
          const refused = await request(service.url, 'PATCH', `/v3/grants/${grantId}`, {
            key: service.apiKey,
            body: {
              settings: {
                [key]: key === 'allow_insecure_tls' ? true : key === 'sync_days' ? 5 : 'Changed-Password-123',
              },
            },
          });
          expect(refused.status, key).toBe(400);
          expect(refused.body.error.message).toMatch(
            new RegExp(
              `^settings\\.${key}: a connected account's servers, credentials and sync options change by connecting it again`,
            ),
          );
        }
        const [account] = await service.core.deps.db.orm
          .select()
          .from(tables.imapAccounts)
          .where(eq(tables.imapAccounts.grantId, grantId));
        expect(service.core.deps.secrets.open(account!.imapPasswordSealed)).toBe('imap-secret-password');
        expect(account!.allowInsecureTls).toBe(false);

        const { data: renamed } = await service.nylas.grants.update({
          grantId,
          requestBody: { name: 'Stored Account' } as never,
        });
        expect(renamed).toMatchObject({
          id: grantId,
          name: 'Stored Account',
          provider: 'imap',
          settings: { imapHost: '127.0.0.1', sync: { state: 'idle' } },
        });
        const events = await service.core.deps.db.orm
          .select()
          .from(tables.outboxEvents)
          .where(eq(tables.outboxEvents.objectId, grantId));
        const updated = events.filter((event) => event.type === 'grant.updated');
        expect(updated).toHaveLength(1);
        expect(updated[0]!.payload).toMatchObject({
          id: grantId,
          name: 'Stored Account',
          settings: { imap_host: '127.0.0.1' },
        });
        expect(JSON.stringify(updated[0]!.payload)).not.toMatch(/password/i);
      });

      it('cannot be taken over as an Agent Account of the same address', async () => {
        const domain = await request(service.url, 'POST', '/v3/admin/domains', {
          key: service.apiKey,
          body: { name: 'Connect', domain_address: 'connect.agentpost.localhost' },
        });
        expect(domain.status).toBe(200);
        const error = await sdkError(
          service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } }),
        );
        expect(error.statusCode).toBe(409);
        expect(error.message).toMatch(/is a connected imap account of this application/);
      });

      it("an Agent Account given a connected account's fields keeps none of them (no password stored or returned)", async () => {
        const address = 'hosted@connect.agentpost.localhost';
        const { data: hosted } = await service.nylas.auth.customAuthentication({
          requestBody: {
            provider: 'nylas',
            settings: {
              email: address,
              imap_password: 'hosted-Clear-Text-1',
              imap_host: 'imap.example.test',
              policy_note: 'kept',
            } as never,
          },
        });
        expect(hosted).toMatchObject({ provider: 'nylas', email: address });
        expect(hosted.settings).toEqual({ email: address, policyNote: 'kept' });
        const [row] = await service.core.deps.db.orm
          .select()
          .from(tables.grants)
          .where(eq(tables.grants.id, hosted.id));
        expect(row!.settings).toEqual({ policy_note: 'kept' });
      });

      it('is deleted with its account row and folder mapping (cascade), then 404', async () => {
        const db = service.core.deps.db.orm;
        expect(
          await db.select().from(tables.imapFolders).where(eq(tables.imapFolders.grantId, grantId)),
        ).not.toHaveLength(0);
        await service.nylas.grants.destroy({ grantId });
        expect((await sdkError(service.nylas.grants.find({ grantId }))).statusCode).toBe(404);
        expect(await db.select().from(tables.imapAccounts).where(eq(tables.imapAccounts.grantId, grantId))).toEqual([]);
        expect(await db.select().from(tables.imapFolders).where(eq(tables.imapFolders.grantId, grantId))).toEqual([]);
        expect(await db.select().from(tables.folders).where(eq(tables.folders.grantId, grantId))).toEqual([]);
      });
    });
  },
);
