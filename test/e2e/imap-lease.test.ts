/**
 * Several worker processes on one database share the connected accounts (src/imap/sync-runner.ts): each
 * account is synced by the one runner that holds its lease. Two services on one database file (as two processes
 * would be; each core has a runner of its own) against Debian's Dovecot on loopback: the accounts are split between
 * them with none synced twice, a service that stops cleanly hands its accounts over at once, and the lease of a
 * runner that died (never renewed) is taken once it ran out.
 */
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { imapAccounts } from '../../storage/schema/connected.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-lease: skipped: ${missing}`);

/** A fixed port of this file (Dovecot cannot pick one and say which). */
const IMAP_PORT = 36460;
const USERS = [1, 2, 3, 4].map((index) => ({ user: `user${index}@lease.test`, password: `lease-password-${index}` }));
const WAIT_MS = 20_000;

describe.skipIf(missing !== undefined)(
  'connected accounts shared by several worker processes',
  { timeout: 90_000 },
  () => {
    const secrets = createSecretBox('a test secret key of at least thirty-two characters');
    const env = { AGENTPOST_WORKER_POLL_MS: '100', AGENTPOST_IMAP_POLL_INTERVAL: '120s', AGENTPOST_IMAP_LEASE: '3s' };
    let dovecot: Dovecot;
    let first: TestService;
    let second: TestService | undefined;
    const grants: string[] = [];

    const leases = async () => {
      const rows = await first.core.deps.db.orm
        .select({ grantId: imapAccounts.grantId, owner: imapAccounts.leaseOwner })
        .from(imapAccounts)
        .where(inArray(imapAccounts.grantId, grants));
      return new Map(rows.map((row) => [row.grantId, row.owner]));
    };

    beforeAll(async () => {
      dovecot = await startDovecot({ imapPort: IMAP_PORT, users: USERS });
      for (const { user, password } of USERS) {
        const client = await imapClient(IMAP_PORT, user, password);
        await client.append(
          'INBOX',
          Buffer.from(
            `From: a@example.org\r\nTo: ${user}\r\nSubject: hello ${user}\r\nMessage-ID: <hello-${user}>\r\n\r\nHi\r\n`,
          ),
          [],
        );
        await client.logout();
      }
      first = await startTestService({ deps: { secrets }, env });
      second = await startTestService({ deps: { secrets }, env, databaseUrl: first.config.databaseUrl });
      const [application] = await first.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      for (const { user, password } of USERS) {
        grants.push(
          await createImapGrant(first.core, {
            applicationId: application!.id,
            email: user,
            password,
            imapPort: IMAP_PORT,
            smtpPort: IMAP_PORT,
            secrets,
            initial: true,
          }),
        );
      }
      for (const grant of grants) await first.core.accounts.sync.waitForInitialSync(grant, WAIT_MS);
    }, 60_000);
    afterAll(async () => {
      await second?.close();
      await first?.close();
      await dovecot?.stop();
    });

    it('syncs each account in one process only, each holding the lease of what it syncs', async () => {
      await eventually(async () => {
        const active = [...first.core.accounts.sync.active(), ...second!.core.accounts.sync.active()];
        return active.length === grants.length ? true : undefined;
      }, WAIT_MS);
      const one = new Set(first.core.accounts.sync.active());
      const other = new Set(second!.core.accounts.sync.active());
      // Between them every account, and no account in both.
      expect([...one].filter((grant) => other.has(grant))).toEqual([]);
      expect(new Set([...one, ...other])).toEqual(new Set(grants));
      // Each account's lease names one runner, the same for the accounts each process syncs.
      const owners = await leases();
      expect(new Set([...one].map((grant) => owners.get(grant))).size).toBeLessThanOrEqual(1);
      expect(new Set([...other].map((grant) => owners.get(grant))).size).toBeLessThanOrEqual(1);
      for (const grant of grants) expect(owners.get(grant)).toEqual(expect.any(String));
      // Each message stored once whichever process synced it.
      for (const grant of grants)
        expect(await first.core.deps.db.orm.$count(tables.messages, eq(tables.messages.grantId, grant))).toBe(1);
    });

    it('hands the accounts of a service that stops over to the other at once', async () => {
      await second!.close();
      second = undefined;
      // Given back on a clean stop: taken at the next scan (a second), well before a 3 s lease would run out.
      await eventually(
        async () => (first.core.accounts.sync.active().length === grants.length ? true : undefined),
        2_500,
      );
      const owners = await leases();
      expect(new Set(grants.map((grant) => owners.get(grant))).size).toBe(1);
    });

    it('takes the account of a runner that died once its lease ran out, and not before', async () => {
      const [grant] = grants;
      // A runner that died holding the account, its lease 5 s from running out; this one lets go of it.
      await first.core.accounts.sync.stop();
      const until = Date.now() + 5_000;
      await first.core.deps.db.write((tx) =>
        tx
          .update(imapAccounts)
          .set({ leaseOwner: 'a-runner-that-died', leaseUntil: until })
          .where(eq(imapAccounts.grantId, grant!)),
      );
      const restarted = await startTestService({ deps: { secrets }, env, databaseUrl: first.config.databaseUrl });
      try {
        // The other accounts at once; that one only after its lease ran out.
        await eventually(
          async () => (restarted.core.accounts.sync.active().length >= grants.length - 1 ? true : undefined),
          4_000,
        );
        const active = restarted.core.accounts.sync.active();
        if (Date.now() < until - 500) expect(active).not.toContain(grant);
        await eventually(
          async () => (restarted.core.accounts.sync.active().includes(grant!) ? true : undefined),
          9_000,
        );
        expect(Date.now()).toBeGreaterThanOrEqual(until);
        expect((await leases()).get(grant!)).not.toBe('a-runner-that-died');
      } finally {
        await restarted.close();
      }
    });
  },
);
