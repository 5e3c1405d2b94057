/**
 * Inbound mail through its stages, end to end: a real SMTP client (nodemailer, and a raw client where the exact reply
 * and its moment matter) against the real listener, with workspaces, policies, rules and lists written straight into
 * their tables (the admin API is built elsewhere). Each case has its own workspace, so rules and limits never leak
 * between cases, and each is checked in the store, through the API (the official SDK) and in `rule_evaluations`.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  tables,
  type StoredPolicyLimits,
  type StoredRuleAction,
  type StoredRuleCondition,
  type StoredSpamDetection,
} from '../../storage/index.js';
import type { Authenticator, SpamChecker } from '../../src/ports/index.js';
import { createMailbox, sendRaw, smtpClient } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'rules.agentpost.localhost';
const AT = 1_750_000_000;

/** Writes admin rows for a test, as the admin API would. */
function admin(service: TestService) {
  const db = service.core.deps.db;
  let counter = 0;
  const id = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${counter++}`;
  async function applicationId(): Promise<string> {
    const [row] = await db.orm.select().from(tables.workspaces).where(eq(tables.workspaces.isDefault, true));
    return row!.applicationId;
  }
  return {
    async list(type: 'domain' | 'tld' | 'address', values: string[]): Promise<string> {
      const listId = id('list');
      await db.write(async (tx) => {
        await tx.insert(tables.lists).values({
          id: listId,
          applicationId: await applicationId(),
          name: listId,
          type,
          itemsCount: values.length,
          version: 1,
          createdAt: AT,
          updatedAt: AT,
        });
        await tx
          .insert(tables.listItems)
          .values(values.map((value, index) => ({ id: `${listId}_${index}`, listId, value, createdAt: AT })));
      });
      return listId;
    },
    async rule(
      conditions: StoredRuleCondition[],
      actions: StoredRuleAction[],
      fields: { priority?: number; matchOperator?: 'all' | 'any' } = {},
    ): Promise<string> {
      const ruleId = id('rule');
      const applicationIdValue = await applicationId();
      await db.write((tx) =>
        tx.insert(tables.rules).values({
          id: ruleId,
          applicationId: applicationIdValue,
          name: ruleId,
          priority: fields.priority ?? 10,
          matchOperator: fields.matchOperator ?? 'all',
          conditions,
          actions,
          createdAt: AT,
          updatedAt: AT,
        }),
      );
      return ruleId;
    },
    async policy(limits: StoredPolicyLimits, spamDetection: StoredSpamDetection = {}): Promise<string> {
      const policyId = id('policy');
      const applicationIdValue = await applicationId();
      await db.write((tx) =>
        tx.insert(tables.policies).values({
          id: policyId,
          applicationId: applicationIdValue,
          name: policyId,
          limits,
          spamDetection,
          createdAt: AT,
          updatedAt: AT,
        }),
      );
      return policyId;
    },
    /** A workspace of its own for `grantId`, with these rules and policy. */
    async workspace(grantId: string, ruleIds: string[], policyId?: string): Promise<string> {
      const workspaceId = id('workspace');
      const applicationIdValue = await applicationId();
      await db.write(async (tx) => {
        await tx.insert(tables.workspaces).values({
          id: workspaceId,
          applicationId: applicationIdValue,
          name: workspaceId,
          ruleIds,
          policyId: policyId ?? null,
          createdAt: AT,
          updatedAt: AT,
        });
        await tx.update(tables.grants).set({ workspaceId }).where(eq(tables.grants.id, grantId));
      });
      service.core.admin.enforcement.invalidate();
      return workspaceId;
    },
    /** The grant's rule-evaluation rows, after those waiting were written. */
    async evaluations(grantId: string) {
      await service.core.mail.inbound.flushEvaluations();
      return db.orm
        .select()
        .from(tables.ruleEvaluations)
        .where(eq(tables.ruleEvaluations.grantId, grantId))
        .orderBy(tables.ruleEvaluations.createdAt, tables.ruleEvaluations.id);
    },
    async messages(grantId: string) {
      return db.orm.select().from(tables.messages).where(eq(tables.messages.grantId, grantId));
    },
    async createdEvents(grantId: string) {
      return db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.grantId, grantId), eq(tables.outboxEvents.type, 'message.created')));
    },
  };
}

/** The error a send ends with (the test fails when it succeeds). */
async function sendError(
  transport: ReturnType<typeof smtpClient>,
  mail: Parameters<ReturnType<typeof smtpClient>['sendMail']>[0],
) {
  const error = await transport.sendMail(mail).then(
    () => undefined,
    (thrown: unknown) => thrown as Error & { responseCode?: number; response?: string; code?: string },
  );
  expect(error, 'the send should have been refused').toBeDefined();
  return error!;
}

describe('inbound stages: rules, limits and their audit', () => {
  let service: TestService;
  let transport: ReturnType<typeof smtpClient>;
  let rows: ReturnType<typeof admin>;

  beforeAll(async () => {
    service = await startTestService();
    transport = smtpClient(service.smtpPort);
    rows = admin(service);
  });
  afterAll(async () => {
    transport?.close();
    await service?.close();
  });

  it('refuses at RCPT TO, 550 5.7.1, a sender whose domain (or a parent of it) is in a domain list, and stores nothing', async () => {
    const email = `guarded@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const listId = await rows.list('domain', ['spam.example', 'junkmail.test']);
    const ruleId = await rows.rule(
      [{ field: 'from.domain', operator: 'in_list', value: [listId] }],
      [{ type: 'block' }],
    );
    await rows.workspace(grantId, [ruleId]);

    const error = await sendError(transport, {
      from: 'promo@mail.spam.example',
      to: email,
      subject: 'Buy now',
      text: 'Offer',
    });
    expect(error.responseCode).toBe(550);
    expect(error.response).toMatch(/^550 5\.7\.1 /);
    // Before DATA: the raw client sees the refusal at RCPT TO itself.
    const raw = await sendRaw(service.smtpPort, 'promo@junkmail.test', [email], 'Subject: again\r\n\r\nbody\r\n');
    expect(raw.code).toBe(550);
    expect(raw.text).toContain('5.7.1');

    // A sender not in the list gets through.
    await transport.sendMail({ from: 'friend@example.org', to: email, subject: 'Hello', text: 'Hi' });
    expect(await rows.messages(grantId)).toHaveLength(1);

    const evaluations = await rows.evaluations(grantId);
    const refused = evaluations.filter((row) => row.stage === 'smtp_rcpt' && row.matchedRuleIds.includes(ruleId));
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({
      messageId: null,
      appliedActions: { blocked: true },
      input: {
        from_address: 'promo@mail.spam.example',
        from_domain: 'mail.spam.example',
        recipient_addresses: [email],
      },
    });
    const passed = evaluations.filter((row) => row.input.from_address === 'friend@example.org');
    expect(passed.map((row) => row.stage).sort()).toEqual(['inbox_processing', 'smtp_rcpt']);
    expect(passed.find((row) => row.stage === 'inbox_processing')!.messageId).toBe(
      (await rows.messages(grantId))[0]!.id,
    );
  });

  it('puts mail in a folder named by a rule, making the folder when missing', async () => {
    const email = `sorted@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const ruleId = await rows.rule(
      [{ field: 'from.address', operator: 'contains', value: 'billing' }],
      [{ type: 'assign_to_folder', value: 'Receipts' }],
    );
    await rows.workspace(grantId, [ruleId]);

    await transport.sendMail({
      from: 'Billing <billing@shop.example>',
      to: email,
      subject: 'Your receipt',
      text: 'Thanks',
    });
    await transport.sendMail({
      from: 'billing@shop.example',
      to: email,
      subject: 'Another receipt',
      text: 'Thanks again',
    });
    const folders = (await service.nylas.folders.list({ identifier: grantId })).data;
    const receipts = folders.filter((folder) => folder.name === 'Receipts');
    expect(receipts).toHaveLength(1);
    const listed = (await service.nylas.messages.list({ identifier: grantId })).data;
    expect(listed).toHaveLength(2);
    for (const message of listed) expect(message.folders).toEqual([receipts[0]!.id]);

    const inbox = (await rows.evaluations(grantId)).filter((row) => row.stage === 'inbox_processing');
    expect(inbox).toHaveLength(2);
    expect(inbox[0]).toMatchObject({ matchedRuleIds: [ruleId], appliedActions: { folder_ids: [receipts[0]!.id] } });
    expect(inbox.map((row) => row.messageId).sort()).toEqual(listed.map((message) => message.id).sort());
  });

  it('removes an attachment of a type the policy does not allow, and names it on the message', async () => {
    const email = `strict@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const policyId = await rows.policy({ limit_attachment_allowed_types: ['application/pdf', 'image/*'] });
    await rows.workspace(grantId, [], policyId);

    await transport.sendMail({
      from: 'sender@example.org',
      to: email,
      subject: 'Files',
      text: 'Two files',
      attachments: [
        { filename: 'report.pdf', content: Buffer.alloc(1200, 7), contentType: 'application/pdf' },
        { filename: 'setup.exe', content: Buffer.alloc(900, 9), contentType: 'application/x-msdownload' },
      ],
    });
    const [listed] = (await service.nylas.messages.list({ identifier: grantId })).data;
    const message = (await service.nylas.messages.find({ identifier: grantId, messageId: listed!.id })).data;
    expect(message.attachments?.map((attachment) => attachment.filename)).toEqual(['report.pdf']);
    // The note on the message, as the API returns it (an extension field; the SDK camel-cases its keys).
    expect((message as unknown as { removedAttachments?: unknown }).removedAttachments).toEqual([
      {
        filename: 'setup.exe',
        contentType: 'application/x-msdownload',
        size: 900,
        reason: expect.stringContaining('limit_attachment_allowed_types'),
      },
    ]);
    const [row] = await rows.messages(grantId);
    expect(row!.verdict).toMatchObject({
      removed_attachments: [
        {
          filename: 'setup.exe',
          content_type: 'application/x-msdownload',
          size: 900,
          reason: expect.stringContaining('limit_attachment_allowed_types'),
        },
      ],
    });

    const [evaluation] = (await rows.evaluations(grantId)).filter((entry) => entry.stage === 'inbox_processing');
    expect(evaluation).toMatchObject({
      messageId: listed!.id,
      verdicts: { removed_attachments: [{ filename: 'setup.exe' }] },
    });
  });

  it('refuses a message over limit_size_total_mime with 552 5.3.4', async () => {
    const email = `small@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await rows.workspace(grantId, [], await rows.policy({ limit_size_total_mime: 2_000 }));

    const error = await sendError(transport, {
      from: 'sender@example.org',
      to: email,
      subject: 'Big',
      text: 'x'.repeat(5_000),
    });
    expect(error.responseCode).toBe(552);
    // Without a declared SIZE the refusal comes after DATA.
    const raw = await sendRaw(
      service.smtpPort,
      'sender@example.org',
      [email],
      `Subject: big\r\n\r\n${'y'.repeat(5_000)}\r\n`,
    );
    expect(raw.code).toBe(552);
    expect(raw.text).toContain('5.3.4');
    await transport.sendMail({ from: 'sender@example.org', to: email, subject: 'Small', text: 'fits' });
    expect(await rows.messages(grantId)).toHaveLength(1);
    // Each refusal after DATA (nodemailer declares no SIZE either) is recorded too: blocked, no message id, the limit named.
    const afterData = (await rows.evaluations(grantId)).filter(
      (row) => row.stage === 'inbox_processing' && row.appliedActions.blocked,
    );
    expect(afterData).toHaveLength(2);
    for (const row of afterData)
      expect(row).toMatchObject({
        messageId: null,
        verdicts: { refused: { code: 552, reason: 'limit_size_total_mime' } },
      });
  });

  it('refuses the message after the daily received count with 452 4.2.2', async () => {
    const email = `quota@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await rows.workspace(grantId, [], await rows.policy({ limit_count_daily_message_received: 2 }));

    await transport.sendMail({ from: 'a@example.org', to: email, subject: 'one', text: '1' });
    await transport.sendMail({ from: 'a@example.org', to: email, subject: 'two', text: '2' });
    const error = await sendError(transport, { from: 'a@example.org', to: email, subject: 'three', text: '3' });
    expect(error.responseCode).toBe(452);
    expect(error.response).toContain('4.2.2');
    expect(await rows.messages(grantId)).toHaveLength(2);
    const [usage] = await service.core.deps.db.orm
      .select()
      .from(tables.grantDailyUsage)
      .where(eq(tables.grantDailyUsage.grantId, grantId));
    expect(usage!.received).toBe(2);
    const refused = (await rows.evaluations(grantId)).filter(
      (row) => row.stage === 'smtp_rcpt' && (row.verdicts as { refused?: unknown }).refused,
    );
    expect(refused[0]!.verdicts).toMatchObject({
      refused: { code: 452, reason: 'limit_count_daily_message_received' },
    });
  });

  it('drops after acceptance mail that an inbox rule blocks (by its From header): nothing stored, no message.created', async () => {
    const email = `shielded@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const ruleId = await rows.rule(
      [{ field: 'from.address', operator: 'is', value: 'ceo@spoofed.example' }],
      [{ type: 'block' }],
    );
    await rows.workspace(grantId, [ruleId]);

    // The envelope sender passes RCPT TO; the From header is what the inbox rule sees.
    const info = await transport.sendMail({
      from: 'CEO <ceo@spoofed.example>',
      envelope: { from: 'bounces@mailer.example', to: [email] },
      to: email,
      subject: 'Wire money',
      text: 'Now',
    });
    expect(info.response).toMatch(/^250 /);
    expect(await rows.messages(grantId)).toHaveLength(0);
    expect(await rows.createdEvents(grantId)).toHaveLength(0);
    const evaluations = await rows.evaluations(grantId);
    expect(evaluations.find((row) => row.stage === 'smtp_rcpt')).toMatchObject({
      matchedRuleIds: [],
      appliedActions: {},
    });
    expect(evaluations.find((row) => row.stage === 'inbox_processing')).toMatchObject({
      messageId: null,
      matchedRuleIds: [ruleId],
      appliedActions: { blocked: true },
      input: { from_address: 'ceo@spoofed.example' },
    });
  });

  it('applies mark_as_read, mark_as_starred, archive, trash and mark_as_spam, each copy by its own mailbox', async () => {
    const names = ['readstar', 'archived', 'trashed', 'spammed', 'plain'] as const;
    const grants: Record<string, string> = {};
    for (const name of names) grants[name] = await createMailbox(service, `${name}@${DOMAIN}`);
    const recipientIs = (name: string): StoredRuleCondition[] => [
      { field: 'recipient.address', operator: 'is', value: `${name}@${DOMAIN}` },
    ];
    const ruleIds = [
      await rows.rule(recipientIs('readstar'), [{ type: 'mark_as_read' }, { type: 'mark_as_starred' }]),
      await rows.rule(recipientIs('archived'), [{ type: 'archive' }]),
      await rows.rule(recipientIs('trashed'), [{ type: 'trash' }]),
      await rows.rule(recipientIs('spammed'), [{ type: 'mark_as_spam' }]),
    ];
    // One workspace for all five: `recipient.*` is each copy's own recipient.
    const workspaceId = await rows.workspace(grants.readstar!, ruleIds);
    await service.core.deps.db.write((tx) =>
      tx
        .update(tables.grants)
        .set({ workspaceId })
        .where(eq(tables.grants.email, `plain@${DOMAIN}`)),
    );
    for (const name of ['archived', 'trashed', 'spammed']) {
      await service.core.deps.db.write((tx) =>
        tx.update(tables.grants).set({ workspaceId }).where(eq(tables.grants.id, grants[name]!)),
      );
    }
    service.core.admin.enforcement.invalidate();

    await transport.sendMail({
      from: 'news@example.org',
      to: names.map((name) => `${name}@${DOMAIN}`),
      subject: 'To all',
      text: 'One message, five copies',
    });
    const copy = async (name: string) => (await rows.messages(grants[name]!))[0]!;
    expect(await copy('readstar')).toMatchObject({ unread: false, starred: true, folders: ['inbox'] });
    expect(await copy('archived')).toMatchObject({ unread: true, starred: false, folders: ['archive'] });
    expect(await copy('trashed')).toMatchObject({ folders: ['trash'] });
    expect(await copy('spammed')).toMatchObject({ folders: ['junk'] });
    expect(await copy('plain')).toMatchObject({ unread: true, starred: false, folders: ['inbox'] });

    const applied = async (name: string) =>
      (await rows.evaluations(grants[name]!)).find((row) => row.stage === 'inbox_processing')!.appliedActions;
    expect(await applied('readstar')).toEqual({ marked_as_read: true, marked_starred: true });
    expect(await applied('archived')).toEqual({ archived: true });
    expect(await applied('trashed')).toEqual({ trashed: true });
    expect(await applied('spammed')).toEqual({ marked_as_spam: true });
    expect(await applied('plain')).toEqual({});
  });

  it('fails closed with 451 4.3.0 when what applies to the mailbox cannot be loaded', async () => {
    const email = `broken@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const ruleId = await rows.rule(
      [{ field: 'from.domain', operator: 'is', value: 'example.org' }],
      [{ type: 'mark_as_read' }],
    );
    await rows.workspace(grantId, [ruleId]);
    // A rule row the loader cannot read (its conditions are not JSON): the evaluation cannot complete.
    await service.core.deps.db.client.execute({
      sql: "UPDATE rules SET conditions = '{broken' WHERE id = ?",
      args: [ruleId],
    });
    service.core.admin.enforcement.invalidate();

    const error = await sendError(transport, { from: 'a@example.org', to: email, subject: 'x', text: 'y' });
    expect(error.responseCode).toBe(451);
    expect(error.response).toContain('4.3.0');
    expect(await rows.messages(grantId)).toHaveLength(0);
    const [evaluation] = await rows.evaluations(grantId);
    expect(evaluation).toMatchObject({ stage: 'smtp_rcpt', appliedActions: { blocked_by_evaluation_error: true } });
  });
});

describe('inbound stages: authentication and spam seams', () => {
  let service: TestService;
  let transport: ReturnType<typeof smtpClient>;
  let rows: ReturnType<typeof admin>;
  const seen: { helo: string; address: string; spamSettings: StoredSpamDetection[]; authentications: number } = {
    helo: '',
    address: '',
    spamSettings: [],
    authentications: 0,
  };

  const authenticator: Authenticator = async (mail) => {
    seen.authentications++;
    if (mail.raw.includes('Subject: unverifiable')) throw new Error('the resolver timed out');
    seen.helo = mail.client?.helo ?? '';
    seen.address = mail.client?.address ?? '';
    return {
      spf: { result: 'pass', domain: 'example.org' },
      dmarc: { result: 'none' },
      header: 'Authentication-Results: mx.test; spf=pass smtp.mailfrom=example.org',
    };
  };
  const spamChecker: SpamChecker = async (mail, settings) => {
    seen.spamSettings.push(settings);
    if (mail.raw.includes('Subject: scanner down')) throw new Error('rspamd is not answering');
    const spam = mail.raw.includes('XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X');
    expect(mail.authentication?.spf?.result).toBe('pass');
    return { spam, score: spam ? 1000 : 0, threshold: 5, reasons: spam ? ['GTUBE'] : [] };
  };

  beforeAll(async () => {
    service = await startTestService({ deps: { inboundStages: { authenticator, spamChecker } } });
    transport = smtpClient(service.smtpPort);
    rows = admin(service);
  });
  afterAll(async () => {
    transport?.close();
    await service?.close();
  });

  it('prepends the Authentication-Results header to the stored message and keeps the verdict; spam goes to junk', async () => {
    const email = `filtered@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await rows.workspace(
      grantId,
      [],
      await rows.policy({}, { spam_sensitivity: 1, use_header_anomaly_detection: true }),
    );

    await transport.sendMail({ from: 'a@example.org', to: email, subject: 'Clean', text: 'Hello' });
    await transport.sendMail({
      from: 'a@example.org',
      to: email,
      subject: 'Test',
      text: 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X',
    });
    expect(seen.address).toMatch(/127\.0\.0\.1/);
    expect(seen.helo).not.toBe('');
    expect(seen.spamSettings.at(-1)).toEqual({ spam_sensitivity: 1, use_header_anomaly_detection: true });

    const stored = await rows.messages(grantId);
    const clean = stored.find((row) => row.subject === 'Clean')!;
    const spam = stored.find((row) => row.subject === 'Test')!;
    expect(clean.folders).toEqual(['inbox']);
    expect(spam.folders).toEqual(['junk']);
    expect(clean.verdict).toMatchObject({
      authentication: { spf: { result: 'pass' }, header: expect.stringContaining('spf=pass') },
      spam: { spam: false },
    });
    expect(spam.verdict).toMatchObject({ spam: { spam: true, reasons: ['GTUBE'] } });
    const rawMime = (
      await service.nylas.messages.find({
        identifier: grantId,
        messageId: clean.id,
        queryParams: { fields: 'raw_mime' as never },
      })
    ).data.rawMime!;
    const mime = Buffer.from(rawMime, 'base64url').toString();
    expect(mime.startsWith('Authentication-Results: mx.test; spf=pass smtp.mailfrom=example.org\r\n')).toBe(true);
    const evaluation = (await rows.evaluations(grantId)).find((row) => row.messageId === spam.id);
    expect(evaluation).toMatchObject({ stage: 'inbox_processing', verdicts: { spam: { spam: true } } });
  });

  it('does not call the spam checker for a mailbox whose policy has no spam_detection', async () => {
    const email = `unfiltered@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const calls = seen.spamSettings.length;
    await transport.sendMail({
      from: 'a@example.org',
      to: email,
      subject: 'Plain',
      text: 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X',
    });
    expect(seen.spamSettings.length).toBe(calls);
    const [row] = await rows.messages(grantId);
    expect(row!.folders).toEqual(['inbox']);
    expect(row!.verdict).toMatchObject({ authentication: { spf: { result: 'pass' } } });
  });

  it('fails closed with 451 4.3.0 when authentication or the spam check cannot complete', async () => {
    const email = `careful@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await rows.workspace(grantId, [], await rows.policy({}, { use_list_dnsbl: true }));
    for (const subject of ['unverifiable', 'scanner down']) {
      const error = await sendError(transport, { from: 'a@example.org', to: email, subject, text: 'y' });
      expect(error.responseCode).toBe(451);
      expect(error.response).toContain('4.3.0');
    }
    expect(await rows.messages(grantId)).toHaveLength(0);
  });

  it('runs local deliveries (a send to a mailbox of this service) through the same stages, without authentication', async () => {
    const sender = `colleague@${DOMAIN}`;
    const senderGrant = await createMailbox(service, sender);
    const welcome = `welcoming@${DOMAIN}`;
    const closed = `closed@${DOMAIN}`;
    const welcomeGrant = await createMailbox(service, welcome);
    const closedGrant = await createMailbox(service, closed);
    const folderRule = await rows.rule(
      [{ field: 'from.domain', operator: 'is', value: DOMAIN }],
      [{ type: 'assign_to_folder', value: 'Colleagues' }, { type: 'mark_as_starred' }],
    );
    const blockRule = await rows.rule(
      [{ field: 'recipient.address', operator: 'is', value: closed }],
      [{ type: 'block' }],
    );
    await rows.workspace(welcomeGrant, [folderRule]);
    await rows.workspace(closedGrant, [blockRule]);
    const before = seen.authentications;

    const sent = await service.nylas.messages.send({
      identifier: senderGrant,
      requestBody: { to: [{ email: welcome }, { email: closed }], subject: 'Lunch?', body: 'At noon' },
    });
    expect(seen.authentications).toBe(before);
    const [received] = await rows.messages(welcomeGrant);
    const [folder] = (await service.nylas.folders.list({ identifier: welcomeGrant })).data.filter(
      (entry) => entry.name === 'Colleagues',
    );
    expect(received).toMatchObject({ subject: 'Lunch?', starred: true, folders: [folder!.id], verdict: null });
    expect(await rows.messages(closedGrant)).toHaveLength(0);
    const status = (await service.nylas.messages.find({ identifier: senderGrant, messageId: sent.data.id }))
      .data as unknown as { deliveryStatus: { email: string; status: string; response?: string }[] };
    expect(status.deliveryStatus.find((entry) => entry.email === closed)).toMatchObject({
      status: 'failed',
      response: expect.stringContaining('5.7.1'),
    });
    expect(status.deliveryStatus.find((entry) => entry.email === welcome)).toMatchObject({ status: 'delivered' });

    const refused = (await rows.evaluations(closedGrant)).find((row) => row.stage === 'smtp_rcpt');
    expect(refused).toMatchObject({
      matchedRuleIds: [blockRule],
      appliedActions: { blocked: true },
      input: { from_address: sender },
    });
    const foldered = (await rows.evaluations(welcomeGrant)).find((row) => row.stage === 'inbox_processing');
    expect(foldered).toMatchObject({
      messageId: received!.id,
      appliedActions: { marked_starred: true, folder_ids: [folder!.id] },
    });
  });
});
