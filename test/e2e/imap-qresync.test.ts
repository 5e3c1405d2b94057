/**
 * Deletions on a connected account's server, learned with QRESYNC (RFC 7162) from Debian's Dovecot: a SELECT that
 * names the folder's last state is answered with what was expunged since (VANISHED (EARLIER)), and a folder kept
 * selected (INBOX, where the account waits) is told of each expunge as it happens; either way the sync deletes the
 * messages without comparing the folder's UIDs (no UID SEARCH); while a change of ours is on its way to the server
 * they wait in the connection's log, and an hourly comparison catches one whose connection closed meanwhile. A
 * connection without QRESYNC compares UIDs every pass.
 * The sync runs here on a core without background work, pass by pass, on connections the test holds.
 */
import { and, eq } from 'drizzle-orm';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tables } from '../../storage/index.js';
import { imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { createMailStore } from '../../src/messages/mail-store.js';
import { createImapSync, UID_CHECK_INTERVAL_MS, type ImapSync } from '../../src/imap/sync.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { createTestCore } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-qresync: skipped: ${missing}`);

/** Fixed port of this file (36480-36489 of the range). */
const IMAP_PORT = 36481;
const QUINN = { user: 'quinn@qresync.test', password: 'quinn-password' };

function mime(subject: string, id: string): Buffer {
  return Buffer.from(
    [
      `From: Someone <someone@example.org>`,
      `To: ${QUINN.user}`,
      `Subject: ${subject}`,
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <${id}@example.org>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Body of ${subject}`,
      '',
    ].join('\r\n'),
  );
}

describe.skipIf(missing !== undefined)('deletions learned with QRESYNC', { timeout: 60_000 }, () => {
  let dovecot: Dovecot;
  let test: Awaited<ReturnType<typeof createTestCore>>;
  let sync: ImapSync;
  let grant: string;
  /** The test's other mail client, which deletes. */
  let other: ImapFlow;
  const clients: ImapFlow[] = [];
  let offsetMs = 0;

  /** A connection as the sync's own (QRESYNC enabled when asked). */
  async function syncClient(qresync: boolean): Promise<ImapFlow> {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: IMAP_PORT,
      secure: false,
      auth: { user: QUINN.user, pass: QUINN.password },
      logger: false,
      disableAutoIdle: true,
      qresync,
    });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  }
  const linkOf = async (subject: string) => {
    const [row] = await test.db.orm
      .select({ uid: imapMessages.uid, path: imapMessages.path, id: tables.messages.id })
      .from(imapMessages)
      .innerJoin(tables.messages, eq(tables.messages.id, imapMessages.messageId))
      .where(and(eq(imapMessages.grantId, grant), eq(tables.messages.subject, subject)));
    return row;
  };
  const expungeOnServer = async (path: string, uid: number) => {
    const lock = await other.getMailboxLock(path);
    try {
      await other.messageDelete(String(uid), { uid: true });
    } finally {
      lock.release();
    }
  };

  /** Runs `work` while a push job of the grant (as an update made through the API leaves one) is not yet done. */
  const whilePushPending = async (work: () => Promise<unknown>) => {
    const jobId = `test-push-${Date.now()}`;
    await test.db.write((tx) =>
      tx.insert(tables.jobs).values({
        id: jobId,
        kind: 'imap.push',
        payload: {},
        runAt: Date.UTC(2999, 0, 1),
        createdAt: Date.now(),
        orderKey: `imap ${grant}`,
      }),
    );
    try {
      await work();
    } finally {
      await test.db.write((tx) => tx.delete(tables.jobs).where(eq(tables.jobs.id, jobId)));
    }
  };

  beforeAll(async () => {
    dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [QUINN] });
    other = await imapClient(IMAP_PORT, QUINN.user, QUINN.password);
    for (const index of [1, 2, 3, 4, 5]) await other.append('INBOX', mime(`Inbox ${index}`, `inbox-${index}`), []);
    for (const index of [1, 2]) await other.append('Archive', mime(`Archived ${index}`, `archived-${index}`), []);
    // The time of the core is the test's: an hour passes when it says so (the sync's comparison of UIDs is hourly).
    test = await createTestCore({ clock: { now: () => new Date(Date.now() + offsetMs) } });
    const { core } = test;
    const [application] = await test.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications)
      .where(eq(tables.applications.isDefault, true));
    grant = await createImapGrant(core, {
      applicationId: application!.id,
      email: QUINN.user,
      password: QUINN.password,
      imapPort: IMAP_PORT,
      smtpPort: IMAP_PORT,
      secrets: core.deps.secrets,
      initial: true,
    });
    sync = createImapSync(core.deps, {
      inbound: core.mail.inbound,
      store: createMailStore(core.deps),
      destroyForGood: core.mail.messages.destroyForGood,
    });
    const first = await syncClient(true);
    expect(first.enabled.has('QRESYNC')).toBe(true);
    expect((await sync.pass(first, grant)).initialCompleted).toBe(true);
  });
  afterAll(async () => {
    for (const client of clients) await client.logout().catch(() => undefined);
    await other?.logout().catch(() => undefined);
    await test?.core.mail.inbound.close();
    test?.close();
    await dovecot?.stop();
  });

  it('a new connection SELECTs each folder with QRESYNC and deletes what VANISHED (EARLIER) reports, with no UID SEARCH', async () => {
    const gone = [await linkOf('Inbox 1'), await linkOf('Archived 1')];
    for (const link of gone) await expungeOnServer(link!.path, link!.uid);
    const client = await syncClient(true);
    const search = vi.spyOn(client, 'search');
    await sync.pass(client, grant);
    expect(search).not.toHaveBeenCalled();
    for (const link of gone)
      expect(await test.db.orm.select().from(tables.messages).where(eq(tables.messages.id, link!.id))).toEqual([]);
    // The others stay.
    expect(await linkOf('Inbox 2')).toBeDefined();
    expect(await linkOf('Archived 2')).toBeDefined();
    const [inbox] = await test.db.orm
      .select()
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grant), eq(imapFolders.path, 'INBOX')));
    expect(inbox!.highestModseq).not.toBeNull();
  });

  it('INBOX kept selected (as while the account waits) is told of an expunge as it happens: the next pass deletes it without a UID SEARCH', async () => {
    const client = await syncClient(true);
    await sync.pass(client, grant);
    await sync.watchInbox(client, grant);
    const link = await linkOf('Inbox 2');
    await expungeOnServer('INBOX', link!.uid);
    const search = vi.spyOn(client, 'search');
    await sync.pass(client, grant, { inboxOnly: true });
    expect(search).not.toHaveBeenCalled();
    expect(await test.db.orm.select().from(tables.messages).where(eq(tables.messages.id, link!.id))).toEqual([]);
    expect(await linkOf('Inbox 3')).toBeDefined();
  });

  it("while a change of ours is on its way to the server, deletions wait in the connection's log and go with the next pass", async () => {
    const link = await linkOf('Archived 2');
    await expungeOnServer('Archive', link!.uid);
    const client = await syncClient(true);
    await whilePushPending(() => sync.pass(client, grant));
    expect(await linkOf('Archived 2')).toBeDefined();
    // The folder is selected again on the same connection: its log still holds the UID.
    const search = vi.spyOn(client, 'search');
    await sync.pass(client, grant);
    expect(search).not.toHaveBeenCalled();
    expect(await linkOf('Archived 2')).toBeUndefined();
  });

  it('a deferred deletion whose connection closed is found by the comparison of UIDs each folder still gets hourly', async () => {
    const link = await linkOf('Inbox 5');
    await expungeOnServer('INBOX', link!.uid);
    const closing = await syncClient(true);
    await whilePushPending(() => sync.pass(closing, grant));
    await closing.logout();
    // A new connection's QRESYNC SELECT no longer reports it (the folder's state moved on): it stays for now.
    const client = await syncClient(true);
    const search = vi.spyOn(client, 'search');
    await sync.pass(client, grant);
    expect(search).not.toHaveBeenCalled();
    expect(await linkOf('Inbox 5')).toBeDefined();
    // An hour later the folder's UIDs are compared with the server's.
    offsetMs += UID_CHECK_INTERVAL_MS;
    await sync.pass(client, grant);
    expect(search).toHaveBeenCalled();
    expect(await linkOf('Inbox 5')).toBeUndefined();
    expect(await linkOf('Inbox 3')).toBeDefined();
  });

  it('a connection without QRESYNC finds deletions by comparing the UIDs of the folder', async () => {
    const link = await linkOf('Inbox 3');
    await expungeOnServer('INBOX', link!.uid);
    const client = await syncClient(false);
    expect(client.enabled.has('QRESYNC')).toBe(false);
    const search = vi.spyOn(client, 'search');
    await sync.pass(client, grant);
    expect(search).toHaveBeenCalled();
    expect(await test.db.orm.select().from(tables.messages).where(eq(tables.messages.id, link!.id))).toEqual([]);
    expect(await linkOf('Inbox 4')).toBeDefined();
  });
});
