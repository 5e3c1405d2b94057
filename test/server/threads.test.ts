/**
 * Threads and drafts through the nylas SDK: a reply draft saved after the last received message is the thread's
 * latest_draft_or_message as a Draft, does not move latest_message_received_date, and never appears as a message.
 * Deleted messages and threads go to trash and are still found there, as in Nylas, until deleted for good.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

const MAILBOX = 'threads@threadcheck.agentpost.localhost';

describe('threads with a draft, through the nylas SDK', () => {
  let service: TestService;
  let grant: string;
  const clock = fixedClock('2026-03-30T10:00:00Z');

  beforeAll(async () => {
    service = await startTestService({ deps: { clock } });
    grant = await createMailbox(service, MAILBOX);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers the draft as the latest entry, keeps the received date, and lists no draft as a message', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'alice@example.com',
      [MAILBOX],
      `Message-ID: <first@example.com>\r\nSubject: Plans\r\nFrom: alice@example.com\r\nTo: ${MAILBOX}\r\n\r\nShall we meet?\r\n`,
    );
    expect(reply.code).toBe(250);
    const received = await eventually(async () => (await service.nylas.messages.list({ identifier: grant })).data[0]);
    const receivedAt = received.date;

    clock.advance(3_600_000);
    const draft = await service.nylas.drafts.create({
      identifier: grant,
      requestBody: {
        subject: 'Re: Plans',
        body: 'Yes, at noon.',
        to: [{ email: 'alice@example.com' }],
        replyToMessageId: received.id,
      },
    });
    expect(draft.data.threadId).toBe(received.threadId);

    const thread = (await service.nylas.threads.find({ identifier: grant, threadId: received.threadId! })).data;
    expect(thread.messageIds).toEqual([received.id]);
    expect(thread.draftIds).toEqual([draft.data.id]);
    expect(thread.hasDrafts).toBe(true);
    expect(thread.latestDraftOrMessage.object).toBe('draft');
    expect(thread.latestDraftOrMessage.id).toBe(draft.data.id);
    expect(thread.latestDraftOrMessage.body).toContain('Yes, at noon.');
    expect(thread.latestMessageReceivedDate).toBe(receivedAt);
    expect(thread.latestMessageSentDate).toBeUndefined();

    // The draft's row is never a message: not in the thread's messages, not in the mailbox's, not by id.
    const inThread = await service.nylas.messages.list({
      identifier: grant,
      queryParams: { threadId: received.threadId! },
    });
    expect(inThread.data.map((message) => message.id)).toEqual([received.id]);
    const all = await service.nylas.messages.list({ identifier: grant });
    expect(all.data.map((message) => message.id)).toEqual([received.id]);
    const inDrafts = await service.nylas.messages.list({ identifier: grant, queryParams: { in: ['drafts'] } });
    expect(inDrafts.data).toEqual([]);
    const rowId = (
      await service.core.deps.db.client.execute({
        sql: 'select message_id from draft_details where id = ?',
        args: [draft.data.id],
      })
    ).rows[0]!.message_id as string;
    expect((await sdkError(service.nylas.messages.find({ identifier: grant, messageId: rowId }))).statusCode).toBe(404);

    // Listed threads say the same; an update of the draft keeps it the latest entry.
    clock.advance(60_000);
    await service.nylas.drafts.update({
      identifier: grant,
      draftId: draft.data.id,
      requestBody: { body: 'Yes, at one.' },
    });
    const listed = (await service.nylas.threads.list({ identifier: grant })).data.find(
      (entry) => entry.id === received.threadId,
    )!;
    expect(listed.latestDraftOrMessage.object).toBe('draft');
    expect(listed.latestDraftOrMessage.id).toBe(draft.data.id);
    expect(listed.latestDraftOrMessage.body).toContain('Yes, at one.');
    expect(listed.latestMessageReceivedDate).toBe(receivedAt);

    // Once the draft is deleted, the latest entry is the received message again.
    await service.nylas.drafts.destroy({ identifier: grant, draftId: draft.data.id });
    const after = (await service.nylas.threads.find({ identifier: grant, threadId: received.threadId! })).data;
    expect(after.latestDraftOrMessage.object).toBe('message');
    expect(after.latestDraftOrMessage.id).toBe(received.id);
    expect(after.draftIds).toEqual([]);
  });
  /** Delivers one message and returns it once listed. */
  async function receive(subject: string) {
    const reply = await sendRaw(
      service.smtpPort,
      'bob@example.com',
      [MAILBOX],
      `Message-ID: <${subject}@example.com>\r\nSubject: ${subject}\r\nFrom: bob@example.com\r\nTo: ${MAILBOX}\r\n\r\nHi\r\n`,
    );
    expect(reply.code).toBe(250);
    return eventually(
      async () => (await service.nylas.messages.list({ identifier: grant, queryParams: { subject } })).data[0],
    );
  }

  it('finds a thread by the text and addresses of its messages, never by its draft', async () => {
    const message = await receive('Searchable thread');
    await service.nylas.drafts.create({
      identifier: grant,
      requestBody: {
        subject: 'Re: Searchable thread',
        body: 'zebrafinch quokka',
        to: [{ email: 'draftonly@example.net' }],
        replyToMessageId: message.id,
      },
    });
    const byDraftText = await service.nylas.threads.list({
      identifier: grant,
      queryParams: { searchQueryNative: 'quokka' },
    });
    expect(byDraftText.data).toEqual([]);
    const byDraftAddress = await service.nylas.threads.list({
      identifier: grant,
      queryParams: { to: ['draftonly@example.net'] },
    });
    expect(byDraftAddress.data).toEqual([]);
    const bySubject = await service.nylas.threads.list({
      identifier: grant,
      queryParams: { searchQueryNative: 'Searchable' },
    });
    expect(bySubject.data.map((thread) => thread.id)).toEqual([message.threadId]);
  });

  it('a deleted message is in trash and still found; deleted again, it is gone', async () => {
    const message = await receive('Trash me');
    await service.nylas.messages.destroy({ identifier: grant, messageId: message.id });
    const found = (await service.nylas.messages.find({ identifier: grant, messageId: message.id })).data;
    expect(found.folders).toEqual(['trash']);
    const trash = await service.nylas.messages.list({ identifier: grant, queryParams: { in: ['trash'] } });
    expect(trash.data.map((entry) => entry.id)).toContain(message.id);
    const inbox = await service.nylas.messages.list({ identifier: grant, queryParams: { in: ['inbox'] } });
    expect(inbox.data.map((entry) => entry.id)).not.toContain(message.id);
    await service.nylas.messages.destroy({ identifier: grant, messageId: message.id });
    expect((await sdkError(service.nylas.messages.find({ identifier: grant, messageId: message.id }))).statusCode).toBe(
      404,
    );
  });

  it('a deleted thread is in trash and still found; deleted again, it is gone with its drafts', async () => {
    const message = await receive('Trash the thread');
    const draft = await service.nylas.drafts.create({
      identifier: grant,
      requestBody: {
        subject: 'Re: Trash the thread',
        body: 'Unsent',
        to: [{ email: 'bob@example.com' }],
        replyToMessageId: message.id,
      },
    });
    await service.nylas.threads.destroy({ identifier: grant, threadId: message.threadId! });
    const found = (await service.nylas.threads.find({ identifier: grant, threadId: message.threadId! })).data;
    expect(found.folders).toContain('trash');
    expect(found.messageIds).toEqual([message.id]);
    expect(found.draftIds).toEqual([draft.data.id]);
    expect((await service.nylas.messages.find({ identifier: grant, messageId: message.id })).data.folders).toEqual([
      'trash',
    ]);
    expect((await service.nylas.drafts.find({ identifier: grant, draftId: draft.data.id })).data.folders).toEqual([
      'drafts',
    ]);
    await service.nylas.threads.destroy({ identifier: grant, threadId: message.threadId! });
    expect(
      (await sdkError(service.nylas.threads.find({ identifier: grant, threadId: message.threadId! }))).statusCode,
    ).toBe(404);
    expect((await sdkError(service.nylas.messages.find({ identifier: grant, messageId: message.id }))).statusCode).toBe(
      404,
    );
    expect((await sdkError(service.nylas.drafts.find({ identifier: grant, draftId: draft.data.id }))).statusCode).toBe(
      404,
    );
    // Only the message is announced as deleted: the draft's row goes silently (a draft is never a message).
    const deleted = (
      await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(eq(tables.outboxEvents.type, 'message.deleted'))
    ).filter((event) => (event.payload as { thread_id?: string }).thread_id === message.threadId);
    expect(deleted.map((event) => event.objectId)).toEqual([message.id]);
  });
});
