/**
 * The fetch threads of initial syncs (src/imap/fetch-thread.ts, `AGENTPOST_IMAP_FETCH_THREAD=on`), against
 * Debian's Dovecot on loopback: a sync through one stores every message as the sync on its own connection does (flags,
 * dates, once each); the thread holds a connection slot of the server only while its pass runs; it is kept after the
 * pass and serves the next account's initial sync (the same thread, its code compiled); the runner's stop ends it. A
 * runner of the test's own on a core whose background does not run, so the test sees its connector's slots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { createMailStore } from '../../src/messages/mail-store.js';
import { createConnector, type Connector } from '../../src/imap/connection.js';
import { createImapSync, FETCH_THREAD_MIN } from '../../src/imap/sync.js';
import { createImapSyncRunner, fetchThreadCount, type ImapSyncRunner } from '../../src/imap/sync-runner.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { createTestCore } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-fetch-thread: skipped: ${missing}`);

/** A fixed port of this file (36470-36479 of the range). */
const IMAP_PORT = 36470;
const USERS = [1, 2].map((index) => ({ user: `fetch${index}@threads.test`, password: `fetch-password-${index}` }));
/** Messages of each mailbox: more than one group of the thread, and enough for a chunk to go through it. */
const MESSAGES = 3 * FETCH_THREAD_MIN + 7;
const WAIT_MS = 60_000;

describe('how many fetch threads a runner keeps', () => {
  it('none when off, or auto on fewer than 4 cores; a core each beyond three otherwise, at least one and at most four', () => {
    expect(fetchThreadCount('off', 16)).toBe(0);
    expect(fetchThreadCount('auto', 2)).toBe(0);
    expect(fetchThreadCount('auto', 3)).toBe(0);
    expect(fetchThreadCount('auto', 4)).toBe(1);
    expect(fetchThreadCount('auto', 6)).toBe(3);
    expect(fetchThreadCount('auto', 64)).toBe(4);
    expect(fetchThreadCount('on', 2)).toBe(1);
  });
});

describe.skipIf(missing !== undefined)('initial syncs through a fetch thread', { timeout: 120_000 }, () => {
  const secrets = createSecretBox('a test secret key of at least thirty-two characters');
  const server = `127.0.0.1:${IMAP_PORT}`;
  let dovecot: Dovecot;
  let test: Awaited<ReturnType<typeof createTestCore>>;
  let connector: Connector;
  let runner: ImapSyncRunner;
  let applicationId: string;
  /** Fetch sessions opened; the most connection slots of the server held once one was; those held after each pass. */
  let sessions = 0;
  let peakHeld = 0;
  const heldAfterPass: number[] = [];
  /** The fetch threads alive after each full pass. */
  const threadsAfterPass: number[][] = [];

  beforeAll(async () => {
    dovecot = await startDovecot({ imapPort: IMAP_PORT, users: USERS });
    for (const { user, password } of USERS) {
      const client = await imapClient(IMAP_PORT, user, password);
      try {
        for (let index = 0; index < MESSAGES; index++) {
          const date = new Date(Date.now() - (MESSAGES - index) * 60_000);
          const raw = `From: Sender ${index % 5} <s${index % 5}@example.org>\r\nTo: ${user}\r\nSubject: Fetched ${index}\r\nMessage-ID: <f${index}.${user}>\r\nDate: ${date.toUTCString()}\r\n\r\nBody ${index} ${'x'.repeat(200 + index)}\r\n`;
          await client.append('INBOX', Buffer.from(raw), index % 3 === 0 ? ['\\Seen'] : [], date);
        }
      } finally {
        await client.logout();
      }
    }
    test = await createTestCore(
      { secrets },
      { AGENTPOST_IMAP_POLL_INTERVAL: '120s', AGENTPOST_IMAP_FETCH_THREAD: 'on' },
    );
    const { core } = test;
    connector = createConnector(core.deps.config, core.deps.dns);
    const sync = createImapSync(core.deps, {
      inbound: core.mail.inbound,
      store: createMailStore(core.deps),
      destroyForGood: core.mail.messages.destroyForGood,
    });
    const openSession = connector.openFetchSession.bind(connector);
    connector.openFetchSession = async (endpoint, threads) => {
      const session = await openSession(endpoint, threads);
      if (session) sessions++;
      peakHeld = Math.max(peakHeld, connector.slots.held(server));
      return session;
    };
    runner = createImapSyncRunner(core.deps, {
      connector,
      sync: {
        ...sync,
        async pass(client, grantId, options) {
          try {
            return await sync.pass(client, grantId, options);
          } finally {
            // The runner logs the session out right after the pass: looked at once it has.
            setTimeout(() => {
              heldAfterPass.push(connector.slots.held(server));
              if (!options?.inboxOnly) threadsAfterPass.push(runner.fetchThreadIds());
            }, 200);
          }
        },
      },
    });
    runner.start();
    const [application] = await core.deps.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications)
      .where(eq(tables.applications.isDefault, true));
    applicationId = application!.id;
  }, 90_000);
  afterAll(async () => {
    await runner?.stop();
    test?.close();
    await dovecot?.stop();
  });

  async function syncAccount(index: number): Promise<string> {
    const { user, password } = USERS[index]!;
    const grant = await createImapGrant(test.core, {
      applicationId,
      email: user,
      password,
      imapPort: IMAP_PORT,
      smtpPort: IMAP_PORT,
      secrets,
      initial: true,
    });
    runner.wake(grant);
    await runner.waitForInitialSync(grant, WAIT_MS);
    return grant;
  }

  it('stores every message once, with its flags and date, holding a second slot of the server only while the pass runs', async () => {
    expect(runner.fetchThreadIds()).toEqual([]);
    const grant = await syncAccount(0);
    const db = test.core.deps.db.orm;
    expect(await db.$count(tables.messages, eq(tables.messages.grantId, grant))).toBe(MESSAGES);
    const distinct = await db.all<{ n: number }>(
      sql`select count(distinct header_message_id) as n from messages where grant_id = ${grant}`,
    );
    expect(distinct[0]!.n).toBe(MESSAGES);
    expect(
      await db.$count(tables.messages, and(eq(tables.messages.grantId, grant), eq(tables.messages.unread, false))),
    ).toBe(Math.ceil(MESSAGES / 3));
    // The bytes came whole: the last (largest) message's body, and its date from the server.
    const [last] = await db
      .select()
      .from(tables.messages)
      .where(and(eq(tables.messages.grantId, grant), eq(tables.messages.subject, `Fetched ${MESSAGES - 1}`)));
    expect(last!.snippet).toContain(`Body ${MESSAGES - 1} xxx`);
    expect(Math.abs(last!.date - Math.floor(Date.now() / 1000))).toBeLessThan(600);
    // Two connections while the initial pass ran (the account's and the thread's); one after (the account's, idling).
    expect(sessions).toBe(1);
    expect(peakHeld).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heldAfterPass.at(-1)).toBe(1);
    expect(threadsAfterPass.at(-1)).toHaveLength(1);
  });

  it("keeps the thread after the pass: the next account's initial sync runs on the same one", async () => {
    const [thread] = runner.fetchThreadIds();
    expect(thread).toEqual(expect.any(Number));
    const grant = await syncAccount(1);
    expect(await test.core.deps.db.orm.$count(tables.messages, eq(tables.messages.grantId, grant))).toBe(MESSAGES);
    expect(runner.fetchThreadIds()).toEqual([thread]);
    expect(sessions).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Each account's connection idles; the thread's is logged out.
    expect(heldAfterPass.at(-1)).toBe(2);
  });

  it("the runner's stop ends the thread", async () => {
    await runner.stop();
    expect(runner.fetchThreadIds()).toEqual([]);
  });
});
