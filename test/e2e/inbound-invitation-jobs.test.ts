/**
 * Invitations received by SMTP are applied after the 250, by a durable job stored with the message: the answer to
 * the sender waits only for the commit, the job's outcome is recorded once per copy, a job that runs again (a crash,
 * a lapsed lease) applies nothing twice, a cancellation for an unknown event is recorded as ignored, and a job that
 * keeps failing is recorded `unreadable` and never tried again.
 */
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { createAfterDelivery, INVITATIONS_JOB, MAX_INVITATION_ATTEMPTS } from '../../src/mail/after-delivery.js';
import type { Job } from '../../src/jobs/index.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { imipMessage } from '../helpers/mime.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'invites.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const ORGANIZER = 'alice@gmail.example';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/ics/${name}`, import.meta.url), 'utf8');

/** An iMIP message from the organizer to the agent. */
const imip = (ics: string, method: string, subject: string) =>
  imipMessage({ from: `Alice Example <${ORGANIZER}>`, to: AGENT, subject, ics, method });

describe('invitations received by mail are applied by a durable job after the 250', () => {
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, AGENT);
  });
  afterAll(async () => {
    await service?.close();
  });

  const outcomeOf = async (messageId: string) =>
    (
      await service.core.deps.db.orm
        .select()
        .from(tables.invitationOutcomes)
        .where(eq(tables.invitationOutcomes.messageId, messageId))
    )[0];
  const storedId = (reply: { text: string }) => /stored as (\S+)/.exec(reply.text)![1]!;

  it('answers 250 with the message stored and the job queued in its transaction, then applies it once', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      ORGANIZER,
      [AGENT],
      imip(fixture('google-recurring-dst.ics'), 'REQUEST', 'Invitation: Weekly sync'),
    );
    expect(reply.code).toBe(250);
    const messageId = storedId(reply);

    const outcome = await eventually(() => outcomeOf(messageId));
    expect(outcome).toMatchObject({ grantId, status: 'applied' });
    expect(outcome.detail[0]).toMatchObject({ action: 'created', eventId: expect.any(String) });
    const eventId = outcome.detail[0]!.eventId!;
    const event = await service.nylas.events.find({
      identifier: grantId,
      eventId,
      queryParams: { calendarId: 'primary' },
    });
    expect(event.data).toMatchObject({ title: 'Weekly sync', organizer: { email: ORGANIZER } });
    // Done jobs are deleted.
    const left = await service.core.deps.db.orm.select().from(tables.jobs).where(eq(tables.jobs.kind, INVITATIONS_JOB));
    expect(left).toEqual([]);

    // The same job run again (as after a crash before its completion was recorded) applies nothing twice.
    const job = { id: 'again', kind: INVITATIONS_JOB, attempts: 2, payload: {}, lastError: null } as unknown as Job;
    const parsedCopy = await service.core.deps.db.orm
      .select()
      .from(tables.attachments)
      .where(eq(tables.attachments.messageId, messageId));
    job.payload = {
      sender: ORGANIZER,
      parts: parsedCopy.filter((row) => /calendar/.test(row.contentType)).map((row) => row.blobHash),
      copies: [{ grant_id: grantId, message_id: messageId }],
    };
    const eventIds = async () =>
      (await service.core.deps.db.orm.select().from(tables.events).where(eq(tables.events.grantId, grantId)))
        .map((row) => row.id)
        .sort();
    const before = await eventIds();
    expect(before.length).toBe(outcome.detail.length);
    await service.core.jobs.handlers[INVITATIONS_JOB]!(job, { owner: 'test', extendLease: async () => true });
    expect(await eventIds()).toEqual(before);
    expect(await outcomeOf(messageId)).toEqual(outcome);
    // Even when the crash came after the calendar changed but before the outcome was recorded.
    await service.core.deps.db.write((tx) =>
      tx.delete(tables.invitationOutcomes).where(eq(tables.invitationOutcomes.messageId, messageId)),
    );
    await service.core.jobs.handlers[INVITATIONS_JOB]!(job, { owner: 'test', extendLease: async () => true });
    expect(await eventIds()).toEqual(before);
    expect((await outcomeOf(messageId))?.status).toBeDefined();
  });

  it('records a cancellation for an event it never saw as ignored', async () => {
    const unknown = fixture('google-cancel.ics').replace(
      '6k0qg3a9v1lq2r7c8s4t5u6v7w@google.com',
      'never-seen-before@google.com',
    );
    const reply = await sendRaw(
      service.smtpPort,
      ORGANIZER,
      [AGENT],
      imip(unknown, 'CANCEL', 'Cancelled: something else'),
    );
    expect(reply.code).toBe(250);
    const outcome = await eventually(() => outcomeOf(storedId(reply)));
    expect(outcome.status).toBe('ignored');
    expect(outcome.detail[0]).toMatchObject({ action: 'ignored', reason: expect.any(String) });
  });

  it('retries a job whose handling fails, and after the last attempt records the copy unreadable without trying again', async () => {
    const { deps } = service.core;
    let calls = 0;
    const failing = createAfterDelivery(deps, {
      contacts: { collect: async () => undefined } as never,
      applyInvitation: async () => {
        calls++;
        throw new Error('the calendar is unavailable');
      },
    });
    const reply = await sendRaw(
      service.smtpPort,
      ORGANIZER,
      [AGENT],
      'From: x@example.com\r\nTo: agent@invites.agentpost.localhost\r\nSubject: plain\r\n\r\nplain\r\n',
    );
    const messageId = storedId(reply);
    const job = (attempts: number) =>
      ({
        id: `j${attempts}`,
        kind: INVITATIONS_JOB,
        attempts,
        lastError: null,
        payload: { sender: ORGANIZER, parts: [], copies: [{ grant_id: grantId, message_id: messageId }] },
      }) as unknown as Job;
    const handler = failing.handlers[INVITATIONS_JOB]!;
    // No parts to read: nothing applied, recorded as ignored. With a part, a failure throws so the worker retries.
    const hash = (await deps.db.orm.select().from(tables.attachments).limit(1))[0]!.blobHash;
    const withPart = (attempts: number) =>
      ({ ...job(attempts), payload: { ...job(attempts).payload, parts: [hash] } }) as Job;
    await expect(handler(withPart(1), { owner: 'test', extendLease: async () => true })).rejects.toThrow(
      'the calendar is unavailable',
    );
    expect(await outcomeOf(messageId)).toBeUndefined();
    expect(calls).toBe(1);
    await handler(withPart(MAX_INVITATION_ATTEMPTS + 1), { owner: 'test', extendLease: async () => true });
    expect(calls).toBe(1);
    expect(await outcomeOf(messageId)).toMatchObject({
      status: 'unreadable',
      detail: [{ action: 'unreadable', reason: expect.stringContaining(`${MAX_INVITATION_ATTEMPTS} attempts`) }],
    });
  });
});
