/**
 * The provider seam and the IMAP provider's job handling without servers: which provider serves a grant, when the
 * sent copy is appended, that an API change of an imap grant records its push job in the same transaction (and a
 * hosted grant's records none), that a grant's jobs run in order, and that an unreachable server is retried with
 * back-off and given up in the end; a submission to an unreachable SMTP server is deferred.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import type { Core } from '../../../src/index.js';
import type { Job } from '../../../src/jobs/index.js';
import { createProviders, hostedProvider } from '../../../src/providers/index.js';
import { draftMime, GIVE_UP_MS, IMAP_PUSH_JOB, serverFilesSent } from '../../../src/imap/outgoing.js';
import { createSecretBox } from '../../../src/secrets/secret-box.js';
import { addSyncedMessageRow, createImapGrant } from '../../helpers/imap-grant.js';
import { createTestCore } from '../../helpers/service.js';

/** A port of this file's range where nothing listens. */
const CLOSED_PORT = 36250;

describe('the provider registry', () => {
  it('serves imap grants with the IMAP provider and every other kind as hosted', () => {
    const imap = { ...hostedProvider, name: 'imap' };
    const providers = createProviders([imap]);
    expect(providers.of({ provider: 'imap' })).toBe(imap);
    expect(providers.of({ provider: 'nylas' })).toBe(hostedProvider);
    expect(providers.of({ provider: 'something-else' })).toBe(hostedProvider);
    expect(hostedProvider.submitter).toBeUndefined();
  });
});

describe('whether the SMTP server files the sent copy itself', () => {
  it('follows the account setting when known, and known hosts (Gmail, Microsoft) otherwise', () => {
    expect(serverFilesSent({ serverFilesSent: true, smtpHost: 'mail.example.com' })).toBe(true);
    expect(serverFilesSent({ serverFilesSent: false, smtpHost: 'smtp.gmail.com' })).toBe(false);
    expect(serverFilesSent({ serverFilesSent: null, smtpHost: 'smtp.gmail.com' })).toBe(true);
    expect(serverFilesSent({ serverFilesSent: null, smtpHost: 'smtp.office365.com' })).toBe(true);
    expect(serverFilesSent({ serverFilesSent: null, smtpHost: 'mail.example.com' })).toBe(false);
    expect(serverFilesSent({ serverFilesSent: null, smtpHost: 'notgmail.com' })).toBe(false);
  });
});

describe('the MIME of a draft on the server', () => {
  it('carries the blind copies in a Bcc field (no line breaks or brackets get through), and is the composed message otherwise', () => {
    const raw = Buffer.from('Subject: x\r\n\r\nbody\r\n');
    expect(draftMime(raw, [])).toBe(raw);
    expect(draftMime(raw, [{ email: 'a@example.test' }, { email: 'b@example.test\r\nX-Evil: 1' }]).toString()).toBe(
      'Bcc: a@example.test, b@example.testX-Evil: 1\r\nSubject: x\r\n\r\nbody\r\n',
    );
  });
});

describe('the IMAP provider without a server', () => {
  let core: Core;
  let close: () => void;
  let now = Date.parse('2026-01-01T00:00:00Z');
  let grant: string;
  let appId: string;
  const secrets = createSecretBox('another test secret key, thirty-two characters or more');
  const pushJobs = async () =>
    (await core.deps.db.orm.select().from(tables.jobs).where(eq(tables.jobs.kind, IMAP_PUSH_JOB))) as Job[];

  beforeAll(async () => {
    ({ core, close } = await createTestCore({ secrets, clock: { now: () => new Date(now) } }));
    const [application] = await core.deps.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications)
      .where(eq(tables.applications.isDefault, true));
    appId = application!.id;
    grant = await createImapGrant(core, {
      applicationId: appId,
      email: 'dana@example.test',
      password: 'pw',
      imapPort: CLOSED_PORT,
      smtpPort: CLOSED_PORT,
      secrets,
    });
  });
  afterAll(() => close());

  it('records a push job with the change, ordered by grant; the second waits for the first', async () => {
    const principal = { applicationId: appId } as Parameters<Core['mail']['messages']['update']>[0];
    const first = await addSyncedMessageRow(core, { applicationId: appId, grantId: grant, uid: 7 });
    await core.mail.messages.update(principal, { grant_id: grant, message_id: first, unread: false });
    await core.mail.messages.update(principal, { grant_id: grant, message_id: first, folders: ['archive'] });
    const jobs = await pushJobs();
    expect(jobs.map((job) => [job.orderKey, job.payload])).toEqual([
      [`imap ${grant}`, { op: 'change', grant_id: grant, message_ids: [first], seen: true }],
      [`imap ${grant}`, { op: 'change', grant_id: grant, message_ids: [first], folders: ['archive'] }],
    ]);
    // Metadata alone changes nothing on the server.
    await core.mail.messages.update(principal, { grant_id: grant, message_id: first, metadata: { a: '1' } });
    expect(await pushJobs()).toHaveLength(2);

    const second = jobs[1]!;
    const waiting = await core.jobs.handlers[IMAP_PUSH_JOB]!(second, { owner: 'test', extendLease: async () => true });
    expect(waiting).toMatchObject({ type: 'retry', error: 'waiting for an earlier change of this mailbox' });
  });

  it('retries an unreachable server with back-off, and gives up after GIVE_UP_MS', async () => {
    const [first] = await pushJobs();
    const outcome = await core.jobs.handlers[IMAP_PUSH_JOB]!(
      { ...first!, attempts: 1 },
      { owner: 'test', extendLease: async () => true },
    );
    expect(outcome).toMatchObject({ type: 'retry' });
    expect((outcome as { at: Date }).at.getTime()).toBeGreaterThan(now);
    expect((outcome as { error: string }).error).toMatch(/could not be reached/);
    now += GIVE_UP_MS;
    expect(
      await core.jobs.handlers[IMAP_PUSH_JOB]!(
        { ...first!, attempts: 2 },
        { owner: 'test', extendLease: async () => true },
      ),
    ).toMatchObject({ type: 'give_up' });
  });

  it('a hosted grant records no push job', async () => {
    const before = (await pushJobs()).length;
    const hosted = core.deps.newId();
    const at = Math.floor(now / 1000);
    await core.deps.db.write(async (tx) => {
      await tx.insert(tables.grants).values({
        id: hosted,
        applicationId: appId,
        provider: 'nylas',
        email: 'hosted@example.test',
        createdAt: at,
        updatedAt: at,
      });
      await tx
        .insert(tables.folders)
        .values({ id: 'inbox', grantId: hosted, name: 'inbox', systemRole: 'inbox', createdAt: at, updatedAt: at });
      await tx.insert(tables.folders).values({
        id: 'archive',
        grantId: hosted,
        name: 'archive',
        systemRole: 'archive',
        createdAt: at,
        updatedAt: at,
      });
    });
    const message = await addSyncedMessageRow(core, { applicationId: appId, grantId: hosted, uid: 1 });
    const principal = { applicationId: appId } as Parameters<Core['mail']['messages']['update']>[0];
    await core.mail.messages.update(principal, {
      grant_id: hosted,
      message_id: message,
      unread: false,
      folders: ['archive'],
    });
    await core.mail.messages.destroy(principal, { grant_id: hosted, message_id: message });
    expect((await pushJobs()).length).toBe(before);
  });

  it('a submission to an SMTP server that cannot be reached is deferred (retried), not failed', async () => {
    const submitter = core.accounts.providers.of({ provider: 'imap' }).submitter!;
    const results = await submitter.submit(
      { grantId: grant, envelopeFrom: 'dana@example.test' } as never,
      [{ email: 'someone@example.test' }],
      Buffer.from('Subject: x\r\n\r\nhi\r\n'),
    );
    expect(results).toEqual([expect.objectContaining({ email: 'someone@example.test', outcome: 'deferred' })]);
  });
});
