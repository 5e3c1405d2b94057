/**
 * The sync in of a connected IMAP account, against Debian's Dovecot on loopback, through the `nylas` SDK: folders
 * mapped (special-use, names, modified UTF-7), messages another client APPENDed listed and threaded, flags both ways,
 * new mail seen by IDLE with `message.created`, deletions on the server, a draft edited in another client seen as
 * the same draft, and a refused login making the grant invalid with `grant.expired`.
 */
import { and, eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { createSecretBox } from '../../src/secrets/secret-box.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { createImapGrant, imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dovecotMissing();
if (missing) console.warn(`imap-sync: skipped: ${missing}`);

/** Fixed ports of this file (36300-36319 of the range). */
const IMAP_PORT = 36301;
const PLAIN_IMAP_PORT = 36302;

const ALICE = { user: 'alice@sync.test', password: 'alice-password' };
const BOB = { user: 'bob@sync.test', password: 'bob-password' };
const DORA = { user: 'dora@sync.test', password: 'dora-password' };
const ERIN = { user: 'erin@plain.test', password: 'erin-password' };
const WAIT_MS = 20_000;

/** A small message. */
function mime(spec: {
  subject: string;
  from?: string;
  to?: string;
  messageId: string;
  inReplyTo?: string;
  body?: string;
  date?: Date;
}): Buffer {
  return Buffer.from(
    [
      `From: ${spec.from ?? 'Someone <someone@example.org>'}`,
      `To: ${spec.to ?? ALICE.user}`,
      `Subject: ${spec.subject}`,
      `Date: ${(spec.date ?? new Date()).toUTCString()}`,
      `Message-ID: <${spec.messageId}>`,
      ...(spec.inReplyTo ? [`In-Reply-To: <${spec.inReplyTo}>`, `References: <${spec.inReplyTo}>`] : []),
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      spec.body ?? `Body of ${spec.subject}`,
      '',
    ].join('\r\n'),
  );
}

/** A message with a PDF attachment (stored through the parser pool, not the writer's fast path). */
function withAttachment(): Buffer {
  return Buffer.from(
    [
      'From: Someone <someone@example.org>',
      `To: ${ALICE.user}`,
      'Subject: Invoice attached',
      `Date: ${new Date().toUTCString()}`,
      'Message-ID: <invoice-1@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="mix"',
      '',
      '--mix',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The invoice is attached.',
      '--mix',
      'Content-Type: application/pdf; name="invoice.pdf"',
      'Content-Disposition: attachment; filename="invoice.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 not really a pdf').toString('base64'),
      '--mix--',
      '',
    ].join('\r\n'),
  );
}

describe.skipIf(missing !== undefined)('the sync of a connected IMAP account', { timeout: 90_000 }, () => {
  let dovecot: Dovecot;
  let plain: Dovecot;
  let service: TestService;
  let alice: ImapFlow;
  let grant: string;
  let appId: string;
  const secrets = createSecretBox('a test secret key of at least thirty-two characters');

  const events = async (grantId: string, type: string) =>
    service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.grantId, grantId), eq(tables.outboxEvents.type, type)));
  const messageBySubject = async (grantId: string, subject: string) => {
    const { data } = await service.nylas.messages.list({ identifier: grantId, queryParams: { subject } });
    return data;
  };

  beforeAll(async () => {
    dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [ALICE, BOB, DORA] });
    plain = await startDovecot({ imapPort: PLAIN_IMAP_PORT, users: [ERIN], specialUse: false });
    // The poll interval is long: what happens in INBOX is seen through IDLE; other folders when woken (a full pass).
    // Mail that was there before the account was connected: a thread of two, one read, and folders in UTF-7.
    alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
    await alice.mailboxCreate('Entwürfe');
    await alice.mailboxCreate('日本語');
    await alice.append('INBOX', mime({ subject: 'Quarterly plan', messageId: 'plan-1@example.org' }), []);
    await alice.append(
      'INBOX',
      mime({ subject: 'Re: Quarterly plan', messageId: 'plan-2@example.org', inReplyTo: 'plan-1@example.org' }),
      ['\\Seen'],
    );
    await alice.append('日本語', mime({ subject: 'Kanji folder mail', messageId: 'kanji-1@example.org' }), []);
    await alice.append('INBOX', withAttachment(), ['\\Flagged']);
    await alice.append(
      'INBOX',
      mime({ subject: 'Too old', messageId: 'old-1@example.org' }),
      [],
      new Date(Date.now() - 90 * 86_400_000),
    );
    service = await startTestService({
      deps: { secrets },
      env: { AGENTPOST_WORKER_POLL_MS: '100', AGENTPOST_IMAP_POLL_INTERVAL: '120s' },
    });
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
      smtpPort: IMAP_PORT,
      secrets,
      initial: true,
    });
    service.core.accounts.sync.wake(grant);
    await service.core.accounts.sync.waitForInitialSync(grant, WAIT_MS);
  }, 60_000);
  afterAll(async () => {
    await alice?.logout().catch(() => undefined);
    await service?.close();
    await dovecot?.stop();
    await plain?.stop();
  });

  it('maps the folders: special-use roles, other folders with ids of their own, names decoded from modified UTF-7', async () => {
    const { data: folders } = await service.nylas.folders.list({ identifier: grant });
    const byName = new Map(folders.map((folder) => [folder.name, folder]));
    expect(byName.get('INBOX')?.id).toBe('inbox');
    for (const [name, id] of [
      ['Sent', 'sent'],
      ['Drafts', 'drafts'],
      ['Trash', 'trash'],
      ['Junk', 'junk'],
      ['Archive', 'archive'],
    ])
      expect(byName.get(name!)?.id).toBe(id);
    expect(byName.has('Entwürfe')).toBe(true);
    expect(byName.has('日本語')).toBe(true);
    const kanji = byName.get('日本語')!;
    expect(['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive']).not.toContain(kanji.id);
    const [mail] = await messageBySubject(grant, 'Kanji folder mail');
    expect(mail?.folders).toEqual([kanji.id]);
  });

  it('folders made, renamed and deleted on the server later: folder.created, folder.updated (same id) and folder.deleted', async () => {
    /** The first notification of `type` for the grant, once there is one. */
    const firstEvent = (type: string) => eventually(async () => (await events(grant, type))[0], WAIT_MS);
    // The folders of the first mapping were the mailbox as connected: no folder.created for them.
    expect(await events(grant, 'folder.created')).toEqual([]);
    await alice.mailboxCreate('Projects');
    service.core.accounts.sync.wake(grant);
    const created = await firstEvent('folder.created');
    const folder = created.payload as { id: string; name: string };
    expect(folder.name).toBe('Projects');
    // Once the pass has synced it (its UIDVALIDITY known: what tells a rename from a delete and a create). Renamed
    // while that pass still works in it, the pass fails and the account waits for its back-off before the next.
    await eventually(async () => {
      const [row] = await service.core.deps.db.orm
        .select({ validity: imapFolders.uidValidity, done: imapFolders.initialDone })
        .from(imapFolders)
        .where(and(eq(imapFolders.grantId, grant), eq(imapFolders.path, 'Projects')));
      return row?.validity && row.done ? true : undefined;
    }, WAIT_MS);
    await alice.mailboxRename('Projects', 'Projects 2026');
    service.core.accounts.sync.wake(grant);
    const updated = await firstEvent('folder.updated');
    expect(updated.payload).toMatchObject({ id: folder.id, name: 'Projects 2026' });
    await alice.mailboxDelete('Projects 2026');
    service.core.accounts.sync.wake(grant);
    const deleted = await firstEvent('folder.deleted');
    expect(deleted.objectId).toBe(folder.id);
    const { data: folders } = await service.nylas.folders.list({ identifier: grant });
    expect(folders.map((entry) => entry.id)).not.toContain(folder.id);
  });

  it('lists and threads what another client appended, within the sync window, with progress and grant.imap_sync_completed once', async () => {
    const plan = await messageBySubject(grant, 'Quarterly plan');
    const [first] = plan.filter((message) => message.subject === 'Quarterly plan');
    const [reply] = await messageBySubject(grant, 'Re: Quarterly plan');
    expect(first).toBeDefined();
    expect(reply).toBeDefined();
    expect(reply!.threadId).toBe(first!.threadId);
    expect(first!.unread).toBe(true);
    expect(reply!.unread).toBe(false);
    const { data: thread } = await service.nylas.threads.find({ identifier: grant, threadId: first!.threadId! });
    expect(thread.messageIds?.sort()).toEqual([first!.id, reply!.id].sort());
    // A message with an attachment (parsed on the parser pool), starred from its \Flagged.
    const [invoice] = await messageBySubject(grant, 'Invoice attached');
    expect(invoice!.starred).toBe(true);
    expect(invoice!.attachments?.map((attachment) => attachment.filename)).toEqual(['invoice.pdf']);
    const bytes = await service.nylas.attachments.downloadBytes({
      identifier: grant,
      attachmentId: invoice!.attachments![0]!.id,
      queryParams: { messageId: invoice!.id },
    });
    expect(Buffer.from(bytes).toString()).toBe('%PDF-1.4 not really a pdf');
    // Older than the account's 30 days: not synced.
    expect(await messageBySubject(grant, 'Too old')).toEqual([]);
    const [account] = await service.core.deps.db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grant));
    expect(account!.syncTotal).toBe(4);
    expect(account!.syncDone).toBe(4);
    expect(await events(grant, 'grant.imap_sync_completed')).toHaveLength(1);
    // The account's past is announced by grant.imap_sync_completed alone, not by a message.created each.
    expect(await events(grant, 'message.created')).toHaveLength(0);
  });

  it('with AGENTPOST_IMAP_HISTORY_EVENTS the initial sync records message.created for each message of the past', async () => {
    const noisy = await startTestService({
      deps: { secrets },
      env: {
        AGENTPOST_WORKER_POLL_MS: '100',
        AGENTPOST_IMAP_POLL_INTERVAL: '120s',
        AGENTPOST_IMAP_HISTORY_EVENTS: 'true',
      },
    });
    try {
      const [application] = await noisy.core.deps.db.orm
        .select({ id: tables.applications.id })
        .from(tables.applications)
        .where(eq(tables.applications.isDefault, true));
      const bob = await createImapGrant(noisy.core, {
        applicationId: application!.id,
        email: BOB.user,
        password: BOB.password,
        imapPort: IMAP_PORT,
        smtpPort: IMAP_PORT,
        secrets,
        initial: true,
      });
      const client = await imapClient(IMAP_PORT, BOB.user, BOB.password);
      try {
        await client.append(
          'INBOX',
          mime({ subject: 'Bob history one', to: BOB.user, messageId: 'bob-history-1@example.org' }),
          [],
        );
        await client.append(
          'INBOX',
          mime({ subject: 'Bob history two', to: BOB.user, messageId: 'bob-history-2@example.org' }),
          ['\\Seen'],
        );
      } finally {
        await client.logout();
      }
      noisy.core.accounts.sync.wake(bob);
      await noisy.core.accounts.sync.waitForInitialSync(bob, WAIT_MS);
      const stored = await noisy.core.deps.db.orm
        .select({ id: tables.messages.id })
        .from(tables.messages)
        .where(eq(tables.messages.grantId, bob));
      expect(stored.length).toBeGreaterThanOrEqual(2);
      const created = await noisy.core.deps.db.orm
        .select({ objectId: tables.outboxEvents.objectId })
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.grantId, bob), eq(tables.outboxEvents.type, 'message.created')));
      expect(created.map((event) => event.objectId).sort()).toEqual(stored.map((row) => row.id).sort());
    } finally {
      await noisy.close();
    }
  });

  it('a folder made on the server after the account was connected: its mail is new here, with message.created', async () => {
    await alice.mailboxCreate('Later');
    await alice.append('Later', mime({ subject: 'Filed later', messageId: 'later-1@example.org' }), []);
    service.core.accounts.sync.wake(grant);
    const [filed] = await eventually(async () => {
      const found = await messageBySubject(grant, 'Filed later');
      return found.length > 0 ? found : undefined;
    }, WAIT_MS);
    expect((await events(grant, 'message.created')).map((event) => event.objectId)).toContain(filed!.id);
  });

  it('a \\Seen set on the server shows as read; unread:false through the API reaches the server as \\Seen', async () => {
    const [first] = (await messageBySubject(grant, 'Quarterly plan')).filter(
      (message) => message.subject === 'Quarterly plan',
    );
    const [link] = await service.core.deps.db.orm
      .select()
      .from(imapMessages)
      .where(eq(imapMessages.messageId, first!.id));
    await alice.mailboxOpen('INBOX');
    await alice.messageFlagsAdd(String(link!.uid), ['\\Seen'], { uid: true });
    await eventually(
      async () =>
        (await service.nylas.messages.find({ identifier: grant, messageId: first!.id })).data.unread === false
          ? true
          : undefined,
      WAIT_MS,
    );
    expect((await events(grant, 'message.updated')).some((event) => event.objectId === first!.id)).toBe(true);

    const [reply] = await messageBySubject(grant, 'Re: Quarterly plan');
    const [replyLink] = await service.core.deps.db.orm
      .select()
      .from(imapMessages)
      .where(eq(imapMessages.messageId, reply!.id));
    await service.nylas.messages.update({
      identifier: grant,
      messageId: reply!.id,
      requestBody: { unread: true, starred: true },
    });
    await eventually(async () => {
      const message = await alice.fetchOne(String(replyLink!.uid), { flags: true }, { uid: true });
      return message && !message.flags?.has('\\Seen') && message.flags?.has('\\Flagged') ? true : undefined;
    }, WAIT_MS);
    // The sync does not bring the change back as a change of its own: the message stays as the API left it.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const { data: after } = await service.nylas.messages.find({ identifier: grant, messageId: reply!.id });
    expect(after.unread).toBe(true);
    expect(after.starred).toBe(true);
  });

  it('new mail arriving while idle shows up, with message.created', async () => {
    const before = (await events(grant, 'message.created')).length;
    await alice.append('INBOX', mime({ subject: 'Fresh arrival', messageId: 'fresh-1@example.org' }), []);
    const [fresh] = await eventually(async () => {
      const found = await messageBySubject(grant, 'Fresh arrival');
      return found.length > 0 ? found : undefined;
    }, WAIT_MS);
    expect(fresh!.folders).toEqual(['inbox']);
    const created = await events(grant, 'message.created');
    expect(created.length).toBe(before + 1);
    expect(created.some((event) => event.objectId === fresh!.id)).toBe(true);
  });

  it('a message deleted on the server is served until the sync sees it, then deleted here, with message.deleted', async () => {
    await alice.append('INBOX', mime({ subject: 'Short lived', messageId: 'short-1@example.org' }), []);
    const [short] = await eventually(async () => {
      const found = await messageBySubject(grant, 'Short lived');
      return found.length > 0 ? found : undefined;
    }, WAIT_MS);
    const [link] = await service.core.deps.db.orm
      .select()
      .from(imapMessages)
      .where(eq(imapMessages.messageId, short!.id));
    await alice.mailboxOpen('INBOX');
    await alice.messageDelete(String(link!.uid), { uid: true });
    // Read while the sync learns of it: the stored message is served whole (nothing is read from the server), or 404
    // once the sync deleted it; never a failure.
    const read = await service.nylas.messages.find({ identifier: grant, messageId: short!.id }).then(
      ({ data }) => ({ body: data.body ?? '', status: 200 }),
      (error: { statusCode?: number }) => ({ body: '', status: error.statusCode }),
    );
    if (read.status === 200) expect(read.body).toContain('Body of Short lived');
    else expect(read.status).toBe(404);
    await eventually(
      async () => ((await messageBySubject(grant, 'Short lived')).length === 0 ? true : undefined),
      WAIT_MS,
    );
    await expect(service.nylas.messages.find({ identifier: grant, messageId: short!.id })).rejects.toMatchObject({
      statusCode: 404,
    });
    expect((await events(grant, 'message.deleted')).some((event) => event.objectId === short!.id)).toBe(true);
  });

  /** The Message-ID of the one message with this subject in Alice's Drafts, once there. */
  const draftHeaderId = (subject: string) =>
    eventually(async () => {
      const lock = await alice.getMailboxLock('Drafts');
      try {
        const uids = (await alice.search({ subject }, { uid: true })) || [];
        if (uids.length !== 1) return undefined;
        const message = await alice.fetchOne(String(uids[0]), { envelope: true }, { uid: true });
        return message ? message.envelope?.messageId : undefined;
      } finally {
        lock.release();
      }
    }, WAIT_MS);

  /** Another client saves a new version of a draft: APPEND with the same Message-ID and \Draft, the old copy expunged. */
  async function saveAgainElsewhere(
    headerId: string,
    oldSubject: string,
    subject: string,
    body: string,
  ): Promise<void> {
    const lock = await alice.getMailboxLock('Drafts');
    try {
      const old = (await alice.search({ subject: oldSubject }, { uid: true })) || [];
      await alice.append(
        'Drafts',
        mime({ subject, from: ALICE.user, to: BOB.user, messageId: headerId.replace(/^<|>$/g, ''), body }),
        ['\\Draft', '\\Seen'],
      );
      await alice.messageDelete(old.join(','), { uid: true });
    } finally {
      lock.release();
    }
  }

  /** The draft, once drafts.find answers it with this subject. */
  const draftWithSubject = (draftId: string, subject: string) =>
    eventually(async () => {
      const { data } = await service.nylas.drafts
        .find({ identifier: grant, draftId })
        .catch(() => ({ data: undefined }));
      return data && data.subject === subject ? data : undefined;
    }, WAIT_MS);

  it('a draft edited in another client (new version appended with its Message-ID, the old one expunged) is the same draft, changed', async () => {
    const { data: draft } = await service.nylas.drafts.create({
      identifier: grant,
      requestBody: { subject: 'Proposal v1', body: 'first words', to: [{ email: BOB.user }] },
    });
    // Our copy reaches Drafts (the outgoing side) and is not imported a second time.
    const headerId = await draftHeaderId('Proposal v1');
    service.core.accounts.sync.wake(grant);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const { data: drafts } = await service.nylas.drafts.list({ identifier: grant });
    expect(drafts.filter((entry) => entry.subject === 'Proposal v1').map((entry) => entry.id)).toEqual([draft.id]);

    // Another client saves a new version: APPEND with the same Message-ID, then expunge the old one.
    await saveAgainElsewhere(headerId, 'Proposal v1', 'Proposal v2', 'second words, edited elsewhere');
    // Drafts is not INBOX: the periodic full pass sees it (woken here rather than waiting for the interval).
    service.core.accounts.sync.wake(grant);
    const edited = await draftWithSubject(draft.id, 'Proposal v2');
    expect(edited.id).toBe(draft.id);
    expect(edited.body).toContain('second words, edited elsewhere');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const { data: after } = await service.nylas.drafts.list({ identifier: grant });
    expect(after.filter((entry) => entry.subject?.startsWith('Proposal')).map((entry) => entry.id)).toEqual([draft.id]);
  });

  it('a draft saved again in another client shows through drafts.find under the same id within 20 s, unwoken (poll interval 120 s)', async () => {
    const { data: draft } = await service.nylas.drafts.create({
      identifier: grant,
      requestBody: { subject: 'Offer v1', body: 'first offer', to: [{ email: BOB.user }] },
    });
    const headerId = await draftHeaderId('Offer v1');
    // Let the pass that follows our own copy settle (it links the copy; nothing is imported twice).
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    // The user's mail client saves a new version: APPEND with the same Message-ID and \Draft, the old copy expunged.
    // No wake: only the account's own watch of Drafts can see it before the 120 s poll interval.
    await saveAgainElsewhere(headerId, 'Offer v1', 'Offer v2', 'second offer, edited in the mail client');
    const started = Date.now();
    const edited = await draftWithSubject(draft.id, 'Offer v2');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(edited.id).toBe(draft.id);
    expect(edited.body).toContain('second offer, edited in the mail client');
    const { data: after } = await service.nylas.drafts.list({ identifier: grant });
    expect(after.filter((entry) => entry.subject?.startsWith('Offer')).map((entry) => entry.id)).toEqual([draft.id]);
  });

  it('a server without special-use attributes: the system folders are found by their names', async () => {
    const erin = await createImapGrant(service.core, {
      applicationId: appId,
      email: ERIN.user,
      password: ERIN.password,
      imapPort: PLAIN_IMAP_PORT,
      smtpPort: PLAIN_IMAP_PORT,
      secrets,
      initial: true,
    });
    service.core.accounts.sync.wake(erin);
    await service.core.accounts.sync.waitForInitialSync(erin, WAIT_MS);
    const rows = await service.core.deps.db.orm.select().from(imapFolders).where(eq(imapFolders.grantId, erin));
    const byPath = new Map(rows.map((row) => [row.path, row.folderId]));
    expect(Object.fromEntries(byPath)).toMatchObject({
      INBOX: 'inbox',
      Sent: 'sent',
      Drafts: 'drafts',
      Trash: 'trash',
      Junk: 'junk',
      Archive: 'archive',
    });
  });

  it('a refused login during the sync makes the grant invalid and sends grant.expired once', async () => {
    const dora = await createImapGrant(service.core, {
      applicationId: appId,
      email: DORA.user,
      password: 'not-her-password',
      imapPort: IMAP_PORT,
      smtpPort: IMAP_PORT,
      secrets,
      initial: true,
    });
    service.core.accounts.sync.wake(dora);
    await expect(service.core.accounts.sync.waitForInitialSync(dora, WAIT_MS)).rejects.toThrow(/refused/);
    const { data } = await service.nylas.grants.find({ grantId: dora });
    expect(data.grantStatus).toBe('invalid');
    const [account] = await service.core.deps.db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, dora));
    expect(account!.syncState).toBe('invalid');
    expect(account!.lastError).toMatch(/refused the login/);
    // Not tried again (no second notification) until re-authenticated.
    service.core.accounts.sync.wake(dora);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await events(dora, 'grant.expired')).toHaveLength(1);
  });
});
