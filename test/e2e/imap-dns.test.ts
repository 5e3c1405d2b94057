/**
 * A connected account's server names go through the service's resolver (AGENTPOST_DNS_SERVERS), as every other
 * look-up does: here dnsmasq on loopback serves `*.dnsmail.test`, names that exist nowhere else. The sync reaches
 * Debian's Dovecot by such a name; a name with no address fails the account as a server that cannot be reached;
 * the SMTP side (login check, submission) connects to the address the resolver gives.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, systemDns } from '../../src/index.js';
import { createConnector } from '../../src/imap/connection.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { tables } from '../../storage/index.js';
import { imapAccounts } from '../../storage/schema/connected.js';
import { dnsmasqMissing, startDnsmasq, type Dnsmasq } from '../helpers/dnsmasq.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing() ?? dnsmasqMissing();
if (missing) console.warn(`imap-dns: skipped: ${missing}`);

/** Fixed ports of this file. */
const IMAP_PORT = 36463;
const DNSMASQ_PORT = 36520;
/** A port nothing listens on. */
const CLOSED_PORT = 36464;
const USER = { user: 'named@dnsmail.test', password: 'named-password' };

describe.skipIf(missing !== undefined)(
  'connected accounts by server name, through AGENTPOST_DNS_SERVERS',
  { timeout: 60_000 },
  () => {
    const secrets = createSecretBox('a test secret key of at least thirty-two characters');
    let dns: Dnsmasq;
    let dovecot: Dovecot;
    let service: TestService;
    let applicationId: string;

    beforeAll(async () => {
      dns = await startDnsmasq(DNSMASQ_PORT, {
        localZones: ['dnsmail.test'],
        hosts: [['imap.dnsmail.test', '127.0.0.1']],
      });
      dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [USER] });
      const client = await imapClient(IMAP_PORT, USER.user, USER.password);
      await client.append(
        'INBOX',
        Buffer.from(
          `From: a@example.org\r\nTo: ${USER.user}\r\nSubject: found by name\r\nMessage-ID: <by-name@example.org>\r\n\r\nHi\r\n`,
        ),
        [],
      );
      await client.logout();
      service = await startTestService({
        deps: { secrets },
        realDns: true,
        env: { AGENTPOST_DNS_SERVERS: dns.server, AGENTPOST_DNS_TIMEOUT: '1', AGENTPOST_WORKER_POLL_MS: '100' },
      });
      const [application] = await service.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      applicationId = application!.id;
    });
    afterAll(async () => {
      await service?.close();
      await dovecot?.stop();
      await dns?.stop();
    });

    it('syncs an account whose IMAP server is named by a host only the resolver knows', async () => {
      const grant = await createImapGrant(service.core, {
        applicationId,
        email: USER.user,
        password: USER.password,
        imapPort: IMAP_PORT,
        smtpPort: IMAP_PORT,
        secrets,
        initial: true,
        imapHost: 'imap.dnsmail.test',
      });
      service.core.accounts.sync.wake(grant);
      await service.core.accounts.sync.waitForInitialSync(grant, 20_000);
      const { data } = await service.nylas.messages.list({ identifier: grant });
      expect(data.map((message) => message.subject)).toEqual(['found by name']);
    });

    it('fails an account whose server name has no address as a server that cannot be reached', async () => {
      const grant = await createImapGrant(service.core, {
        applicationId,
        email: 'lost@dnsmail.test',
        password: 'x',
        imapPort: IMAP_PORT,
        smtpPort: IMAP_PORT,
        secrets,
        initial: true,
        imapHost: 'nowhere.dnsmail.test',
      });
      service.core.accounts.sync.wake(grant);
      const account = await eventually(async () => {
        const [row] = await service.core.deps.db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grant));
        return row?.syncState === 'failing' ? row : undefined;
      }, 15_000);
      expect(account.lastError).toMatch(/^IMAP server nowhere\.dnsmail\.test:36463 could not be reached: .*ENOTFOUND/);
      // Not a refused login: the grant stays valid and is tried again later.
      expect(account.retryAt).toEqual(expect.any(Number));
      const [row] = await service.core.deps.db.orm
        .select({ status: tables.grants.grantStatus })
        .from(tables.grants)
        .where(eq(tables.grants.id, grant));
      expect(row!.status).not.toBe('invalid');
    });

    it('connects the SMTP side to the address the resolver gives', async () => {
      const connector = createConnector(loadConfig({}), systemDns({ servers: [dns.server], timeoutMs: 1_000 }));
      const endpoint = (host: string) => ({
        host,
        port: CLOSED_PORT,
        secure: false,
        username: 'u',
        password: 'p',
        allowInsecureTls: false,
      });
      // Resolved to 127.0.0.1, where nothing listens on that port: refused, not "not found".
      await expect(connector.checkSmtp(endpoint('imap.dnsmail.test'))).rejects.toThrow(
        /SMTP server imap\.dnsmail\.test:36464 could not be reached: .*ECONNREFUSED/,
      );
      await expect(connector.checkSmtp(endpoint('nowhere.dnsmail.test'))).rejects.toThrow(
        /SMTP server nowhere\.dnsmail\.test:36464 could not be reached: .*ENOTFOUND/,
      );
      await expect(
        connector.submit(
          endpoint('nowhere.dnsmail.test'),
          { from: 'a@dnsmail.test', to: ['b@example.org'] },
          Buffer.from('Subject: x\r\n\r\nx\r\n'),
        ),
      ).rejects.toMatchObject({
        code: undefined,
        failure: { kind: 'network' },
      });
    });
  },
);
