/**
 * Replies to tracked sends, at the service level on a real database: which arriving messages store a
 * `deliverability.thread_replied` job with them (on the writer thread's fast path and on the parsed path), which do
 * not, and what the job records (once, however often it runs).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import type { Core, Job, Principal } from '../../../src/index.js';
import {
  createThreadReplies,
  namesEarlierMessages,
  replyHeadersOf,
  THREAD_REPLIED_JOB,
} from '../../../src/deliverability/thread-replies.js';
import { createTestCore } from '../../helpers/service.js';

const DOMAIN = 'replies.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;

/** A reply as an outside mailer writes it; `multipart` makes it take the parsed path instead of the fast one. */
function reply(options: {
  inReplyTo?: string;
  references?: string[];
  messageId: string;
  from?: string;
  multipart?: boolean;
}): string {
  const headers = [
    `From: ${options.from ?? 'Bob <bob@example.com>'}`,
    `To: ${AGENT}`,
    'Subject: Re: Hello',
    `Message-ID: <${options.messageId}>`,
    ...(options.inReplyTo ? [`In-Reply-To: <${options.inReplyTo}>`] : []),
    ...(options.references ? [`References: ${options.references.map((id) => `<${id}>`).join('\r\n ')}`] : []),
    'MIME-Version: 1.0',
  ];
  if (!options.multipart)
    return [...headers, 'Content-Type: text/plain; charset=utf-8', '', 'Sounds good.', ''].join('\r\n');
  return [
    ...headers,
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Sounds good.',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Sounds good.</p>',
    '--b1--',
    '',
  ].join('\r\n');
}

describe('thread replies: the job stored with a reply, and what it records', () => {
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let principal: Principal;
  let grantId: string;

  beforeAll(async () => {
    env = await createTestCore();
    core = env.core;
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    await core.accounts.domains.create(principal, { name: DOMAIN, domain_address: DOMAIN });
    grantId = (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: AGENT } })).grant
      .id;
  });
  afterAll(async () => {
    await core.mail.inbound.close();
    env.close();
  });

  /** Sends from the agent with these tracking options; returns the sent copy and its Message-ID. */
  async function send(trackingOptions?: { thread_replies?: boolean; opens?: boolean; label?: string }) {
    const result = await core.sending.outbound.send(principal, {
      grant_id: grantId,
      to: [{ email: 'bob@example.com' }],
      subject: 'Hello',
      body: 'Shall we meet?',
      ...(trackingOptions ? { tracking_options: trackingOptions } : {}),
    });
    const data = result.data as { id: string; thread_id?: string };
    const [copy] = await env.db.orm.select().from(tables.messages).where(eq(tables.messages.id, data.id));
    return { id: data.id, threadId: data.thread_id!, headerMessageId: copy!.headerMessageId! };
  }

  const deliver = (raw: string) =>
    core.mail.inbound.deliverInbound({ rawMime: raw, envelope: { mailFrom: 'bob@example.com', rcptTo: [AGENT] } });
  const replyJobs = () => env.db.orm.select().from(tables.jobs).where(eq(tables.jobs.kind, THREAD_REPLIED_JOB));
  const run = (job: Job) =>
    core.jobs.handlers[THREAD_REPLIED_JOB]!(job, { owner: 'test', extendLease: async () => true });
  const tracked = async (messageId: string) =>
    (await env.db.orm.select().from(tables.trackedMessages).where(eq(tables.trackedMessages.messageId, messageId)))[0]!;
  const repliedEvents = () =>
    env.db.orm.select().from(tables.outboxEvents).where(eq(tables.outboxEvents.type, 'thread.replied'));
  async function clearJobs() {
    await env.db.write((tx) => tx.delete(tables.jobs).where(eq(tables.jobs.kind, THREAD_REPLIED_JOB)));
  }

  it('reads In-Reply-To and References closest first, and passes over mail that names no earlier message', () => {
    expect(
      namesEarlierMessages(Buffer.from('From: a@b.c\r\nSubject: hi\r\n\r\nIn-Reply-To: <not-a-header@x>\r\n')),
    ).toBe(false);
    expect(namesEarlierMessages(Buffer.from('From: a@b.c\r\nIN-REPLY-TO: <x@y>\r\n\r\nbody'))).toBe(true);
    expect(namesEarlierMessages(Buffer.from('From: a@b.c\nreferences:\n <x@y>\n\nbody'))).toBe(true);
    const headers = replyHeadersOf(
      Buffer.from(
        reply({
          messageId: 'R1@example.com',
          inReplyTo: 'Parent@x',
          references: ['root@x', 'mid@x', 'parent@x'],
          from: '"Bob <evil@x>" <Bob@Example.com>',
        }),
      ),
    );
    expect(headers).toEqual({
      named: ['parent@x', 'mid@x', 'root@x'],
      inReplyTo: 'parent@x',
      messageId: 'r1@example.com',
      from: 'bob@example.com',
    });
  });

  it("stores the job in the reply's own transaction on the fast path, and the job records the reply once", async () => {
    const sent = await send({ thread_replies: true, label: 'outreach' });
    const result = await deliver(
      reply({ messageId: 'reply-1@example.com', inReplyTo: sent.headerMessageId, references: [sent.headerMessageId] }),
    );
    const replyId = result.deliveries[0]!.messageId;
    const [job] = await replyJobs();
    expect(job!.payload).toMatchObject({
      header_message_id: 'reply-1@example.com',
      in_reply_to: sent.headerMessageId.toLowerCase(),
      replies: [{ grant_id: grantId, message_id: replyId, from_self: false }],
    });

    await run(job as Job);
    // Run again, as after a crash before the job's completion was recorded: nothing more is counted.
    await run(job as Job);
    expect((await tracked(sent.id)).repliesCount).toBe(1);
    const engagement = await env.db.orm
      .select()
      .from(tables.engagementEvents)
      .where(eq(tables.engagementEvents.kind, 'reply'));
    expect(engagement).toHaveLength(1);
    expect(engagement[0]).toMatchObject({
      messageId: (await tracked(sent.id)).id,
      replyMessageId: replyId,
      counted: true,
    });
    const events = await repliedEvents();
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      object: 'thread',
      grant_id: grantId,
      message_id: replyId,
      root_message_id: sent.id,
      reply_to_message_id: sent.id,
      label: 'outreach',
      reply_data: { count: 1 },
      from_self: false,
      sender_app_id: principal.applicationId,
      thread_id: sent.threadId,
      timestamp: expect.any(Number),
    });
    expect(result.deliveries[0]!.threadId).toBe(sent.threadId);
    await clearJobs();

    // The same reply delivered again (a sender retrying after a lost answer): a second copy, not a second reply.
    await deliver(reply({ messageId: 'reply-1@example.com', inReplyTo: sent.headerMessageId }));
    const [again] = await replyJobs();
    await run(again as Job);
    expect((await tracked(sent.id)).repliesCount).toBe(1);
    expect(await repliedEvents()).toHaveLength(1);

    // Another reply on the thread, naming the tracked send only in its References: counted, the count goes to 2.
    await clearJobs();
    const second = await deliver(
      reply({
        messageId: 'reply-2@example.com',
        inReplyTo: 'reply-1@example.com',
        references: [sent.headerMessageId, 'reply-1@example.com'],
        multipart: true,
      }),
    );
    const [secondJob] = await replyJobs();
    expect(secondJob).toBeDefined();
    await run(secondJob as Job);
    const latest = (await repliedEvents()).at(-1)!.payload;
    // It answers the first reply (a message of the thread), and the count is the tracked send's.
    expect(latest).toMatchObject({
      message_id: second.deliveries[0]!.messageId,
      root_message_id: sent.id,
      reply_to_message_id: replyId,
      reply_data: { count: 2 },
    });
    await clearJobs();
  });

  it('stores the job on the parsed path too (a multipart reply), and marks a reply from the mailbox itself from_self', async () => {
    const sent = await send({ thread_replies: true });
    await deliver(
      reply({
        messageId: 'self-1@example.com',
        inReplyTo: sent.headerMessageId,
        from: `Agent <${AGENT.toUpperCase()}>`,
        multipart: true,
      }),
    );
    const [job] = await replyJobs();
    expect(job!.payload).toMatchObject({ replies: [{ grant_id: grantId, from_self: true }] });
    await run(job as Job);
    const event = (await repliedEvents()).at(-1)!.payload;
    expect(event).toMatchObject({ root_message_id: sent.id, from_self: true });
    // No label was given: none is echoed.
    expect(event).not.toHaveProperty('label');
    await clearJobs();
  });

  it('stores no job for replies to untracked sends, to sends tracked without thread_replies, or for mail naming nothing', async () => {
    const untracked = await send();
    const opensOnly = await send({ opens: true, thread_replies: false, label: 'x' });
    await deliver(reply({ messageId: 'n1@example.com', inReplyTo: untracked.headerMessageId }));
    await deliver(reply({ messageId: 'n2@example.com', inReplyTo: opensOnly.headerMessageId, multipart: true }));
    await deliver(reply({ messageId: 'n3@example.com' }));
    await deliver(reply({ messageId: 'n4@example.com', inReplyTo: 'unknown@example.com' }));
    expect(await replyJobs()).toEqual([]);
    expect((await tracked(opensOnly.id)).repliesCount).toBe(0);
  });

  it("answers many messages at once (a connected account's synced mail) as it answers each alone", async () => {
    const sent = await send({ thread_replies: true });
    const earlier = await send({ thread_replies: true });
    const untracked = await send();
    const other = (
      await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: `many@${DOMAIN}` } })
    ).grant.id;
    const mine = [{ id: grantId, email: AGENT }];
    const messages = [
      { raw: Buffer.from(reply({ messageId: 'b1@example.com', inReplyTo: sent.headerMessageId })), grants: mine },
      { raw: Buffer.from(reply({ messageId: 'b2@example.com' })), grants: mine },
      { raw: Buffer.from(reply({ messageId: 'b3@example.com', inReplyTo: untracked.headerMessageId })), grants: mine },
      // The closest named tracked send is the one counted: In-Reply-To before References.
      {
        raw: Buffer.from(
          reply({
            messageId: 'b4@example.com',
            inReplyTo: earlier.headerMessageId,
            references: [sent.headerMessageId, earlier.headerMessageId],
          }),
        ),
        grants: mine,
      },
      // Another mailbox naming the tracked send: not its reply.
      {
        raw: Buffer.from(reply({ messageId: 'b5@example.com', inReplyTo: sent.headerMessageId })),
        grants: [{ id: other, email: `many@${DOMAIN}` }],
      },
    ];
    const replies = createThreadReplies(core.deps);
    const together = await replies.jobsForMany(messages, 1_800_000_000);
    const alone = await Promise.all(messages.map(({ raw, grants }) => replies.jobsFor(raw, grants, 1_800_000_000)));
    const jobsOf = (found: typeof alone, index: number) =>
      found[index]?.([{ grantId: messages[index]!.grants[0]!.id, messageId: `stored-${index}` }]);
    expect(together.map((_, index) => jobsOf(together, index))).toEqual(alone.map((_, index) => jobsOf(alone, index)));
    expect(together.map((found) => found !== undefined)).toEqual([true, false, false, true, false]);
    const trackedId = async (id: string) => (await tracked(id)).id;
    expect(jobsOf(together, 0)).toEqual([
      expect.objectContaining({
        kind: THREAD_REPLIED_JOB,
        payload: expect.objectContaining({
          replies: [expect.objectContaining({ tracked_id: await trackedId(sent.id), message_id: 'stored-0' })],
        }),
      }),
    ]);
    expect(jobsOf(together, 3)).toEqual([
      expect.objectContaining({
        payload: expect.objectContaining({
          replies: [expect.objectContaining({ tracked_id: await trackedId(earlier.id) })],
        }),
      }),
    ]);
    // A mailbox with no tracked send at all is answered without any job.
    expect(
      (
        await replies.jobsForMany(
          messages.map(({ raw }) => ({ raw, grants: [{ id: other, email: `many@${DOMAIN}` }] })),
          1,
        )
      ).every((found) => found === undefined),
    ).toBe(true);
  });

  it("does not count a reply of another mailbox to the tracked send (it names the Message-ID but is not the sender's)", async () => {
    const sent = await send({ thread_replies: true });
    const other = (
      await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: `other@${DOMAIN}` } })
    ).grant.id;
    await core.mail.inbound.deliverInbound({
      rawMime: reply({ messageId: 'o1@example.com', inReplyTo: sent.headerMessageId }),
      envelope: { mailFrom: 'bob@example.com', rcptTo: [`other@${DOMAIN}`] },
    });
    expect(await replyJobs()).toEqual([]);
    const copies = await env.db.orm
      .select()
      .from(tables.messages)
      .where(and(eq(tables.messages.grantId, other), eq(tables.messages.headerMessageId, 'o1@example.com')));
    expect(copies).toHaveLength(1);
  });
});
