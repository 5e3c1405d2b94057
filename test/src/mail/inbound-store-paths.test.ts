/**
 * The two ways inbound mail is stored give the same mailbox: the mail writer thread (an embedded database file) and
 * the mail store in a `durableWrite` transaction (a libSQL server, which has no file: here the protocol stand-in of
 * test/helpers/libsql-server.ts, through `@libsql/client`'s HTTP code). Replies join their thread, a message for two mailboxes (a
 * multipart/alternative) lands in both, and each copy
 * records its `message.created` event.
 */
import { join } from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, migrate, tables, type Database } from '../../../storage/index.js';
import { createCore, createLogger, loadConfig, randomId } from '../../../src/index.js';
import { fixedClock } from '../../helpers/clock.js';
import { fakeDns } from '../../helpers/dns.js';
import { startLibsqlServer } from '../../helpers/libsql-server.js';
import { tempDir, testSecretBox } from '../../helpers/service.js';
import { randomBytes } from 'node:crypto';

const MAILBOXES = ['one@paths.test', 'two@paths.test'];

function mail(headers: string[], body: string): Buffer {
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`);
}

async function deliverAll(db: Database) {
  const core = createCore({
    db,
    config: loadConfig({ AGENTPOST_DATABASE_URL: 'file:unused.db', AGENTPOST_LOG_LEVEL: 'silent' }),
    clock: fixedClock('2026-03-02T15:00:00Z'),
    newId: randomId,
    randomBytes,
    dns: fakeDns(),
    logger: createLogger('silent'),
    secrets: testSecretBox(),
  });
  await db.write(async (tx) => {
    await tx
      .insert(tables.applications)
      .values({ id: 'app', name: 'paths', plan: 'trial', createdAt: 1, updatedAt: 1 });
    for (const [index, email] of MAILBOXES.entries())
      await tx
        .insert(tables.grants)
        .values({ id: `grant_${index}`, applicationId: 'app', provider: 'nylas', email, createdAt: 1, updatedAt: 1 });
    // A rule that stars Cy's mail: its evaluations and the daily counters go in the messages' transactions on both paths.
    await tx.insert(tables.rules).values({
      id: 'star_cy',
      applicationId: 'app',
      name: 'star',
      conditions: [{ field: 'from.address', operator: 'is', value: 'cy@example.com' }],
      actions: [{ type: 'mark_as_starred' }],
      createdAt: 1,
      updatedAt: 1,
    });
    await tx.insert(tables.workspaces).values({
      id: 'workspace',
      applicationId: 'app',
      name: 'Default',
      isDefault: true,
      ruleIds: ['star_cy'],
      createdAt: 1,
      updatedAt: 1,
    });
  });
  const results = [];
  results.push(
    await core.mail.inbound.deliverInbound({
      rawMime: mail(
        ['From: Ann <ann@example.com>', 'To: one@paths.test', 'Subject: Hello', 'Message-ID: <p1@example.com>'],
        'First',
      ),
      envelope: { mailFrom: 'ann@example.com', rcptTo: ['one@paths.test'] },
    }),
  );
  results.push(
    ...(await Promise.all([
      core.mail.inbound.deliverInbound({
        rawMime: mail(
          [
            'From: Bob <bob@example.com>',
            'To: one@paths.test',
            'Subject: Re: Hello',
            'Message-ID: <p2@example.com>',
            'In-Reply-To: <p1@example.com>',
          ],
          'Second',
        ),
        envelope: { mailFrom: 'bob@example.com', rcptTo: ['one@paths.test'] },
      }),
      // A multipart/alternative, as mail clients send: the writer thread parses it itself too (simple-mime.ts).
      core.mail.inbound.deliverInbound({
        rawMime: mail(
          [
            'From: Cy <cy@example.com>',
            'To: one@paths.test, two@paths.test',
            'Subject: Both',
            'Message-ID: <p3@example.com>',
            'Content-Type: multipart/alternative; boundary="b3"',
          ],
          [
            '--b3',
            'Content-Type: text/plain; charset=utf-8',
            '',
            'Third',
            '--b3',
            'Content-Type: text/html; charset=utf-8',
            'Content-Transfer-Encoding: quoted-printable',
            '',
            '<p>Third =E2=9C=93</p>',
            '--b3--',
          ].join('\r\n'),
        ),
        envelope: { mailFrom: 'cy@example.com', rcptTo: ['one@paths.test', 'two@paths.test', 'nobody@elsewhere.test'] },
      }),
    ])),
  );
  // An invitation for both mailboxes: its job is stored in the message's own transaction, on either path.
  const ics = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'METHOD:REQUEST',
    'BEGIN:VEVENT',
    'UID:paths@example.com',
    'DTSTART:20260310T100000Z',
    'DTEND:20260310T110000Z',
    'ORGANIZER:mailto:ann@example.com',
    'END:VEVENT',
    'END:VCALENDAR',
  ].join('\r\n');
  const invitation = await core.mail.inbound.deliverInbound({
    rawMime: mail(
      [
        'From: Ann <ann@example.com>',
        'To: one@paths.test, two@paths.test',
        'Subject: Invitation',
        'Content-Type: multipart/alternative; boundary=a',
      ],
      [
        '--a',
        'Content-Type: text/plain',
        '',
        'Come',
        '--a',
        'Content-Type: text/calendar; method=REQUEST',
        '',
        ics,
        '--a--',
      ].join('\r\n'),
    ),
    envelope: { mailFrom: 'ann@example.com', rcptTo: MAILBOXES },
  });
  const jobs = await db.orm.select().from(tables.jobs).where(eq(tables.jobs.kind, 'mail.invitations'));
  const messages = await db.orm.select().from(tables.messages).orderBy(asc(tables.messages.seq));
  const threads = await db.orm.select().from(tables.threads);
  const events = await db.orm.select().from(tables.outboxEvents).where(eq(tables.outboxEvents.type, 'message.created'));
  await core.mail.inbound.flushEvaluations();
  const evaluations = await db.orm.select().from(tables.ruleEvaluations);
  const usage = await db.orm.select().from(tables.grantDailyUsage).orderBy(asc(tables.grantDailyUsage.grantId));
  await core.mail.inbound.close();
  return { results, messages, threads, events, invitation, jobs, evaluations, usage };
}

describe('inbound storage paths', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it('the writer thread and the event-loop transaction store the same mailboxes', async () => {
    const embedded = await createDb({ url: `file:${join(dir.path, 'embedded.db')}` });
    await migrate(embedded);
    const viaWriter = await deliverAll(embedded);

    const server = await startLibsqlServer({ file: join(dir.path, 'served.db') });
    const real = await createDb({ url: server.url });
    await migrate(real);
    const viaTransaction = await deliverAll(real);

    for (const outcome of [viaWriter, viaTransaction]) {
      expect(outcome.jobs).toHaveLength(1);
      expect(outcome.jobs[0]!.payload).toEqual({
        sender: 'ann@example.com',
        parts: [expect.stringMatching(/^[0-9a-f]{64}$/)],
        copies: outcome.invitation.deliveries.map((delivery) => ({
          grant_id: delivery.grantId,
          message_id: delivery.messageId,
        })),
      });
      outcome.messages = outcome.messages.filter((row) => row.subject !== 'Invitation');
      outcome.events = outcome.events.filter((event) => outcome.messages.some((row) => row.id === event.objectId));
      expect(outcome.results.map((result) => result.deliveries.length)).toEqual([1, 1, 2]);
      expect(outcome.results[2]!.rejected.map((rejection) => rejection.recipient)).toEqual(['nobody@elsewhere.test']);
      const [first, reply] = outcome.results.map((result) => result.deliveries[0]!);
      expect(reply!.threadId).toBe(first!.threadId);
      // What deliverInbound reports is what was stored.
      const reported = outcome.results.flatMap((result) =>
        result.deliveries.map((delivery) => [delivery.messageId, delivery.threadId, delivery.grantId]),
      );
      expect(outcome.messages.map((row) => [row.id, row.threadId, row.grantId]).sort()).toEqual(reported.sort());
      // One event per copy, carrying the copy's thread.
      expect(
        outcome.events.map((event) => [event.objectId, (event.payload as { thread_id: string }).thread_id]).sort(),
      ).toEqual(outcome.messages.map((row) => [row.id, row.threadId]).sort());
    }
    const shape = (outcome: typeof viaWriter) => ({
      // Sorted: the two concurrent deliveries may commit in either order.
      messages: outcome.messages
        .map((row) => ({
          grant: row.grantId,
          subject: row.subject,
          from: row.fromAddresses,
          folders: row.folders,
          unread: row.unread,
          starred: row.starred,
          date: row.date,
          body: row.body,
        }))
        .sort((a, b) => `${a.grant}${a.subject}`.localeCompare(`${b.grant}${b.subject}`)),
      threads: outcome.threads
        .map((row) => ({
          grant: row.grantId,
          subject: row.subject,
          count: row.messageCount,
          participants: row.participants,
          snippet: row.snippet,
        }))
        .sort((a, b) => `${a.grant}${a.subject}`.localeCompare(`${b.grant}${b.subject}`)),
    });
    expect(shape(viaWriter)).toEqual(shape(viaTransaction));
    for (const outcome of [viaWriter, viaTransaction]) {
      // Every delivery was evaluated in the inbox (the workspace has a rule), with the id of the copy it decided.
      const inbox = outcome.evaluations.filter((row) => row.stage === 'inbox_processing');
      expect(inbox).toHaveLength(6);
      const stored = new Set(
        outcome.results
          .concat(outcome.invitation)
          .flatMap((result) => result.deliveries.map((delivery) => delivery.messageId)),
      );
      for (const row of inbox) expect(stored.has(row.messageId!)).toBe(true);
      expect(
        inbox
          .filter((row) => row.matchedRuleIds.includes('star_cy'))
          .map((row) => row.grantId)
          .sort(),
      ).toEqual(['grant_0', 'grant_1']);
      // Local deliveries (no RCPT TO) are evaluated at smtp_rcpt here too.
      expect(outcome.evaluations.filter((row) => row.stage === 'smtp_rcpt')).toHaveLength(6);
      expect(outcome.usage.map((row) => [row.grantId, row.received])).toEqual([
        ['grant_0', 4],
        ['grant_1', 2],
      ]);
      expect(outcome.messages.filter((row) => row.starred).map((row) => row.subject)).toEqual(['Both', 'Both']);
      expect(outcome.messages.filter((row) => row.subject === 'Both').map((row) => row.body)).toEqual([
        '<p>Third ✓</p>',
        '<p>Third ✓</p>',
      ]);
    }
    await embedded.close();
    await real.close();
    await server.close();
  });
});
