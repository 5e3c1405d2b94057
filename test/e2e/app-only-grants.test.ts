/**
 * Grants whose tokens a connector credential mints, with no user signing in (issue 38 item 2), through the `nylas`
 * SDK (`connectors.credentials.create`, `auth.customAuthentication`):
 * - a Google service account with domain-wide delegation (`serviceaccount` credential): the service signs a JWT
 *   assertion with the account's private key and posts it (jwt-bearer, RFC 7523) to the connector's token_url;
 * - a Microsoft app with admin consent (`adminconsent` credential): client credentials at the token URL.
 * oidc-provider on loopback stands for Google and Microsoft: a jwt-bearer grant registered on it checks the
 * assertion's signature with the service account's public key, `iss`, `aud` and `exp`, and issues a token for `sub`;
 * its client credentials grant issues an app's token naming the mailbox the app was given. Debian's Dovecot logs in
 * with those tokens by introspecting them (`passdb { driver = oauth2 }`) and Postfix's submission authenticates
 * through Dovecot's SASL, so IMAP and SMTP XOAUTH2 are real.
 */
import { generateKeyPairSync } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { CredentialType } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { tenantTokenUrl } from '../../src/oauth/app-tokens.js';
import { dovecotMissing, type Dovecot } from '../helpers/dovecot.js';
import { imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startOidcProvider, type OidcServer } from '../helpers/oidc.js';
import { arrivesIn, smallMail, startOAuthMail } from '../helpers/oauth-mail.js';
import { postfixMissing, type Postfix } from '../helpers/postfix.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`app-only-grants: skipped: ${missing}`);

/** Fixed ports of this file (36100-36149: below the 36700-36999 that freePort hands out). */
const PORTS = { imap: 36101, lmtp: 36102, auth: 36103, smtp: 36104 };

const ALICE = { user: 'alice@example.test', password: 'alice-password-for-the-test-side' };
const CAROL = { user: 'carol@example.test', password: 'carol-password-for-the-test-side' };
const BOB = { user: 'bob@example.test', password: 'bob-password' };
/** The Microsoft app with admin consent, given access to Carol's mailbox at the provider. */
const APP = { clientId: 'contoso-mail-app', clientSecret: 'contoso-mail-app-secret-value', mailbox: CAROL.user };
/** A second app with access to the same mailbox (the grant connected again after the first is refused). */
const APP_2 = { clientId: 'contoso-mail-app-2', clientSecret: 'contoso-mail-app-2-secret-value', mailbox: CAROL.user };
const SERVERS = { imapHost: '127.0.0.1', imapPort: PORTS.imap, smtpHost: '127.0.0.1', smtpPort: PORTS.smtp };
const WAIT_MS = 20_000;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** A service account's key pair as its JSON key file holds it. */
function serviceAccountKey(clientEmail: string, keyId: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    clientEmail,
    keyId,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function message(to: string, subject: string): string {
  return smallMail(BOB.user, to, subject);
}

describe.skipIf(missing !== undefined)(
  'service-account and app-only grants: tokens minted with a connector credential, mail over IMAP and SMTP XOAUTH2',
  { timeout: 60_000 },
  () => {
    let oidc: OidcServer;
    let service: TestService;
    let dovecot: Dovecot;
    let postfix: Postfix;
    /** The test side's own logins: Alice's and Carol's mailboxes, and Bob's, who receives what the grants send. */
    let [alice, carol, bob]: ImapFlow[] = [];
    const sa = serviceAccountKey('mailer@project.iam.gserviceaccount.example', 'key-1');
    let saCredential: string;
    let googleGrant: string;
    let appCredential: string;
    let microsoftGrant: string;

    beforeAll(async () => {
      service = await startTestService({
        env: { AGENTPOST_WORKER_POLL_MS: '100', AGENTPOST_RATE_LIMIT_APPLICATION: '0' },
      });
      oidc = await startOidcProvider({
        redirectUris: [`${service.url}/v3/connect/callback`],
        appOnlyClients: [APP, APP_2],
      });
      oidc.addServiceAccount(sa);
      ({ dovecot, postfix } = await startOAuthMail(PORTS, [ALICE, CAROL, BOB], oidc));
      const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
      for (const provider of ['google', 'microsoft'] as const) {
        await service.nylas.connectors.create({
          requestBody: {
            name: `${provider} (loopback)`,
            provider,
            settings: { clientId: clientId!, clientSecret: clientSecret!, ...endpoints, ...SERVERS },
            scope: ['https://mail.google.com/'],
          },
        });
      }
      [alice, carol, bob] = await Promise.all(
        [ALICE, CAROL, BOB].map((user) => imapClient(PORTS.imap, user.user, user.password)),
      );
      await alice!.append('INBOX', message(ALICE.user, 'Before the service account'));
      await carol!.append('INBOX', message(CAROL.user, 'Before the app'));
    }, 60_000);
    afterAll(async () => {
      for (const client of [alice, carol, bob]) await client?.logout().catch(() => undefined);
      await service?.close();
      postfix?.stop();
      await dovecot?.stop();
      await oidc?.stop();
    });

    const connect = (provider: 'google' | 'microsoft', settings: Record<string, unknown>) =>
      service.nylas.auth.customAuthentication({ requestBody: { provider, settings } });
    const grantCount = async () => (await service.nylas.grants.list()).data.length;
    const subjects = async (grantId: string) =>
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { limit: 50 } })).data.map(
        (item) => item.subject,
      );
    const expiredEvents = async (grantId: string) =>
      service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.type, 'grant.expired'), eq(tables.outboxEvents.objectId, grantId)));
    const tokenRow = async (grantId: string) =>
      (
        await service.core.deps.db.orm
          .select()
          .from(tables.oauthGrantTokens)
          .where(eq(tables.oauthGrantTokens.grantId, grantId))
      )[0]!;
    /** Creates a credential of the provider's connector through the SDK; its id. */
    const createCredential = async (
      provider: 'google' | 'microsoft',
      name: string,
      credentialType: CredentialType,
      credentialData: Record<string, string>,
    ) =>
      (
        await service.nylas.connectors.credentials.create({
          provider,
          requestBody: { name, credentialType, credentialData } as never,
        })
      ).data.id;
    const createServiceAccount = (name: string, key: { keyId: string; privateKeyPem: string; clientEmail: string }) =>
      createCredential('google', name, CredentialType.SERVICEACCOUNT, {
        privateKeyId: key.keyId,
        privateKey: key.privateKeyPem,
        clientEmail: key.clientEmail,
      });
    const createApp = (name: string, app: { clientId: string; clientSecret: string }) =>
      createCredential('microsoft', name, CredentialType.ADMINCONSENT, app);

    /** Connects `email` with the credential: a valid grant of the provider, showing the credential and the scopes. */
    async function connectsAs(provider: 'google' | 'microsoft', credentialId: string, email: string, scope: string[]) {
      const { data: grant } = await connect(provider, { credential_id: credentialId, email_address: email });
      expect(grant).toMatchObject({ provider, email, grantStatus: 'valid', credentialId, scope });
      return grant;
    }

    /** The grant's mail (`synced` was there before) syncs in over IMAP XOAUTH2, and a send (`sent`) reaches Bob. */
    async function syncsAndSends(grantId: string, synced: string, sent: string) {
      await eventually(async () => ((await subjects(grantId)).includes(synced) ? true : undefined), WAIT_MS);
      const { email } = (await service.nylas.grants.find({ grantId })).data;
      expect(dovecot.log()).toMatch(new RegExp(`user=<${email}>, method=(OAUTHBEARER|XOAUTH2)`));
      await service.nylas.messages.send({
        identifier: grantId,
        requestBody: { to: [{ email: BOB.user }], subject: sent, body: 'Hello Bob' },
      });
      await arrivesIn(bob!, sent, WAIT_MS);
    }

    /**
     * The grant's token stops working at the provider (as at its expiry) and the server drops its sessions: the next
     * login is refused, a token is minted again (with `grantType` at the provider), and the mail arrives.
     */
    async function mintedAgainAfterRefusedLogin(grantId: string, owner: ImapFlow, subject: string, grantType: string) {
      const tokens = service.core.accounts.grantTokens;
      const old = (await tokens.accessToken(grantId)).accessToken;
      const before = oidc.mintRequests.length;
      await oidc.expireAccessToken(old);
      const email = (await service.nylas.grants.find({ grantId })).data.email!;
      await owner.append('INBOX', message(email, subject));
      dovecot.doveadm('kick', email);
      service.core.accounts.sync.wake(grantId);
      await eventually(async () => ((await subjects(grantId)).includes(subject) ? true : undefined), WAIT_MS);
      expect((await tokens.accessToken(grantId)).accessToken).not.toBe(old);
      expect(oidc.mintRequests.slice(before).map((request) => request.grantType)).toContain(grantType);
      expect((await service.nylas.grants.find({ grantId })).data.grantStatus).toBe('valid');
    }

    /**
     * The provider refuses the grant's account or app (`refused`): the grant turns invalid with grant.expired. A new
     * credential (`next`) connects it again; deleting that credential turns it invalid again at the next mint.
     */
    async function refusedThenDeleted(
      provider: 'google' | 'microsoft',
      grantId: string,
      refused: string,
      email: string,
      next: () => Promise<string>,
    ) {
      const tokens = service.core.accounts.grantTokens;
      const status = async () => (await service.nylas.grants.find({ grantId })).data.grantStatus;
      oidc.refuse(refused);
      await expect(tokens.accessToken(grantId, { force: true })).rejects.toMatchObject({ code: 'unauthorized' });
      expect(await status()).toBe('invalid');
      expect(await expiredEvents(grantId)).toHaveLength(1);

      const credentialId = await next();
      const { data: again } = await connect(provider, { credential_id: credentialId, email_address: email });
      expect(again).toMatchObject({ id: grantId, grantStatus: 'valid', credentialId });

      await service.nylas.connectors.credentials.destroy({ provider, credentialsId: credentialId });
      await expect(tokens.accessToken(grantId, { force: true })).rejects.toMatchObject({ code: 'unauthorized' });
      expect(await status()).toBe('invalid');
      expect(await expiredEvents(grantId)).toHaveLength(2);
    }

    it('a Google service account grant: a signed assertion at the token_url; its mail syncs and sends over XOAUTH2', async () => {
      saCredential = await createServiceAccount('Mailer', sa);
      const before = oidc.mintRequests.length;
      const grant = await connectsAs('google', saCredential, ALICE.user, ['https://mail.google.com/']);
      googleGrant = grant.id;
      expect(JSON.stringify(grant)).not.toContain('PRIVATE KEY');

      // The assertion the provider received: RS256 with the key's id, the account as iss, the user as sub.
      const [request] = oidc.mintRequests.slice(before);
      expect(request).toMatchObject({
        grantType: JWT_BEARER,
        header: { alg: 'RS256', kid: 'key-1' },
        claims: {
          iss: sa.clientEmail,
          sub: ALICE.user,
          scope: 'https://mail.google.com/',
          aud: `${oidc.issuer}/token`,
        },
      });
      const { iat, exp } = request!.claims as { iat: number; exp: number };
      expect(exp - iat).toBe(3600);
      expect(Math.abs(iat - Math.floor(Date.now() / 1000))).toBeLessThan(60);

      // No refresh token; the access token sealed; the key stays in the sealed credential alone.
      const row = await tokenRow(googleGrant);
      expect(row).toMatchObject({ kind: 'service_account', refreshTokenSealed: null, provider: 'google' });
      const stored = JSON.stringify(await service.core.deps.db.orm.select().from(tables.oauthGrantTokens));
      expect(stored).not.toContain('PRIVATE KEY');

      await syncsAndSends(googleGrant, 'Before the service account', 'Sent by the service account');
    });

    it('a service account token expired at the provider is minted again with a new assertion on the refused login', () =>
      mintedAgainAfterRefusedLogin(googleGrant, alice!, 'While the assertion token was dead', JWT_BEARER));

    it('a wrong key, a key that is no key, a credential of another type, an unknown one, a credential of another application and a missing email_address are 400/404s; nothing is stored', async () => {
      const count = await grantCount();
      const stranger = serviceAccountKey(sa.clientEmail, 'key-1');
      const wrongKey = await createServiceAccount('Wrong key', stranger);
      const refused = await sdkError(
        connect('google', { credential_id: wrongKey, email_address: 'dave@example.test' }),
      );
      expect(refused.statusCode).toBe(400);
      expect(refused.message).toMatch(
        /^settings\.credential_id: the provider refused the assertion of service account credential \S+ for dave@example\.test at http:\/\/127\.0\.0\.1:\d+\/token \(invalid_grant/,
      );
      expect(refused.message).not.toContain('PRIVATE KEY');

      const notAKey = await createServiceAccount('Not a key', { ...sa, keyId: 'k', privateKeyPem: 'not a pem key' });
      const unreadable = await sdkError(
        connect('google', { credential_id: notAKey, email_address: 'dave@example.test' }),
      );
      expect(unreadable.statusCode).toBe(400);
      expect(unreadable.message).toMatch(
        /settings\.credential_id: the private_key of credential \S+ is not an RSA private key/,
      );

      const overrides = await createCredential('google', 'Overrides', CredentialType.CONNECTOR, { clientId: 'x' });
      const wrongType = await sdkError(
        connect('google', { credential_id: overrides, email_address: 'dave@example.test' }),
      );
      expect(wrongType.statusCode).toBe(400);
      expect(wrongType.message).toMatch(
        /settings\.credential_id: credential \S+ is a connector credential; .* needs a serviceaccount one/,
      );

      const unknown = await sdkError(
        connect('google', { credential_id: 'no-such-credential', email_address: 'dave@example.test' }),
      );
      expect(unknown.statusCode).toBe(404);

      const created = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
      const other = service.client(created.apiKey);
      await other.connectors.create({
        requestBody: {
          name: 'Google',
          provider: 'google',
          settings: { clientId: 'other-client', clientSecret: 'other-secret', ...SERVERS },
        },
      });
      const othersCredential = (
        await other.connectors.credentials.create({
          provider: 'google',
          requestBody: {
            name: 'Theirs',
            credentialType: CredentialType.SERVICEACCOUNT,
            credentialData: { privateKeyId: sa.keyId, privateKey: sa.privateKeyPem, clientEmail: sa.clientEmail },
          },
        })
      ).data.id;
      const foreign = await sdkError(
        connect('google', { credential_id: othersCredential, email_address: 'dave@example.test' }),
      );
      expect(foreign.statusCode).toBe(404);

      const noAddress = await sdkError(connect('google', { credential_id: saCredential }));
      expect(noAddress.statusCode).toBe(400);
      expect(noAddress.message).toMatch(/settings\.email_address/);
      expect(await grantCount()).toBe(count);
    });

    it('a service account the provider refuses, then a credential deleted, turn the grant invalid with grant.expired; connecting again restores it', async () => {
      // Then a new key of another account: the same address again re-authenticates the grant (same id).
      const second = serviceAccountKey('mailer-2@project.iam.gserviceaccount.example', 'key-2');
      oidc.addServiceAccount(second);
      await refusedThenDeleted('google', googleGrant, sa.clientEmail, ALICE.user, () =>
        createServiceAccount('Mailer 2', second),
      );
    });

    it('a Microsoft app-only grant: client credentials at the token URL; its mailbox syncs and sends over XOAUTH2', async () => {
      appCredential = await createApp('Contoso mail app', APP);
      const before = oidc.mintRequests.length;
      const grant = await connectsAs('microsoft', appCredential, CAROL.user, [
        'https://outlook.office365.com/.default',
      ]);
      microsoftGrant = grant.id;
      expect(JSON.stringify(grant)).not.toContain(APP.clientSecret);
      expect(oidc.mintRequests.slice(before)).toEqual([{ grantType: 'client_credentials' }]);
      expect(await tokenRow(microsoftGrant)).toMatchObject({ kind: 'app_only', refreshTokenSealed: null });

      await syncsAndSends(microsoftGrant, 'Before the app', 'Sent by the app');
    });

    it('an app-only token expired at the provider is minted again on the refused login', () =>
      mintedAgainAfterRefusedLogin(microsoftGrant, carol!, 'While the app token was dead', 'client_credentials'));

    it('a wrong client secret is a 400 naming settings.credential_id, a Google service account on the Microsoft connector a 404; nothing is stored', async () => {
      const count = await grantCount();
      const wrongSecret = await createApp('Wrong secret', { clientId: APP.clientId, clientSecret: 'not-the-secret' });
      const refused = await sdkError(
        connect('microsoft', { credential_id: wrongSecret, email_address: 'erin@example.test' }),
      );
      expect(refused.statusCode).toBe(400);
      expect(refused.message).toMatch(
        /^settings\.credential_id: the provider refused the client credentials of credential \S+ at http:\/\/127\.0\.0\.1:\d+\/token \(invalid_client/,
      );
      expect(refused.message).not.toContain('not-the-secret');
      const wrongConnector = await sdkError(
        connect('microsoft', { credential_id: saCredential, email_address: CAROL.user }),
      );
      expect(wrongConnector.statusCode).toBe(404);
      const badTenant = await sdkError(
        connect('microsoft', { credential_id: appCredential, email_address: CAROL.user, tenant: '../evil' }),
      );
      expect(badTenant.statusCode).toBe(400);
      expect(badTenant.message).toMatch(/settings\.tenant/);
      expect(await grantCount()).toBe(count);
    });

    it('an app the provider refuses, then a credential deleted, turn the grant invalid with grant.expired; connecting again restores it', () =>
      refusedThenDeleted('microsoft', microsoftGrant, APP.clientId, CAROL.user, () =>
        createApp('Contoso mail app 2', APP_2),
      ));

    it("a tenant replaces the /common/ or /organizations/ segment of the connector's token URL", () => {
      const common = 'https://login.microsoftonline.com/common/oauth2/v2.0/token';
      expect(tenantTokenUrl(common, 'contoso.onmicrosoft.com')).toBe(
        'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token',
      );
      expect(tenantTokenUrl(common.replace('common', 'organizations'), 'b1c2')).toBe(
        'https://login.microsoftonline.com/b1c2/oauth2/v2.0/token',
      );
      expect(tenantTokenUrl(common, undefined)).toBe(common);
      const named = 'https://login.microsoftonline.com/fabrikam.example/oauth2/v2.0/token';
      expect(tenantTokenUrl(named, 'contoso.onmicrosoft.com')).toBe(named);
    });
  },
);
