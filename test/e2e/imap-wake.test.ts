/**
 * A wake (`core.accounts.sync.wake(grant)`: the connect flow, or anyone who knows the server changed) is never lost, whenever it
 * comes (src/imap/sync-runner.ts): between the end of a pass and the start of the IDLE that would hear it,
 * and in the middle of a full pass. A runner of the test's own, on a core whose background does not run, against
 * Debian's Dovecot on loopback; its sync is the real one, with the wakes sent from inside it at those moments. The poll
 * interval is two minutes, so a lost wake shows as no full pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { createMailStore } from '../../src/messages/mail-store.js';
import { createConnector } from '../../src/imap/connection.js';
import { createImapSync } from '../../src/imap/sync.js';
import { createImapSyncRunner, type ImapSyncRunner } from '../../src/imap/sync-runner.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { createTestCore } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-wake: skipped: ${missing}`);

/** A fixed port of this file (36490-36499 of the range). */
const IMAP_PORT = 36490;
const USER = { user: 'wake@wake.test', password: 'wake-password' };
const WAIT_MS = 20_000;

describe.skipIf(missing !== undefined)('a wake of a connected account is never lost', { timeout: 90_000 }, () => {
  const secrets = createSecretBox('a test secret key of at least thirty-two characters');
  let dovecot: Dovecot;
  let test: Awaited<ReturnType<typeof createTestCore>>;
  let runner: ImapSyncRunner;
  let grant: string;
  /** The passes the runner ran, in order. */
  const passes: ('full' | 'inbox')[] = [];
  /** Set: the next SELECT of INBOX for IDLE wakes the account first (as if woken just before the wait began). */
  let wakeOnWatch = false;
  /** Set: the next full pass wakes the account once it has begun. */
  let wakeInPass = false;

  beforeAll(async () => {
    dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [USER] });
    test = await createTestCore({ secrets }, { AGENTPOST_IMAP_POLL_INTERVAL: '120s' });
    const { core } = test;
    const sync = createImapSync(core.deps, {
      inbound: core.mail.inbound,
      store: createMailStore(core.deps),
      destroyForGood: core.mail.messages.destroyForGood,
    });
    runner = createImapSyncRunner(core.deps, {
      connector: createConnector(core.deps.config, core.deps.dns),
      sync: {
        ...sync,
        async pass(client, grantId, options) {
          passes.push(options?.inboxOnly ? 'inbox' : 'full');
          if (wakeInPass && !options?.inboxOnly) {
            wakeInPass = false;
            runner.wake(grantId);
          }
          return sync.pass(client, grantId, options);
        },
        async watchInbox(client, grantId) {
          if (wakeOnWatch) {
            wakeOnWatch = false;
            runner.wake(grantId);
          }
          return sync.watchInbox(client, grantId);
        },
      },
    });
    runner.start();
    const [application] = await core.deps.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications)
      .where(eq(tables.applications.isDefault, true));
    grant = await createImapGrant(core, {
      applicationId: application!.id,
      email: USER.user,
      password: USER.password,
      imapPort: IMAP_PORT,
      smtpPort: IMAP_PORT,
      secrets,
      initial: true,
    });
    runner.wake(grant);
    await runner.waitForInitialSync(grant, WAIT_MS);
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
    test?.close();
    await dovecot?.stop();
  });

  /** Appends a message to the account's INBOX from another client (the runner's IDLE hears it: an INBOX pass). */
  async function append(subject: string): Promise<void> {
    const client = await imapClient(IMAP_PORT, USER.user, USER.password);
    try {
      await client.append(
        'INBOX',
        Buffer.from(
          `From: a@example.org\r\nTo: ${USER.user}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '-')}@example.org>\r\n\r\nHi\r\n`,
        ),
        [],
      );
    } finally {
      await client.logout();
    }
  }

  const stored = async (subject: string) =>
    (await test.core.deps.db.orm.$count(tables.messages, eq(tables.messages.subject, subject))) === 1 || undefined;

  it('woken as the pass ends, before its IDLE began: a full pass follows at once, not at the next poll', async () => {
    // Idle first (the initial pass over, INBOX SELECTed for IDLE).
    await eventually(async () => (runner.active().includes(grant) && passes.length > 0 ? true : undefined), WAIT_MS);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = passes.length;
    wakeOnWatch = true;
    await append('Heard through IDLE');
    // The INBOX pass for the new mail, then the wait that the wake came before: it must not wait.
    await eventually(() => stored('Heard through IDLE'), WAIT_MS);
    await eventually(async () => (passes.slice(before).includes('full') ? true : undefined), WAIT_MS);
    expect(wakeOnWatch).toBe(false);
    expect(passes.slice(before)[0]).toBe('inbox');
  });

  it('woken while a full pass runs: another full pass follows it', async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = passes.length;
    wakeInPass = true;
    runner.wake(grant);
    // The full pass that wake asks for, which wakes the account again as it begins, then one more.
    await eventually(
      async () => (passes.slice(before).filter((mode) => mode === 'full').length >= 2 ? true : undefined),
      WAIT_MS,
    );
    expect(wakeInPass).toBe(false);
    // And then it waits: no third full pass without a wake.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(passes.slice(before).filter((mode) => mode === 'full')).toHaveLength(2);
  });
});
