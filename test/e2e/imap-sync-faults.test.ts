/**
 * The initial sync of a connected IMAP account under faults and at size, against Debian's Dovecot on loopback: the
 * connection cut in the middle (by a loopback proxy this test controls) resumes where it stopped with no message
 * stored twice; a mailbox of 20,000 messages is synced with its progress visible midway and the main thread's live memory
 * bounded (far below the mailbox's size).
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { fullCollection, liveBytes } from '../helpers/heap.js';
import { createImapGrant } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-sync-faults: skipped: ${missing}`);

/** Fixed ports of this file (36320-36339 of the range). */
const IMAP_PORT = 36321;

const CUT = { user: 'cut@faults.test', password: 'cut-password' };
const BIG = { user: 'big@faults.test', password: 'big-password' };
const CUT_MESSAGES = 1_200;
const ENV = { AGENTPOST_WORKER_POLL_MS: '100', AGENTPOST_IMAP_POLL_INTERVAL: '120s' };
const BIG_MESSAGES = 20_000;

/** Writes `count` messages of about `size` bytes into the user's INBOX as Maildir files (Dovecot indexes them on SELECT). */
function writeMaildir(dovecot: Dovecot, user: string, count: number, size: number): void {
  const [local, domain] = user.split('@') as [string, string];
  const home = join(dovecot.mailDirectory, domain, local);
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(home, sub), { recursive: true });
  const now = Date.now();
  const filler = 'All work and no play makes a mailbox large. '.repeat(Math.ceil(size / 45)).slice(0, size);
  for (let index = 0; index < count; index++) {
    const date = new Date(now - 20 * 86_400_000 + Math.floor((index * 20 * 86_400_000) / count));
    const body = [
      `From: Sender ${index % 13} <sender${index % 13}@example.org>`,
      `To: <${user}>`,
      `Subject: Message ${index}`,
      `Date: ${date.toUTCString()}`,
      `Message-ID: <m${index}.${local}@example.org>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `${index}: ${filler}`,
      '',
    ].join('\r\n');
    const file = join(
      home,
      'cur',
      `${Math.floor(date.getTime() / 1000)}.M${index}P1.test:2,${index % 4 === 0 ? 'S' : ''}`,
    );
    writeFileSync(file, body);
    utimesSync(file, date, date);
  }
  dovecot.chownMail();
}

/** A loopback proxy to `port`: the first connection whose downstream bytes pass `cutAfter` is cut (both sides destroyed). */
function cuttingProxy(port: number, cutAfter: number): Promise<{ server: Server; port: number; cuts: () => number }> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port });
    sockets.add(client);
    sockets.add(upstream);
    let bytes = 0;
    const cutting = cuts === 0;
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (cutting && cuts === 0 && bytes > cutAfter) {
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : 0, cuts: () => cuts });
    });
  });
}

describe.skipIf(missing !== undefined)(
  'the initial sync of a connected IMAP account under faults and at size',
  { timeout: 240_000 },
  () => {
    let dovecot: Dovecot;
    let shared: TestService;
    let appId: string;
    const secrets = createSecretBox('a test secret key of at least thirty-two characters');

    beforeAll(async () => {
      dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [CUT, BIG] });
      writeMaildir(dovecot, CUT.user, CUT_MESSAGES, 3_000);
      writeMaildir(dovecot, BIG.user, BIG_MESSAGES, 6_000);
      shared = await startTestService({ deps: { secrets }, env: ENV });
      const [application] = await shared.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      appId = application!.id;
    }, 120_000);
    afterAll(async () => {
      await shared?.close();
      await dovecot?.stop();
    }, 120_000);

    // On the account's own connection, and on a fetch thread's (AGENTPOST_IMAP_FETCH_THREAD=on: the FETCHes go over a
    // second connection, the one cut; a service of its own, on a database of its own).
    it.each([
      ['its own connection', false],
      ["a fetch thread's connection", true],
    ])(
      'a connection cut in the middle of the initial sync (%s): it resumes where it stopped, with no message stored twice',
      async (_label, threaded) => {
        const service = threaded
          ? await startTestService({ deps: { secrets }, env: { ...ENV, AGENTPOST_IMAP_FETCH_THREAD: 'on' } })
          : shared;
        const [application] = await service.core.deps.db.orm
          .select({ id: tables.applications.id })
          .from(tables.applications)
          .where(eq(tables.applications.isDefault, true));
        const appId = application!.id;
        // About half the mailbox's bytes pass before the cut.
        const proxy = await cuttingProxy(IMAP_PORT, (CUT_MESSAGES * 3_300) / 2);
        try {
          const grant = await createImapGrant(service.core, {
            applicationId: appId,
            email: CUT.user,
            password: CUT.password,
            imapPort: proxy.port,
            smtpPort: proxy.port,
            secrets,
            initial: true,
          });
          service.core.accounts.sync.wake(grant);
          const failing = await eventually(async () => {
            const [account] = await service.core.deps.db.orm
              .select()
              .from(imapAccounts)
              .where(eq(imapAccounts.grantId, grant));
            return account && account.syncState === 'failing' ? account : undefined;
          }, 60_000);
          expect(proxy.cuts()).toBe(1);
          expect(failing.failures).toBe(1);
          expect(failing.lastError).toBeTruthy();
          expect(failing.retryAt).toBeGreaterThan(Date.now() - 1_000);
          // Part of the mailbox is stored, and the folder knows where to resume.
          expect(failing.syncDone).toBeGreaterThan(0);
          expect(failing.syncDone).toBeLessThan(CUT_MESSAGES);
          const [inbox] = await service.core.deps.db.orm
            .select()
            .from(imapFolders)
            .where(eq(imapFolders.grantId, grant))
            .then((rows) => rows.filter((row) => row.path === 'INBOX'));
          expect(inbox!.initialDone).toBe(false);
          expect(inbox!.initialLowestUid).toBeGreaterThan(1);

          // After the back-off it resumes, through the same proxy (which no longer cuts).
          await service.core.accounts.sync.waitForInitialSync(grant, 120_000);
          const stored = await service.core.deps.db.orm.$count(tables.messages, eq(tables.messages.grantId, grant));
          expect(stored).toBe(CUT_MESSAGES);
          const distinct = await service.core.deps.db.orm.all<{ n: number }>(
            sql`select count(distinct header_message_id) as n from messages where grant_id = ${grant}`,
          );
          expect(distinct[0]!.n).toBe(CUT_MESSAGES);
          expect(await service.core.deps.db.orm.$count(imapMessages, eq(imapMessages.grantId, grant))).toBe(
            CUT_MESSAGES,
          );
          const [account] = await service.core.deps.db.orm
            .select()
            .from(imapAccounts)
            .where(eq(imapAccounts.grantId, grant));
          expect(account).toMatchObject({
            failures: 0,
            lastError: null,
            syncTotal: CUT_MESSAGES,
            syncDone: CUT_MESSAGES,
          });
          // Synced (a later pass may be under way already).
          expect(['idle', 'running']).toContain(account!.syncState);
          const unread = await service.core.deps.db.orm.$count(
            tables.messages,
            sql`${tables.messages.grantId} = ${grant} and ${tables.messages.unread} = 1`,
          );
          expect(unread).toBe(CUT_MESSAGES - CUT_MESSAGES / 4);
          // The fetch thread whose connection was cut serves on (or was replaced): one, alive.
          if (threaded) expect(service.core.accounts.sync.fetchThreadIds()).toHaveLength(1);
        } finally {
          proxy.server.close();
          if (threaded) await service.close();
        }
      },
    );

    it('a mailbox of 20,000 messages: progress visible midway, every message stored, the heap bounded far below the mailbox size', async () => {
      const grant = await createImapGrant(shared.core, {
        applicationId: appId,
        email: BIG.user,
        password: BIG.password,
        imapPort: IMAP_PORT,
        smtpPort: IMAP_PORT,
        secrets,
        initial: true,
      });
      // What the sync holds is what a full collection leaves, heap and buffers (garbage awaiting collection is not
      // held): a full collection every half second, the most seen against what was held before the sync.
      const collect = fullCollection();
      const baseline = liveBytes(collect);
      let peak = baseline;
      let samples = 0;
      const midway: { done: number; total: number }[] = [];
      const sampler = setInterval(() => {
        peak = Math.max(peak, liveBytes(collect));
        samples++;
      }, 500);
      const progress = setInterval(() => {
        void shared.core.deps.db.orm
          .select({ done: imapAccounts.syncDone, total: imapAccounts.syncTotal })
          .from(imapAccounts)
          .where(eq(imapAccounts.grantId, grant))
          .then(([row]) => {
            if (row && row.total > 0 && row.done > 0 && row.done < row.total) midway.push(row);
          });
      }, 250);
      try {
        shared.core.accounts.sync.wake(grant);
        await shared.core.accounts.sync.waitForInitialSync(grant, 200_000);
      } finally {
        clearInterval(sampler);
        clearInterval(progress);
      }
      expect(await shared.core.deps.db.orm.$count(tables.messages, eq(tables.messages.grantId, grant))).toBe(
        BIG_MESSAGES,
      );
      expect(midway.length).toBeGreaterThan(0);
      expect(midway.every((row) => row.total === BIG_MESSAGES)).toBe(true);
      // The mailbox is ~120 MB of messages; the sync holds a chunk or two of them at a time (500 messages of ~6 KB
      // each, as fetched and as parsed).
      const growth = peak - baseline;
      expect(samples).toBeGreaterThan(2);
      console.log(
        `imap-sync-faults: live growth (heap and buffers) during the sync of ${BIG_MESSAGES} messages: ${(growth / 1048576).toFixed(1)} MB`,
      );
      expect(growth).toBeLessThan(40 * 1024 * 1024);
    });
  },
);
