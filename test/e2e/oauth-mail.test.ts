/**
 * The mail of an OAuth grant (issue 38 item 4) over real IMAP and SMTP with XOAUTH2: oidc-provider on loopback stands
 * for Google; Debian's Dovecot checks each token by introspecting it there (`passdb { driver = oauth2 }`,
 * `introspection_mode = post`); Postfix's submission authenticates through Dovecot's SASL, so SMTP XOAUTH2 is real
 * too. The grant is made by the hosted sign-in; its mail syncs in, a send leaves through the account's SMTP server,
 * and an access token that stops working mid-sync (revoked at the provider, the connections kicked) is refreshed
 * without losing a message.
 */
import { eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { dovecotMissing, type Dovecot } from '../helpers/dovecot.js';
import { imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startOidcProvider, walkSignIn, type OidcServer } from '../helpers/oidc.js';
import { arrivesIn, smallMail, startOAuthMail } from '../helpers/oauth-mail.js';
import { postfixMissing, type Postfix } from '../helpers/postfix.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`oauth-mail: skipped: ${missing}`);

/** Fixed ports of this file (36840-36879 of the range). */
const IMAP_PORT = 36841;
const LMTP_PORT = 36842;
const AUTH_PORT = 36843;
const SMTP_PORT = 36844;

const ALICE = { user: 'alice@example.test', password: 'alice-password-for-the-test-side' };
const BOB = { user: 'bob@example.test', password: 'bob-password' };
/** The connector's IMAP and SMTP servers: this file's Dovecot and Postfix. */
const SERVERS: Record<string, string | number> = {
  imapHost: '127.0.0.1',
  imapPort: IMAP_PORT,
  smtpHost: '127.0.0.1',
  smtpPort: SMTP_PORT,
};
const APP_REDIRECT = 'http://127.0.0.1:9/app/callback';
const WAIT_MS = 20_000;

function message(subject: string): string {
  return smallMail(BOB.user, ALICE.user, subject);
}

describe.skipIf(missing !== undefined)(
  'the mail of an OAuth grant over IMAP and SMTP with XOAUTH2',
  { timeout: 60_000 },
  () => {
    let oidc: OidcServer;
    let dovecot: Dovecot;
    let postfix: Postfix;
    let service: TestService;
    let alice: ImapFlow;
    let bob: ImapFlow;
    let grantId: string;

    beforeAll(async () => {
      service = await startTestService({
        env: { AGENTPOST_WORKER_POLL_MS: '100', AGENTPOST_RATE_LIMIT_APPLICATION: '0' },
      });
      oidc = await startOidcProvider({ redirectUris: [`${service.url}/v3/connect/callback`] });
      ({ dovecot, postfix } = await startOAuthMail(
        { imap: IMAP_PORT, lmtp: LMTP_PORT, auth: AUTH_PORT, smtp: SMTP_PORT },
        [ALICE, BOB],
        oidc,
      ));
      const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
      await service.nylas.connectors.create({
        requestBody: {
          name: 'Google (loopback)',
          provider: 'google',
          settings: {
            clientId: clientId!,
            clientSecret: clientSecret!,
            ...endpoints,
            // The connector's IMAP and SMTP servers: this file's Dovecot and Postfix.
            ...SERVERS,
          },
          scope: ['openid', 'email', 'offline_access', 'https://mail.google.com/'],
        },
      });
      await service.nylas.applications.redirectUris.create({ requestBody: { url: APP_REDIRECT, platform: 'web' } });
      alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
      bob = await imapClient(IMAP_PORT, BOB.user, BOB.password);
      await alice.append('INBOX', message('Before the sign-in'));
    }, 60_000);
    afterAll(async () => {
      await alice?.logout().catch(() => undefined);
      await bob?.logout().catch(() => undefined);
      await service?.close();
      postfix?.stop();
      await dovecot?.stop();
      await oidc?.stop();
    });

    const subjects = async () =>
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { limit: 50 } })).data.map(
        (item) => item.subject,
      );

    it('the hosted sign-in makes a google grant whose IMAP account logs in with XOAUTH2, and its mail syncs in', async () => {
      const applicationId = (await service.nylas.applications.getDetails()).data.applicationId;
      const walk = await walkSignIn(
        service.nylas.auth.urlForOAuth2({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          provider: 'google',
          accessType: 'offline',
        }),
        { login: ALICE.user, stopAt: APP_REDIRECT },
      );
      const code = walk.final.searchParams.get('code')!;
      const exchanged = await service.nylas.auth.exchangeCodeForToken({
        clientId: applicationId,
        redirectUri: APP_REDIRECT,
        code,
      });
      grantId = exchanged.grantId;
      const [account] = await service.core.deps.db.orm
        .select()
        .from(tables.imapAccounts)
        .where(eq(tables.imapAccounts.grantId, grantId));
      expect(account).toMatchObject({ authMethod: 'oauth2', imapUsername: ALICE.user, imapPort: IMAP_PORT });

      await eventually(async () => ((await subjects()).includes('Before the sign-in') ? true : undefined), WAIT_MS);
      expect(dovecot.log()).toMatch(new RegExp(`user=<${ALICE.user}>, method=(OAUTHBEARER|XOAUTH2)`));
    });

    it('a send leaves through the SMTP server with XOAUTH2 and arrives', async () => {
      await service.nylas.messages.send({
        identifier: grantId,
        requestBody: { to: [{ email: BOB.user }], subject: 'Sent with XOAUTH2', body: 'Hello Bob' },
      });
      await arrivesIn(bob, 'Sent with XOAUTH2', WAIT_MS);
    });

    it('an access token that stops working mid-sync is refreshed, and no message is lost', async () => {
      const tokens = service.core.accounts.grantTokens;
      const before = (await tokens.accessToken(grantId)).accessToken;
      // The provider stops honouring the token (as at its expiry), and the server drops the sessions it let in: the
      // next logins are refused until the token is refreshed.
      await oidc.expireAccessToken(before);
      await alice.append('INBOX', message('While the token was dead'));
      dovecot.doveadm('kick', ALICE.user);
      service.core.accounts.sync.wake(grantId);

      await eventually(
        async () => ((await subjects()).includes('While the token was dead') ? true : undefined),
        WAIT_MS,
      );
      const after = (await tokens.accessToken(grantId)).accessToken;
      expect(after).not.toBe(before);
      // The refresh followed a refused login (the old token), not the clock: the token's lifetime is an hour.
      expect(dovecot.log()).toMatch(
        /auth failed, \d+ attempts?.*user=<alice@example\.test>, method=(OAUTHBEARER|XOAUTH2)/,
      );
      expect((await subjects()).filter((subject) => subject === 'Before the sign-in')).toHaveLength(1);
      expect((await service.nylas.grants.find({ grantId })).data.grantStatus).toBe('valid');
    });
  },
);
