/**
 * Connecting existing IMAP/SMTP mailboxes as grants (`POST /v3/connect/custom`, `provider: "imap"`) through the
 * `nylas` SDK, against Debian's Dovecot (IMAP, and its auth service for Postfix) and Postfix (SMTP AUTH through
 * Dovecot) on loopback: the logins are checked on both servers before anything is stored; a refused IMAP or SMTP
 * login, a silent SMTP server and a self-signed certificate are 400s with the server's reason (the certificate is
 * accepted with `allow_insecure_tls`); the grant reads back without passwords, its `imap_accounts` row holds them
 * sealed (no clear text in the database files); the same address again re-authenticates the grant (same id, the
 * new password, `invalid` back to `valid`); `grant.created` and `grant.updated` webhooks carry the grant.
 */
import { eq } from 'drizzle-orm';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { imapConnectSettings } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { postfixMissing, startPostfix, type Postfix } from '../helpers/postfix.js';
import { sdkError } from '../helpers/sdk.js';
import { startSilentServer, type SilentServer } from '../helpers/silent-server.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`imap-connect: skipped: ${missing}`);

/** Fixed ports of this file (36400-36449 of the range). */
const IMAP_PORT = 36401;
const AUTH_PORT = 36402;
const SMTP_PORT = 36403;
/** A second Dovecot with a self-signed certificate: implicit TLS, and STARTTLS offered on its plain port. */
const TLS_PLAIN_PORT = 36404;
const TLS_PORT = 36405;

/** Passwords unlike anything else in the database, so a scan of its files finds them only if stored in clear. */
const ALICE = { user: 'alice@example.test', password: 'alice-Clear-Text-4817' };
const BOB = { user: 'bob@example.test', password: 'bob-Clear-Text-9302' };
const CAROL = { user: 'carol@example.test', password: 'carol-Clear-Text-5560' };
const ALICE_NEW_PASSWORD = 'alice-Changed-Password-77';

describe.skipIf(missing !== undefined)(
  'connecting an IMAP/SMTP account as a grant (Dovecot and Postfix)',
  { timeout: 60_000 },
  () => {
    let dovecot: Dovecot;
    let tlsDovecot: Dovecot;
    let postfix: Postfix;
    let service: TestService;
    let receiver: WebhookReceiver;
    let silent: SilentServer;
    let silentPort: number;
    let aliceId: string;

    const connect = (settings: Record<string, unknown>) =>
      service.nylas.auth.customAuthentication({ requestBody: { provider: 'imap', settings } });
    const db = () => service.core.deps.db.orm;
    const accountOf = async (grantId: string) =>
      (await db().select().from(tables.imapAccounts).where(eq(tables.imapAccounts.grantId, grantId)))[0];
    const grantCount = async () => (await db().select({ id: tables.grants.id }).from(tables.grants)).length;

    beforeAll(async () => {
      dovecot = await startDovecot({ imapPort: IMAP_PORT, authPort: AUTH_PORT, users: [ALICE, BOB, CAROL] });
      tlsDovecot = await startDovecot({ imapPort: TLS_PLAIN_PORT, tlsPort: TLS_PORT, users: [BOB] });
      postfix = startPostfix({ port: SMTP_PORT, domain: 'postfix.localhost', transports: {}, saslAuthPort: AUTH_PORT });
      receiver = await startReceiver();
      // Accepts connections and never says a word (no IMAP greeting, no SMTP banner).
      silent = await startSilentServer();
      silentPort = silent.port;
      service = await startTestService({
        env: {
          AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
          AGENTPOST_WORKER_POLL_MS: '50',
          AGENTPOST_IMAP_CONNECT_TIMEOUT: '3s',
        },
      });
      await service.nylas.webhooks.create({
        requestBody: { triggerTypes: ['grant.created', 'grant.updated'] as never, webhookUrl: receiver.url },
      });
    }, 60_000);
    afterAll(async () => {
      await silent?.close();
      await receiver?.close();
      await service?.close();
      postfix?.stop();
      await dovecot?.stop();
      await tlsDovecot?.stop();
    });

    it('creates the grant once both servers accepted the login: valid, sync_state initial, no password in what it returns', async () => {
      const { data: grant } = await connect(
        imapConnectSettings(
          { user: ALICE.user, password: ALICE.password, imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
          { sync_days: 14 },
        ),
      );
      aliceId = grant.id;
      expect(grant).toMatchObject({
        provider: 'imap',
        grantStatus: 'valid',
        email: ALICE.user,
        settings: {
          email: ALICE.user,
          imapHost: '127.0.0.1',
          imapPort: IMAP_PORT,
          imapUsername: ALICE.user,
          imapSecurity: 'starttls',
          smtpHost: '127.0.0.1',
          smtpPort: SMTP_PORT,
          smtpUsername: ALICE.user,
          smtpSecurity: 'starttls',
          allowInsecureTls: false,
          syncDays: 14,
          sync: { state: 'initial', total: 0, done: 0, lastError: null, lastSyncAt: null },
        },
      });
      expect(JSON.stringify(grant)).not.toMatch(/password|Clear-Text/i);
      // Read back the same, through find and list.
      const { data: found } = await service.nylas.grants.find({ grantId: aliceId });
      expect(found).toEqual(grant);
      const { data: listed } = await service.nylas.grants.list();
      expect(listed.find((entry) => entry.id === aliceId)).toEqual(grant);

      // One transaction made the grant and its account row; no folders (the sync maps them on its first pass).
      const account = await accountOf(aliceId);
      expect(account).toMatchObject({
        imapHost: '127.0.0.1',
        imapPort: IMAP_PORT,
        imapSecure: false,
        smtpSecure: false,
        smtpUsername: null,
        smtpPasswordSealed: null,
        syncDays: 14,
        syncState: 'initial',
        failures: 0,
        serverFilesSent: null,
      });
      expect(account!.imapPasswordSealed).toMatch(/^agps1\./);
      expect(service.core.deps.secrets.open(account!.imapPasswordSealed)).toBe(ALICE.password);
      expect(await db().select().from(tables.imapFolders).where(eq(tables.imapFolders.grantId, aliceId))).toEqual([]);
      expect(await db().select().from(tables.folders).where(eq(tables.folders.grantId, aliceId))).toEqual([]);
      // Dovecot saw our login.
      expect(dovecot.log()).toMatch(new RegExp(`imap-login: Info: Login: user=<${ALICE.user}>`));
    });

    it("sends grant.created with the grant (and Nylas' code and grant_id), never a password", async () => {
      const delivery = await eventually(
        async () =>
          receiver.deliveries.find(
            (entry) => entry.json?.type === 'grant.created' && entry.json?.data?.object?.id === aliceId,
          ),
        20_000,
      );
      expect(delivery.json).toMatchObject({
        type: 'grant.created',
        source: '/nylas/system',
        data: {
          object: {
            id: aliceId,
            grant_id: aliceId,
            code: 25012,
            provider: 'imap',
            grant_status: 'valid',
            email: ALICE.user,
            settings: { imap_host: '127.0.0.1', sync: { state: 'initial' } },
          },
        },
      });
      expect(delivery.body.toString()).not.toMatch(/password|Clear-Text/i);
    });

    it('keeps the passwords sealed: no clear text in the database files', async () => {
      // A separate SMTP password is sealed as well.
      const { data: carol } = await connect(
        imapConnectSettings(
          { user: CAROL.user, password: CAROL.password, imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
          { smtp_username: CAROL.user, smtp_password: CAROL.password },
        ),
      );
      const account = await accountOf(carol.id);
      expect(account!.smtpUsername).toBe(CAROL.user);
      expect(service.core.deps.secrets.open(account!.smtpPasswordSealed!)).toBe(CAROL.password);
      const path = fileURLToPath(new URL(service.config.databaseUrl.replace(/^file:/, 'file://')));
      let scanned = 0;
      for (const file of [path, `${path}-wal`]) {
        if (!existsSync(file)) continue;
        const bytes = readFileSync(file);
        scanned += bytes.length;
        for (const secret of [ALICE.password, CAROL.password])
          expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file}`).toBe(false);
      }
      expect(scanned).toBeGreaterThan(0);
    });

    it("a wrong IMAP password is a 400 with Dovecot's reason; nothing is stored", async () => {
      const before = await grantCount();
      const error = await sdkError(
        connect(
          imapConnectSettings({
            user: BOB.user,
            password: 'not-bob-password',
            imapPort: IMAP_PORT,
            smtpPort: SMTP_PORT,
          }),
        ),
      );
      expect(error.statusCode).toBe(400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toMatch(
        new RegExp(`^IMAP server 127\\.0\\.0\\.1:${IMAP_PORT} refused the login: .*Authentication failed`),
      );
      expect(await grantCount()).toBe(before);
    });

    it('a wrong SMTP password (IMAP right) is a 400 naming the SMTP server, with its reason; nothing is stored', async () => {
      const before = await grantCount();
      const error = await sdkError(
        connect(
          imapConnectSettings(
            { user: BOB.user, password: BOB.password, imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
            { smtp_password: 'not-bob-password' },
          ),
        ),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(new RegExp(`^SMTP server 127\\.0\\.0\\.1:${SMTP_PORT} refused the login: .*535`));
      expect(await grantCount()).toBe(before);
    });

    it('an SMTP server that never answers (IMAP right) is a 400 after the connect timeout, naming it', async () => {
      const before = await grantCount();
      const error = await sdkError(
        connect({
          ...imapConnectSettings({ user: BOB.user, password: BOB.password, imapPort: IMAP_PORT, smtpPort: silentPort }),
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(
        new RegExp(
          `^SMTP server 127\\.0\\.0\\.1:${silentPort} could not be reached: .*(greeting|timeout|timed out)`,
          'i',
        ),
      );
      expect(await grantCount()).toBe(before);
    });

    it('a self-signed certificate is refused (implicit TLS and STARTTLS) with a message saying so, and accepted with allow_insecure_tls', async () => {
      const before = await grantCount();
      const implicit = await sdkError(
        connect(
          imapConnectSettings(
            { user: BOB.user, password: BOB.password, imapPort: TLS_PORT, smtpPort: SMTP_PORT },
            { imap_security: 'tls' },
          ),
        ),
      );
      expect(implicit.statusCode).toBe(400);
      expect(implicit.message).toMatch(
        new RegExp(
          `^IMAP server 127\\.0\\.0\\.1:${TLS_PORT}: the TLS certificate failed verification \\(.*self.signed.*\\)\\. .*settings\\.allow_insecure_tls`,
          'i',
        ),
      );
      // The same server's plain port offers STARTTLS, and the upgrade meets the same certificate.
      const upgraded = await sdkError(
        connect(
          imapConnectSettings({
            user: BOB.user,
            password: BOB.password,
            imapPort: TLS_PLAIN_PORT,
            smtpPort: SMTP_PORT,
          }),
        ),
      );
      expect(upgraded.statusCode).toBe(400);
      expect(upgraded.message).toMatch(/the TLS certificate failed verification/);
      expect(await grantCount()).toBe(before);

      const { data: grant } = await connect(
        imapConnectSettings(
          { user: BOB.user, password: BOB.password, imapPort: TLS_PORT, smtpPort: SMTP_PORT },
          { imap_security: 'tls', allow_insecure_tls: true, server_files_sent: true },
        ),
      );
      expect(grant).toMatchObject({
        provider: 'imap',
        grantStatus: 'valid',
        email: BOB.user,
        settings: {
          imapPort: TLS_PORT,
          imapSecurity: 'tls',
          smtpSecurity: 'starttls',
          allowInsecureTls: true,
          serverFilesSent: true,
          syncDays: 90,
        },
      });
      expect(await accountOf(grant.id)).toMatchObject({
        imapSecure: true,
        allowInsecureTls: true,
        serverFilesSent: true,
        syncDays: service.config.imap.syncDays,
      });
      expect(tlsDovecot.log()).toMatch(new RegExp(`imap-login: Info: Login: user=<${BOB.user}>.*, TLS,`));
    });

    it('the same address again re-authenticates the grant: the new password checked and stored, invalid back to valid, same id, grant.updated', async () => {
      // As the sync leaves an account whose server refused its login.
      await db().update(tables.grants).set({ grantStatus: 'invalid' }).where(eq(tables.grants.id, aliceId));
      await db()
        .update(tables.imapAccounts)
        .set({
          syncState: 'invalid',
          failures: 6,
          retryAt: Date.now() + 3_600_000,
          lastError: 'IMAP server refused the login',
        })
        .where(eq(tables.imapAccounts.grantId, aliceId));
      await dovecot.setPassword(ALICE.user, ALICE_NEW_PASSWORD);

      // The old password no longer works: refused, and the grant stays as it was.
      const stale = await sdkError(
        connect(
          imapConnectSettings({ user: ALICE.user, password: ALICE.password, imapPort: IMAP_PORT, smtpPort: SMTP_PORT }),
        ),
      );
      expect(stale.statusCode).toBe(400);
      expect(stale.message).toMatch(/refused the login/);
      expect((await service.nylas.grants.find({ grantId: aliceId })).data.grantStatus).toBe('invalid');

      const { data: grant } = await connect(
        imapConnectSettings(
          { user: ALICE.user.toUpperCase(), password: ALICE_NEW_PASSWORD, imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
          { email: ALICE.user.toUpperCase() },
        ),
      );
      expect(grant.id).toBe(aliceId);
      expect(grant).toMatchObject({
        grantStatus: 'valid',
        email: ALICE.user,
        settings: { imapUsername: ALICE.user.toUpperCase(), syncDays: 14, sync: { state: 'initial', lastError: null } },
      });
      const account = await accountOf(aliceId);
      // The sync is woken at once, so by now it may be running its first pass again.
      expect(account).toMatchObject({
        syncState: expect.stringMatching(/^(initial|running)$/),
        failures: 0,
        retryAt: null,
        lastError: null,
      });
      expect(service.core.deps.secrets.open(account!.imapPasswordSealed)).toBe(ALICE_NEW_PASSWORD);
      expect(await db().select().from(tables.grants).where(eq(tables.grants.email, ALICE.user))).toHaveLength(1);

      // Exactly one grant.updated: the refused attempt recorded none.
      const events = await db().select().from(tables.outboxEvents).where(eq(tables.outboxEvents.objectId, aliceId));
      expect(events.filter((event) => event.type === 'grant.updated')).toHaveLength(1);
      const delivery = await eventually(
        async () =>
          receiver.deliveries.find(
            (entry) => entry.json?.type === 'grant.updated' && entry.json?.data?.object?.id === aliceId,
          ),
        20_000,
      );
      expect(delivery.json).toMatchObject({
        type: 'grant.updated',
        data: {
          object: { id: aliceId, grant_id: aliceId, code: 25014, reauthentication_flag: true, grant_status: 'valid' },
        },
      });
      expect(delivery.body.toString()).not.toMatch(/password|Clear-Text|Changed-Password/i);
    });

    it('re-authenticating a grant whose sync runs leaves its sync state alone (no initial sync again)', async () => {
      await db()
        .update(tables.imapAccounts)
        .set({ syncState: 'idle', syncTotal: 40, syncDone: 40 })
        .where(eq(tables.imapAccounts.grantId, aliceId));
      const { data: grant } = await connect(
        imapConnectSettings({
          user: ALICE.user,
          password: ALICE_NEW_PASSWORD,
          imapPort: IMAP_PORT,
          smtpPort: SMTP_PORT,
        }),
      );
      expect(grant.id).toBe(aliceId);
      // Woken by the re-authentication, the sync may be in a pass already: idle or running, never initial.
      expect(grant.settings).toMatchObject({
        imapUsername: ALICE.user,
        sync: { state: expect.stringMatching(/^(idle|running)$/), total: 40, done: 40 },
      });
    });

    it('another application sees none of it (404) and cannot connect the same address (409)', async () => {
      const other = service.client(
        (await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' })).apiKey,
      );
      expect((await sdkError(other.grants.find({ grantId: aliceId }))).statusCode).toBe(404);
      expect((await sdkError(other.grants.destroy({ grantId: aliceId }))).statusCode).toBe(404);
      const taken = await sdkError(
        other.auth.customAuthentication({
          requestBody: {
            provider: 'imap',
            settings: imapConnectSettings({
              user: ALICE.user,
              password: ALICE_NEW_PASSWORD,
              imapPort: IMAP_PORT,
              smtpPort: SMTP_PORT,
            }),
          },
        }),
      );
      expect(taken.statusCode).toBe(409);
      expect(await accountOf(aliceId)).toBeDefined();
    });

    it('deleting the grant removes its account row', async () => {
      await service.nylas.grants.destroy({ grantId: aliceId });
      expect(await accountOf(aliceId)).toBeUndefined();
      expect((await sdkError(service.nylas.grants.find({ grantId: aliceId }))).statusCode).toBe(404);
    });
  },
);
