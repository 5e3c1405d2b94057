/**
 * Policy upkeep with the injected clock: `limit_inbox_retention_period` and `limit_spam_retention_period` delete
 * only the old mail of inbox resp. junk of mailboxes under the policy, through the delete path (thread aggregates
 * and `message.deleted` events stay right); `options.additional_folders` appear in mailboxes under the policy,
 * at creation and by the reconcile. Read back with the nylas SDK; the policy is written straight into its table.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'upkeep.agentpost.localhost';
const DAY = 86_400_000;
const T0 = '2026-03-01T12:00:00Z';

describe('policy upkeep: retention and additional folders', () => {
  const clock = fixedClock(T0);
  let service: TestService;
  let applicationId: string;
  let kept: string;
  let free: string;

  beforeAll(async () => {
    service = await startTestService({ deps: { clock } });
    applicationId = await service.core.accounts.applications.defaultApplicationId();
    kept = await createMailbox(service, `kept@${DOMAIN}`);
    free = await createMailbox(service, `free@${DOMAIN}`);
    // `free` is in a workspace of its own, without a policy.
    const at = Math.floor(clock.now().getTime() / 1000);
    await service.core.deps.db.write(async (tx) => {
      await tx
        .insert(tables.workspaces)
        .values({ id: 'ws_free', applicationId, name: 'Free', createdAt: at, updatedAt: at });
      await tx.update(tables.grants).set({ workspaceId: 'ws_free' }).where(eq(tables.grants.id, free));
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  let sequence = 0;
  /** Delivers a message to the mailboxes at the clock's now; returns the Message-ID. */
  async function deliver(to: string[], subject: string, inReplyTo?: string): Promise<string> {
    const messageId = `m${++sequence}@example.com`;
    const headers = [
      `From: Sender <sender@example.com>`,
      `To: ${to.join(', ')}`,
      `Subject: ${subject}`,
      `Message-ID: <${messageId}>`,
      `Date: ${clock.now().toUTCString()}`,
    ];
    if (inReplyTo) headers.push(`In-Reply-To: <${inReplyTo}>`, `References: <${inReplyTo}>`);
    await service.core.mail.inbound.deliverInbound({
      rawMime: `${headers.join('\r\n')}\r\n\r\n${subject} body\r\n`,
      envelope: { mailFrom: 'sender@example.com', rcptTo: to },
    });
    return messageId;
  }
  async function find(grant: string, subject: string) {
    return (await service.nylas.messages.list({ identifier: grant, queryParams: { subject } })).data.filter(
      (message) => message.subject === subject,
    );
  }
  async function toJunk(grant: string, subject: string) {
    const [message] = await find(grant, subject);
    await service.nylas.messages.update({
      identifier: grant,
      messageId: message!.id,
      requestBody: { folders: ['junk'] },
    });
    return message!.id;
  }
  async function folderNames(grant: string) {
    return (await service.nylas.folders.list({ identifier: grant })).data.map((folder) => folder.name);
  }
  async function setPolicy(limits: Record<string, number>, additionalFolders: string[]) {
    const at = Math.floor(clock.now().getTime() / 1000);
    await service.core.deps.db.write(async (tx) => {
      await tx.delete(tables.policies).where(eq(tables.policies.id, 'policy_keep'));
      await tx.insert(tables.policies).values({
        id: 'policy_keep',
        applicationId,
        name: 'Keep tidy',
        limits,
        options: { additional_folders: additionalFolders },
        createdAt: at,
        updatedAt: at,
      });
      await tx
        .update(tables.workspaces)
        .set({ policyId: 'policy_keep' })
        .where(and(eq(tables.workspaces.applicationId, applicationId), eq(tables.workspaces.isDefault, true)));
    });
    service.core.admin.enforcement.invalidate();
  }

  it('deletes only the old inbox and junk mail of mailboxes under the policy, through the delete path', async () => {
    const first = await deliver([`kept@${DOMAIN}`, `free@${DOMAIN}`], 'Old thread start');
    const oldJunk = await (async () => {
      await deliver([`kept@${DOMAIN}`], 'Old junk');
      return toJunk(kept, 'Old junk');
    })();
    // The mailbox's own sent mail is never touched.
    await service.nylas.messages.send({
      identifier: kept,
      requestBody: { to: [{ email: `free@${DOMAIN}` }], subject: 'Old sent', body: 'x' },
    });
    clock.advance(10 * DAY);
    await deliver([`kept@${DOMAIN}`], 'Junk ten days');
    const tenDayJunk = await toJunk(kept, 'Junk ten days');
    clock.advance(15 * DAY);
    await deliver([`kept@${DOMAIN}`], 'Re: Old thread start', first);
    clock.advance(3 * DAY);
    await deliver([`kept@${DOMAIN}`], 'Fresh junk');
    await toJunk(kept, 'Fresh junk');
    clock.advance(3 * DAY);
    // Now: day 31. Inbox keeps 30 days, junk 7.
    const [oldStart] = await find(kept, 'Old thread start');
    const threadId = oldStart!.threadId!;
    expect((await service.nylas.threads.find({ identifier: kept, threadId })).data.messageIds).toHaveLength(2);

    await setPolicy({ limit_inbox_retention_period: 30, limit_spam_retention_period: 7 }, []);
    const result = await service.core.admin.policyUpkeep.run();
    expect(result).toEqual({ inboxDeleted: 1, junkDeleted: 2, foldersCreated: 0 });

    const subjects = async (grant: string) =>
      (await service.nylas.messages.list({ identifier: grant, queryParams: { limit: 50 } })).data
        .map((message) => message.subject)
        .sort();
    expect(await subjects(kept)).toEqual(['Fresh junk', 'Old sent', 'Re: Old thread start']);
    // The mailbox outside the policy keeps everything.
    expect(await subjects(free)).toEqual(['Old sent', 'Old thread start']);
    // The thread lost its old message and kept the reply.
    const thread = (await service.nylas.threads.find({ identifier: kept, threadId })).data;
    expect(thread.messageIds).toHaveLength(1);
    expect(thread.subject).toBeDefined();
    // Each delete was announced as any delete is.
    const deleted = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'message.deleted'));
    expect(deleted.map((event) => event.objectId).sort()).toEqual([oldStart!.id, oldJunk, tenDayJunk].sort());

    // A second pass has nothing left to do.
    expect(await service.core.admin.policyUpkeep.run()).toEqual({ inboxDeleted: 0, junkDeleted: 0, foldersCreated: 0 });

    // The background role runs it too.
    await deliver([`kept@${DOMAIN}`], 'Aging');
    clock.advance(31 * DAY);
    service.background.wake();
    await eventually(async () => ((await find(kept, 'Aging')).length === 0 ? true : undefined));
  });

  it('adds the additional folders to mailboxes under the policy: existing ones by the reconcile, new ones at creation', async () => {
    await setPolicy({}, ['Invoices', 'Receipts', ' Invoices ', 'inbox']);
    expect(await folderNames(kept)).not.toContain('Invoices');
    const result = await service.core.admin.policyUpkeep.run();
    expect(result.foldersCreated).toBe(2);
    expect(await folderNames(kept)).toEqual(expect.arrayContaining(['Invoices', 'Receipts']));
    expect(await folderNames(free)).not.toContain('Invoices');
    const created = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, 'folder.created'), eq(tables.outboxEvents.grantId, kept)));
    expect(created.map((event) => (event.payload as { name: string }).name).sort()).toEqual(['Invoices', 'Receipts']);

    // A new mailbox under the policy has them from the start.
    const fresh = await createMailbox(service, `fresh@${DOMAIN}`);
    expect(await folderNames(fresh)).toEqual(expect.arrayContaining(['Invoices', 'Receipts']));
    // A folder the policy adds later reaches every mailbox under it at the next pass.
    await setPolicy({}, ['Invoices', 'Receipts', 'Contracts']);
    expect((await service.core.admin.policyUpkeep.run()).foldersCreated).toBe(2);
    expect(await folderNames(fresh)).toContain('Contracts');
    expect(await folderNames(kept)).toContain('Contracts');
    expect((await service.core.admin.policyUpkeep.run()).foldersCreated).toBe(0);
  });
});
