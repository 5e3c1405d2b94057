/**
 * The outgoing side of a connected IMAP/SMTP account, against Debian's Dovecot (IMAP, LMTP, auth) and Postfix (SMTP
 * AUTH through Dovecot, delivery to Dovecot users over LMTP) on loopback, through the `nylas` SDK: flag, folder and
 * delete changes reach the IMAP server; drafts are kept in its Drafts folder (one copy per draft, replaced on update,
 * removed on delete and on send); sends go through the account's SMTP server and arrive in another user's INBOX,
 * with a copy in the sender's Sent; a refused SMTP login fails the send (message.send_failed, delivery state failed).
 */
import { and, eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { imapMessages } from '../../storage/schema/connected.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { addSyncedMessage, createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { postfixMissing, startPostfix, type Postfix } from '../helpers/postfix.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`imap-outgoing: skipped: ${missing}`);

/** Fixed ports of this file (36200-36219 of the range). */
const IMAP_PORT = 36201;
const LMTP_PORT = 36202;
const AUTH_PORT = 36203;
const SMTP_PORT = 36204;

const ALICE = { user: 'alice@example.test', password: 'alice-password' };
const BOB = { user: 'bob@example.test', password: 'bob-password' };
const CAROL = { user: 'carol@example.test', password: 'carol-password' };
const WAIT_MS = 20_000;

/** A message of `path` on the server, by its Message-ID header (without brackets), with its flags; undefined when absent. */
async function onServer(
  client: ImapFlow,
  path: string,
  headerMessageId: string,
): Promise<{ uid: number; flags: Set<string>; subject: string } | undefined> {
  const lock = await client.getMailboxLock(path);
  try {
    const uids = (await client.search({ header: { 'message-id': headerMessageId } }, { uid: true })) || [];
    if (uids.length === 0) return undefined;
    const message = await client.fetchOne(
      String(uids[uids.length - 1]),
      { flags: true, envelope: true },
      { uid: true },
    );
    if (!message) return undefined;
    return { uid: message.uid, flags: message.flags ?? new Set(), subject: message.envelope?.subject ?? '' };
  } finally {
    lock.release();
  }
}

/** Every message of `path` whose subject contains `subject`: uid, flags, Message-ID. */
async function bySubject(
  client: ImapFlow,
  path: string,
  subject: string,
): Promise<
  { uid: number; flags: Set<string>; messageId: string; subject: string; bcc: string[]; inReplyTo: string }[]
> {
  const lock = await client.getMailboxLock(path);
  try {
    const uids = (await client.search({ subject }, { uid: true })) || [];
    const out = [];
    for (const uid of uids) {
      const message = await client.fetchOne(String(uid), { flags: true, envelope: true }, { uid: true });
      if (message) {
        out.push({
          uid: message.uid,
          flags: message.flags ?? new Set<string>(),
          messageId: message.envelope?.messageId ?? '',
          subject: message.envelope?.subject ?? '',
          bcc: (message.envelope?.bcc ?? []).map((entry) => entry.address ?? ''),
          inReplyTo: message.envelope?.inReplyTo ?? '',
        });
      }
    }
    return out;
  } finally {
    lock.release();
  }
}

describe.skipIf(missing !== undefined)(
  'a connected IMAP/SMTP account: changes, drafts and sends reach its servers',
  { timeout: 60_000 },
  () => {
    let dovecot: Dovecot;
    let postfix: Postfix;
    let service: TestService;
    let alice: ImapFlow;
    let bob: ImapFlow;
    let grant: string;
    let badGrant: string;
    let appId: string;
    const secrets = createSecretBox('a test secret key of at least thirty-two characters');

    beforeAll(async () => {
      dovecot = await startDovecot({
        imapPort: IMAP_PORT,
        lmtpPort: LMTP_PORT,
        authPort: AUTH_PORT,
        users: [ALICE, BOB, CAROL],
      });
      postfix = startPostfix({
        port: SMTP_PORT,
        domain: 'postfix.localhost',
        transports: {},
        saslAuthPort: AUTH_PORT,
        lmtp: { port: LMTP_PORT, domains: ['example.test'] },
      });
      service = await startTestService({ deps: { secrets }, env: { AGENTPOST_WORKER_POLL_MS: '100' } });
      const [application] = await service.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      appId = application!.id;
      grant = await createImapGrant(service.core, {
        applicationId: appId,
        email: ALICE.user,
        password: ALICE.password,
        imapPort: IMAP_PORT,
        smtpPort: SMTP_PORT,
        secrets,
      });
      badGrant = await createImapGrant(service.core, {
        applicationId: appId,
        email: CAROL.user,
        password: CAROL.password,
        smtpPassword: 'not-the-password',
        imapPort: IMAP_PORT,
        smtpPort: SMTP_PORT,
        secrets,
      });
      alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
      bob = await imapClient(IMAP_PORT, BOB.user, BOB.password);
    }, 60_000);
    afterAll(async () => {
      await alice?.logout().catch(() => undefined);
      await bob?.logout().catch(() => undefined);
      await service?.close();
      postfix?.stop();
      await dovecot?.stop();
    });

    it('read and starred become \\Seen and \\Flagged on the server; a move is a MOVE there, relinked to its new UID', async () => {
      const synced = await addSyncedMessage(service.core, alice, {
        applicationId: appId,
        grantId: grant,
        from: BOB.user,
        to: ALICE.user,
        subject: 'Flags please',
        text: 'hello',
      });
      await service.nylas.messages.update({
        identifier: grant,
        messageId: synced.messageId,
        requestBody: { unread: false, starred: true },
      });
      const flagged = await eventually(async () => {
        const found = await onServer(alice, 'INBOX', synced.headerMessageId);
        return found && found.flags.has('\\Seen') && found.flags.has('\\Flagged') ? found : undefined;
      }, WAIT_MS);
      expect(flagged.uid).toBe(synced.uid);

      await service.nylas.messages.update({
        identifier: grant,
        messageId: synced.messageId,
        requestBody: { unread: true, starred: false },
      });
      await eventually(async () => {
        const found = await onServer(alice, 'INBOX', synced.headerMessageId);
        return found && !found.flags.has('\\Seen') && !found.flags.has('\\Flagged') ? found : undefined;
      }, WAIT_MS);

      await service.nylas.messages.update({
        identifier: grant,
        messageId: synced.messageId,
        requestBody: { folders: ['archive'] },
      });
      const archived = await eventually(() => onServer(alice, 'Archive', synced.headerMessageId), WAIT_MS);
      expect(await onServer(alice, 'INBOX', synced.headerMessageId)).toBeUndefined();
      const links = await service.core.deps.db.orm
        .select()
        .from(imapMessages)
        .where(eq(imapMessages.messageId, synced.messageId));
      expect(links.map((link) => [link.path, link.uid])).toEqual([['Archive', archived.uid]]);

      // A later change finds the message where the move put it.
      await service.nylas.messages.update({
        identifier: grant,
        messageId: synced.messageId,
        requestBody: { starred: true },
      });
      await eventually(
        async () =>
          (await onServer(alice, 'Archive', synced.headerMessageId))?.flags.has('\\Flagged') ? true : undefined,
        WAIT_MS,
      );
    });

    it('a delete moves the message to Trash on the server; deleting it again removes it for good (\\Deleted + UID EXPUNGE)', async () => {
      const synced = await addSyncedMessage(service.core, alice, {
        applicationId: appId,
        grantId: grant,
        from: BOB.user,
        to: ALICE.user,
        subject: 'Delete me',
        text: 'bye',
      });
      await service.nylas.messages.destroy({ identifier: grant, messageId: synced.messageId });
      await eventually(() => onServer(alice, 'Trash', synced.headerMessageId), WAIT_MS);
      expect(await onServer(alice, 'INBOX', synced.headerMessageId)).toBeUndefined();

      await service.nylas.messages.destroy({ identifier: grant, messageId: synced.messageId });
      await eventually(
        async () => ((await onServer(alice, 'Trash', synced.headerMessageId)) === undefined ? true : undefined),
        WAIT_MS,
      );
      expect(await onServer(alice, 'INBOX', synced.headerMessageId)).toBeUndefined();
    });

    it('a thread update marks every message of the thread read on the server', async () => {
      const synced = await addSyncedMessage(service.core, alice, {
        applicationId: appId,
        grantId: grant,
        from: BOB.user,
        to: ALICE.user,
        subject: 'Thread read',
        text: 'one',
      });
      const { data: message } = await service.nylas.messages.find({ identifier: grant, messageId: synced.messageId });
      await service.nylas.threads.update({
        identifier: grant,
        threadId: message.threadId!,
        requestBody: { unread: false },
      });
      await eventually(
        async () => ((await onServer(alice, 'INBOX', synced.headerMessageId))?.flags.has('\\Seen') ? true : undefined),
        WAIT_MS,
      );
    });

    it('a draft is kept in Drafts with \\Draft: replaced on update (one copy, same id and Message-ID), removed on delete', async () => {
      const { data: draft } = await service.nylas.drafts.create({
        identifier: grant,
        requestBody: {
          subject: 'Plan v1',
          body: '<p>first</p>',
          to: [{ email: BOB.user }],
          bcc: [{ email: CAROL.user }],
        },
      });
      const first = await eventually(async () => {
        const found = await bySubject(alice, 'Drafts', 'Plan v1');
        return found.length === 1 ? found[0] : undefined;
      }, WAIT_MS);
      expect(first.flags.has('\\Draft')).toBe(true);
      expect(first.flags.has('\\Seen')).toBe(true);
      // Blind copies stay on the draft (another client opening it must still see them).
      expect(first.bcc).toEqual([CAROL.user]);

      const { data: updated } = await service.nylas.drafts.update({
        identifier: grant,
        draftId: draft.id,
        requestBody: { subject: 'Plan v2', body: '<p>second</p>' },
      });
      expect(updated.id).toBe(draft.id);
      const second = await eventually(async () => {
        const found = await bySubject(alice, 'Drafts', 'Plan v');
        return found.length === 1 && found[0]!.subject === 'Plan v2' ? found[0] : undefined;
      }, WAIT_MS);
      expect(second.messageId).toBe(first.messageId);
      expect(second.flags.has('\\Draft')).toBe(true);
      const [details] = await service.core.deps.db.orm
        .select()
        .from(tables.draftDetails)
        .where(eq(tables.draftDetails.id, draft.id));
      const links = await service.core.deps.db.orm
        .select()
        .from(imapMessages)
        .where(and(eq(imapMessages.grantId, grant), eq(imapMessages.messageId, details!.messageId)));
      expect(links.map((link) => [link.path, link.uid])).toEqual([['Drafts', second.uid]]);

      await service.nylas.drafts.destroy({ identifier: grant, draftId: draft.id });
      await eventually(
        async () => ((await bySubject(alice, 'Drafts', 'Plan v')).length === 0 ? true : undefined),
        WAIT_MS,
      );
    });

    it('a draft sent goes through the account SMTP server to another user, with a copy in Sent and none left in Drafts', async () => {
      const { data: draft } = await service.nylas.drafts.create({
        identifier: grant,
        requestBody: { subject: 'Draft to send', body: '<p>sending</p>', to: [{ email: BOB.user }] },
      });
      await eventually(
        async () => ((await bySubject(alice, 'Drafts', 'Draft to send')).length === 1 ? true : undefined),
        WAIT_MS,
      );
      const { data: sent } = await service.nylas.drafts.send({ identifier: grant, draftId: draft.id });

      const arrived = await eventually(async () => {
        const found = await bySubject(bob, 'INBOX', 'Draft to send');
        return found.length === 1 ? found[0] : undefined;
      }, WAIT_MS);
      const copy = await eventually(async () => {
        const found = await bySubject(alice, 'Sent', 'Draft to send');
        return found.length === 1 ? found[0] : undefined;
      }, WAIT_MS);
      expect(copy.messageId).toBe(arrived.messageId);
      expect(copy.flags.has('\\Seen')).toBe(true);
      await eventually(
        async () => ((await bySubject(alice, 'Drafts', 'Draft to send')).length === 0 ? true : undefined),
        WAIT_MS,
      );
      const links = await service.core.deps.db.orm
        .select()
        .from(imapMessages)
        .where(eq(imapMessages.messageId, sent.id));
      expect(links.map((link) => [link.path, link.uid])).toEqual([['Sent', copy.uid]]);
      const { data: message } = await service.nylas.messages.find({ identifier: grant, messageId: sent.id });
      expect((message as { deliveryStatus?: { email: string; status: string }[] }).deliveryStatus).toEqual([
        expect.objectContaining({ email: BOB.user, status: 'delivered' }),
      ]);
    });

    it('a plain send arrives through Postfix with a copy in Sent', async () => {
      const { data: sent } = await service.nylas.messages.send({
        identifier: grant,
        requestBody: { subject: 'Plain send', body: 'straight out', to: [{ email: BOB.user }] },
      });
      const arrived = await eventually(async () => {
        const found = await bySubject(bob, 'INBOX', 'Plain send');
        return found.length === 1 ? found[0] : undefined;
      }, WAIT_MS);
      const [row] = await service.core.deps.db.orm
        .select({ headerMessageId: tables.messages.headerMessageId })
        .from(tables.messages)
        .where(eq(tables.messages.id, sent.id));
      expect(arrived.messageId).toBe(`<${row!.headerMessageId}>`);
      await eventually(
        async () => ((await bySubject(alice, 'Sent', 'Plain send')).length === 1 ? true : undefined),
        WAIT_MS,
      );
      expect(postfix.log()).toMatch(/sasl_method=PLAIN, sasl_username=alice@example\.test/);
    });

    it('a reply carries the threading headers; a scheduled send goes through Postfix at its time, leaving nothing in Drafts', async () => {
      const synced = await addSyncedMessage(service.core, alice, {
        applicationId: appId,
        grantId: grant,
        from: BOB.user,
        to: ALICE.user,
        subject: 'Question',
        text: 'can you?',
      });
      await service.nylas.messages.send({
        identifier: grant,
        requestBody: {
          subject: 'Re: Question',
          body: 'yes',
          to: [{ email: BOB.user }],
          replyToMessageId: synced.messageId,
        },
      });
      const reply = await eventually(async () => {
        const found = await bySubject(bob, 'INBOX', 'Re: Question');
        return found.length === 1 ? found[0] : undefined;
      }, WAIT_MS);
      expect(reply.inReplyTo).toBe(`<${synced.headerMessageId}>`);

      const sendAt = Math.floor(Date.now() / 1000) + 2;
      await service.nylas.messages.send({
        identifier: grant,
        requestBody: { subject: 'Later please', body: 'scheduled', to: [{ email: BOB.user }], sendAt },
      });
      await eventually(
        async () => ((await bySubject(bob, 'INBOX', 'Later please')).length === 1 ? true : undefined),
        WAIT_MS,
      );
      await eventually(
        async () => ((await bySubject(alice, 'Sent', 'Later please')).length === 1 ? true : undefined),
        WAIT_MS,
      );
      await eventually(
        async () => ((await bySubject(alice, 'Drafts', 'Later please')).length === 0 ? true : undefined),
        WAIT_MS,
      );
    });

    it('a refused SMTP login fails the send: delivery state failed and message.send_failed, no bounce of the recipient', async () => {
      const { data: sent } = await service.nylas.messages.send({
        identifier: badGrant,
        requestBody: { subject: 'Will not go', body: 'no', to: [{ email: BOB.user }] },
      });
      const failed = await eventually(async () => {
        const { data: message } = await service.nylas.messages.find({ identifier: badGrant, messageId: sent.id });
        const status = (
          message as { deliveryStatus?: { email: string; status: string; code?: number; response?: string }[] }
        ).deliveryStatus;
        return status?.[0]?.status === 'failed' ? status[0] : undefined;
      }, WAIT_MS);
      expect(failed.response).toMatch(/refused the login/);
      const events = await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.type, 'message.send_failed'), eq(tables.outboxEvents.objectId, sent.id)));
      expect(events).toHaveLength(1);
      const suppressed = await service.core.deps.db.orm.select().from(tables.suppressions);
      expect(suppressed.filter((row) => row.email === BOB.user)).toHaveLength(0);
      expect(await bySubject(bob, 'INBOX', 'Will not go')).toEqual([]);
    });
  },
);
