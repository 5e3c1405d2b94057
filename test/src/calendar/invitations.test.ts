import { readFileSync } from 'node:fs';
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables, type GrantRow } from '../../../storage/index.js';
import type { Principal } from '../../../src/access.js';
import { createEventService, type EventService } from '../../../src/calendar/event-service.js';
import { createCalendarParser } from '../../../src/calendar/ical-bounded.js';
import type { InvitationSender, OutgoingInvitation } from '../../../src/calendar/invitation-message.js';
import type { Logger } from '../../../src/ports/index.js';
import { AppError } from '../../../src/errors.js';
import type { Core } from '../../../src/index.js';
import { fixedClock } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';
import { validateICalendar } from './ics-validator.js';
import { utc } from '../../helpers/calendar.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/ics/${name}`, import.meta.url), 'utf8');
const DOMAIN = 'invites.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const PEER = `peer@${DOMAIN}`;
const GOOGLE_UID = '6k0qg3a9v1lq2r7c8s4t5u6v7w@google.com';

/** Records what would be mailed. */
function recordingSender(): InvitationSender & { sent: OutgoingInvitation[] } {
  const sent: OutgoingInvitation[] = [];
  return { sent, send: async (invitation) => void sent.push(invitation) };
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('iTIP: invitations, updates, cancellations and replies', () => {
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let events: EventService;
  const sender = recordingSender();
  const logger = recordingLogger();
  const clock = fixedClock('2025-02-01T00:00:00Z');
  let principal: Principal;
  let agent: GrantRow;
  let peer: GrantRow;

  const grantRow = async (id: string) =>
    (await env.db.orm.query.grants.findFirst({ where: eq(tables.grants.id, id) }))!;
  const eventCount = async (grantId: string) =>
    (await env.db.orm.select({ total: count() }).from(tables.events).where(eq(tables.events.grantId, grantId)))[0]!
      .total;
  const window = { start: utc('2025-01-01T00:00:00Z'), end: utc('2025-12-31T00:00:00Z') };
  const listAll = (grantId: string, extra: Record<string, unknown> = {}) =>
    events.list(principal, { grant_id: grantId, calendar_id: 'primary', ...window, expand_recurring: true, ...extra });

  beforeAll(async () => {
    env = await createTestCore({ clock, logger });
    core = env.core;
    events = createEventService(core.deps, core.accounts.grants, core.calendar.calendars, sender);
    const applicationId = await core.accounts.applications.defaultApplicationId();
    principal = { applicationId, via: 'local' };
    await core.accounts.domains.ensureVerified(applicationId, [DOMAIN]);
    agent = await grantRow(
      (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: AGENT }, name: 'Agent' }))
        .grant.id,
    );
    peer = await grantRow(
      (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: PEER } })).grant.id,
    );
  });
  afterAll(() => env?.close());

  describe('a Google Calendar series lands on the primary calendar', () => {
    it('creates the series and its moved instance, with the organizer as organizer', async () => {
      const outcomes = await events.applyInvitation(agent, {
        sender: 'alice@gmail.example',
        ics: fixture('google-recurring-dst.ics'),
      });
      expect(outcomes.map((outcome) => outcome.action)).toEqual(['created', 'created']);
      const listed = await listAll(agent.id);
      expect(
        listed.data.map((event) => [
          event.title,
          event.when.object === 'timespan' ? new Date(event.when.start_time * 1000).toISOString() : null,
        ]),
      ).toEqual([
        ['Weekly sync', '2025-02-25T15:00:00.000Z'],
        ['Weekly sync', '2025-03-04T15:00:00.000Z'],
        ['Weekly sync', '2025-03-11T14:00:00.000Z'],
        ['Weekly sync (afternoon)', '2025-03-25T18:00:00.000Z'],
        ['Weekly sync', '2025-04-01T14:00:00.000Z'],
      ]);
      const master = (
        await events.list(principal, { grant_id: agent.id, calendar_id: 'primary', ...window, ical_uid: GOOGLE_UID })
      ).data;
      expect(master).toHaveLength(1);
      expect(master[0]).toMatchObject({
        ical_uid: GOOGLE_UID,
        organizer: { email: 'alice@gmail.example', name: 'Alice Example' },
        read_only: true,
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6;BYDAY=TU;WKST=SU', 'EXDATE:20250318T140000Z'],
        conferencing: { provider: 'Google Meet', details: { url: 'https://meet.google.com/abc-defg-hij' } },
      });
      expect(listed.data[3]).toMatchObject({
        id: `${master[0]!.id}_20250325T140000Z`,
        master_event_id: master[0]!.id,
        original_start_time: utc('2025-03-25T14:00:00Z'),
      });
      const outbox = await env.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.grantId, agent.id), eq(tables.outboxEvents.type, 'event.created')));
      expect(outbox.length).toBe(2);
    });

    it('answers with a REPLY to the organizer, and keeps the answer when the same revision comes again', async () => {
      const [master] = (
        await events.list(principal, { grant_id: agent.id, calendar_id: 'primary', ...window, ical_uid: GOOGLE_UID })
      ).data;
      const result = await events.sendRsvp(principal, {
        grant_id: agent.id,
        calendar_id: 'primary',
        event_id: master!.id,
        status: 'yes',
        comment: 'I will be there',
      });
      expect(result).toEqual({});
      const reply = sender.sent.at(-1)!;
      expect(reply).toMatchObject({
        method: 'REPLY',
        from: { email: AGENT, name: 'Agent' },
        to: [{ email: 'alice@gmail.example', name: 'Alice Example' }],
        contentType: 'text/calendar; method=REPLY; charset=UTF-8',
      });
      expect(reply.subject).toBe('Accepted: Weekly sync @ Tue, Feb 25, 2025, 10:00 – 10:30 (America/New_York)');
      expect(validateICalendar(reply.ics, 'REPLY')).toEqual([]);
      expect(reply.ics.replaceAll('\r\n ', '')).toContain('PARTSTAT=ACCEPTED:mailto:agent@invites.agentpost.localhost');
      expect(reply.ics).toContain(`UID:${GOOGLE_UID}`);

      const again = await events.applyInvitation(agent, {
        sender: 'alice@gmail.example',
        ics: fixture('google-recurring-dst.ics'),
      });
      expect(again.map((outcome) => outcome.action)).toEqual(['updated', 'updated']);
      expect(await eventCount(agent.id)).toBe(2);
      const found = await events.find(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: master!.id });
      expect(found.participants.find((participant) => participant.email === AGENT)).toMatchObject({
        status: 'yes',
        comment: 'I will be there',
      });
    });

    it('refuses an RSVP on one computed instance, and any change to shared fields of the invitation', async () => {
      const [master] = (
        await events.list(principal, { grant_id: agent.id, calendar_id: 'primary', ...window, ical_uid: GOOGLE_UID })
      ).data;
      const instance = await rejection(
        events.sendRsvp(principal, {
          grant_id: agent.id,
          calendar_id: 'primary',
          event_id: `${master!.id}_20250304T150000Z`,
          status: 'no',
        }),
      );
      expect(instance.message).toContain(`event_id=${master!.id}`);
      const update = await rejection(
        events.update(principal, {
          grant_id: agent.id,
          calendar_id: 'primary',
          event_id: master!.id,
          title: 'Mine now',
        }),
      );
      expect(update.message).toMatch(/^title: this is an invitation organized by alice@gmail\.example/);
      const local = await events.update(principal, {
        grant_id: agent.id,
        calendar_id: 'primary',
        event_id: master!.id,
        busy: false,
        metadata: { tag: 'sync' },
      });
      expect(local).toMatchObject({ busy: false, metadata: { tag: 'sync' } });
    });

    it('ignores a stale REQUEST and applies a newer one', async () => {
      const newer = fixture('google-recurring-dst.ics')
        .replace('SEQUENCE:0', 'SEQUENCE:4')
        .replace('SUMMARY:Weekly sync\r\n', 'SUMMARY:Weekly sync v2\r\n');
      expect((await events.applyInvitation(agent, { sender: 'alice@gmail.example', ics: newer }))[0]).toMatchObject({
        action: 'updated',
      });
      const stale = await events.applyInvitation(agent, {
        sender: 'alice@gmail.example',
        ics: fixture('google-recurring-dst.ics'),
      });
      expect(stale[0]).toMatchObject({ action: 'ignored', reason: 'stale REQUEST (older SEQUENCE)' });
      const [master] = (
        await events.list(principal, { grant_id: agent.id, calendar_id: 'primary', ...window, ical_uid: GOOGLE_UID })
      ).data;
      expect(master!.title).toBe('Weekly sync v2');
    });

    it('cancels one instance, ignores a CANCEL from someone else, then cancels the series', async () => {
      expect(
        await events.applyInvitation(agent, {
          sender: 'alice@gmail.example',
          ics: fixture('google-cancel-instance.ics'),
        }),
      ).toEqual([{ action: 'cancelled', eventId: expect.stringMatching(/_20250304T150000Z$/) }]);
      const visible = await listAll(agent.id);
      expect(visible.data.map((event) => event.original_start_time)).not.toContain(utc('2025-03-04T15:00:00Z'));
      const withCancelled = await listAll(agent.id, { show_cancelled: true });
      expect(
        withCancelled.data.find((event) => event.original_start_time === utc('2025-03-04T15:00:00Z')),
      ).toMatchObject({ status: 'cancelled' });

      const forged = fixture('google-cancel.ics').replace(
        'ORGANIZER;CN=Alice Example:mailto:alice@gmail.example',
        'ORGANIZER:mailto:mallory@evil.example',
      );
      expect((await events.applyInvitation(agent, { sender: 'mallory@evil.example', ics: forged }))[0]).toMatchObject({
        action: 'ignored',
      });
      expect((await listAll(agent.id)).data.length).toBe(4);

      expect(
        (await events.applyInvitation(agent, { sender: 'alice@gmail.example', ics: fixture('google-cancel.ics') }))[0],
      ).toMatchObject({ action: 'cancelled' });
      expect((await listAll(agent.id)).data).toEqual([]);
      expect(
        (await listAll(agent.id, { show_cancelled: true })).data.every((event) => event.status === 'cancelled'),
      ).toBe(true);
    });
  });

  it('reads an Outlook invitation with a Windows time zone onto the primary calendar', async () => {
    const [outcome] = await events.applyInvitation(agent, {
      sender: 'bob@contoso.example',
      ics: fixture('outlook-windows-tz.ics'),
    });
    expect(outcome).toMatchObject({ action: 'created' });
    const event = await events.find(principal, {
      grant_id: agent.id,
      calendar_id: 'primary',
      event_id: outcome!.eventId!,
    });
    expect(event.when).toEqual({
      object: 'timespan',
      start_time: utc('2025-11-03T17:00:00Z'),
      end_time: utc('2025-11-03T18:00:00Z'),
      start_timezone: 'America/Los_Angeles',
      end_timezone: 'America/Los_Angeles',
    });
    expect(event.resources).toEqual([{ email: 'room4@contoso.example', name: 'Conf Room 4' }]);
  });

  it('leaves the calendar untouched for malformed or hostile attachments', async () => {
    const before = await eventCount(agent.id);
    for (const ics of [
      'not a calendar at all',
      fixture('google-recurring-dst.ics').replace(
        'RRULE:FREQ=WEEKLY;WKST=SU;COUNT=6;BYDAY=TU',
        'RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
      ),
      `BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20250101T000000Z\r\nDESCRIPTION:${'A'.repeat(1_200_000)}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`,
    ]) {
      const outcomes = await events.applyInvitation(agent, { sender: 'alice@gmail.example', ics });
      expect(outcomes).toEqual([{ action: 'unreadable', reason: expect.any(String) }]);
    }
    expect(await eventCount(agent.id)).toBe(before);
    expect(
      logger.lines.filter((line) => line.message === 'calendar attachment unreadable: not readable iCalendar'),
    ).toHaveLength(3);
  });

  it('reports an invitation whose parse overruns its deadline as unreadable, and changes nothing', async () => {
    const parser = createCalendarParser({ timeoutMs: 1 });
    try {
      const bounded = createEventService(core.deps, core.accounts.grants, core.calendar.calendars, sender, {
        calendarParser: parser,
      });
      const before = await eventCount(agent.id);
      // Warm the parser's thread (its first parse also loads the codec, which the deadline does not count).
      await parser.parse('x');
      // A custom zone is matched against the tz database, which a fresh thread has yet to load: far beyond 1 ms.
      const outcomes = await bounded.applyInvitation(agent, {
        sender: 'grete@firma.example',
        ics: fixture('outlook-display-name-tz.ics'),
      });
      expect(outcomes).toEqual([{ action: 'unreadable', reason: 'reading the calendar took longer than 1 ms' }]);
      expect(await eventCount(agent.id)).toBe(before);
      expect(
        logger.lines.some((line) => line.message === 'calendar attachment unreadable: its parse was stopped'),
      ).toBe(true);
    } finally {
      await parser.close();
    }
  });

  it('refuses a hostile VTIMEZONE (MINUTELY from 1601, offset +9959) quickly, as not readable', async () => {
    const hostile = fixture('outlook-display-name-tz.ics')
      .replace('RRULE:FREQ=YEARLY;WKST=MO;INTERVAL=1;BYMONTH=10;BYDAY=-1SU', 'RRULE:FREQ=MINUTELY')
      .replace('TZOFFSETTO:+0100', 'TZOFFSETTO:+9959');
    const started = performance.now();
    const outcomes = await events.applyInvitation(agent, { sender: 'grete@firma.example', ics: hostile });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(outcomes).toEqual([{ action: 'unreadable', reason: expect.stringContaining('VTIMEZONE') }]);
  });

  it('answers a cancellation or reply for an unknown event from one read, without a write transaction', async () => {
    const writes = { count: 0 };
    const write = env.db.write.bind(env.db);
    const db: typeof env.db = Object.create(env.db);
    db.write = (work) => {
      writes.count++;
      return write(work);
    };
    const counting = { ...core.deps, db };
    const probe = createEventService(counting, core.accounts.grants, core.calendar.calendars, sender);
    const cancel = fixture('google-cancel.ics').replaceAll(GOOGLE_UID, 'never-seen@google.com');
    expect(await probe.applyInvitation(agent, { sender: 'alice@gmail.example', ics: cancel })).toEqual([
      { action: 'ignored', reason: 'CANCEL for an unknown event' },
    ]);
    const reply = fixture('google-reply.ics').replace(/^UID:.*$/m, 'UID:never-seen-either@google.com');
    expect(await probe.applyInvitation(agent, { sender: 'dana@gmail.example', ics: reply })).toEqual([
      { action: 'ignored', reason: 'REPLY for an event the grant does not organize' },
    ]);
    expect(writes.count).toBe(0);
  });

  describe('events the grant organizes', () => {
    let eventId: string;

    it('invites participants with a REQUEST, and records a REPLY from one of them', async () => {
      const created = await events.create(principal, {
        grant_id: agent.id,
        calendar_id: 'primary',
        title: 'Project kickoff',
        when: {
          start_time: utc('2025-06-10T13:00:00Z'),
          end_time: utc('2025-06-10T14:00:00Z'),
          start_timezone: 'Europe/London',
          end_timezone: 'Europe/London',
        },
        participants: [{ email: 'Dana@Gmail.example', name: 'Dana Person' }, { email: 'erin@icloud.example' }],
      });
      eventId = created.id;
      expect(created.organizer).toEqual({ email: AGENT, name: 'Agent' });
      expect(created.participants).toEqual([
        { email: 'dana@gmail.example', name: 'Dana Person', status: 'noreply' },
        { email: 'erin@icloud.example', status: 'noreply' },
      ]);
      const request = sender.sent.at(-1)!;
      expect(request).toMatchObject({
        method: 'REQUEST',
        eventId: created.id,
        icalUid: created.ical_uid,
        to: [{ email: 'dana@gmail.example', name: 'Dana Person' }, { email: 'erin@icloud.example' }],
      });
      expect(request.subject).toBe('Invitation: Project kickoff @ Tue, Jun 10, 2025, 14:00 – 15:00 (Europe/London)');
      expect(validateICalendar(request.ics, 'REQUEST')).toEqual([]);
      expect(request.ics).toContain('DTSTART;TZID=Europe/London:20250610T140000');

      const reply = fixture('google-reply.ics').replace('REPLACE-WITH-EVENT-UID', created.ical_uid);
      expect(await events.applyInvitation(agent, { sender: 'dana@gmail.example', ics: reply })).toEqual([
        { action: 'reply_recorded', eventId: created.id },
      ]);
      const after = await events.find(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: created.id });
      expect(after.participants[0]).toEqual({
        email: 'dana@gmail.example',
        name: 'Dana Person',
        status: 'yes',
        comment: 'Looking forward to it',
      });
      const updates = await env.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.objectId, created.id), eq(tables.outboxEvents.type, 'event.updated')));
      expect(updates).toHaveLength(1);
    });

    it('ignores and logs a REPLY from someone who is not a participant', async () => {
      const event = await events.find(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: eventId });
      const forged = fixture('google-reply.ics')
        .replace('REPLACE-WITH-EVENT-UID', event.ical_uid)
        .replace('mailto:dana@gmail.example', 'mailto:mallory@evil.example');
      expect(await events.applyInvitation(agent, { sender: 'mallory@evil.example', ics: forged })).toEqual([
        { action: 'ignored', reason: 'REPLY from someone who is not a participant' },
      ]);
      expect(
        logger.lines.find((line) => line.message === 'calendar REPLY from someone who is not a participant ignored')
          ?.fields,
      ).toMatchObject({ attendee: 'mallory@evil.example', uid: event.ical_uid });
      expect(
        (
          await events.find(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: eventId })
        ).participants.map((participant) => participant.email),
      ).toEqual(['dana@gmail.example', 'erin@icloud.example']);
    });

    it('refuses an RSVP from the organizer (400)', async () => {
      const error = await rejection(
        events.sendRsvp(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: eventId, status: 'yes' }),
      );
      expect(error.code).toBe('invalid_request');
      expect(error.message).toContain('you organize this event');
    });

    it('sends an update to the remaining participants and a CANCEL to the removed one', async () => {
      const sentBefore = sender.sent.length;
      const updated = await events.update(principal, {
        grant_id: agent.id,
        calendar_id: 'primary',
        event_id: eventId,
        location: 'Room 9',
        participants: [{ email: 'dana@gmail.example' }],
      });
      expect(updated.participants).toEqual([
        { email: 'dana@gmail.example', name: 'Dana Person', status: 'yes', comment: 'Looking forward to it' },
      ]);
      const [request, cancel] = sender.sent.slice(sentBefore);
      expect(request).toMatchObject({ method: 'REQUEST', to: [{ email: 'dana@gmail.example', name: 'Dana Person' }] });
      expect(request!.subject).toMatch(/^Updated invitation: /);
      expect(request!.ics).toContain('SEQUENCE:1');
      expect(cancel).toMatchObject({ method: 'CANCEL', to: [{ email: 'erin@icloud.example' }] });
      expect(validateICalendar(cancel!.ics, 'CANCEL')).toEqual([]);
    });

    it('sends nothing when notify_participants is false, and a CANCEL with a higher SEQUENCE on delete', async () => {
      const sentBefore = sender.sent.length;
      await events.update(principal, {
        grant_id: agent.id,
        calendar_id: 'primary',
        event_id: eventId,
        title: 'Quiet change',
        notify_participants: false,
      });
      expect(sender.sent.length).toBe(sentBefore);
      await events.destroy(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: eventId });
      const cancel = sender.sent.at(-1)!;
      expect(cancel).toMatchObject({
        method: 'CANCEL',
        subject: expect.stringMatching(/^Cancelled: Quiet change @ /),
        to: [{ email: 'dana@gmail.example', name: 'Dana Person' }],
      });
      expect(cancel.ics).toContain('SEQUENCE:3');
      expect(validateICalendar(cancel.ics, 'CANCEL')).toEqual([]);
    });
  });

  it('two agents schedule through iMIP alone: invite, accept, see the answer, cancel', async () => {
    const deliver = async (invitation: OutgoingInvitation, to: GrantRow) =>
      events.applyInvitation(to, { sender: invitation.from.email, ics: invitation.ics });
    const created = await events.create(principal, {
      grant_id: agent.id,
      calendar_id: 'primary',
      title: 'Agents meet',
      when: { start_time: utc('2025-07-01T09:00:00Z'), end_time: utc('2025-07-01T09:30:00Z') },
      participants: [{ email: PEER }],
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    });
    const [received] = await deliver(sender.sent.at(-1)!, peer);
    expect(received).toMatchObject({ action: 'created' });
    const copy = await events.find(principal, {
      grant_id: peer.id,
      calendar_id: 'primary',
      event_id: received!.eventId!,
    });
    expect(copy).toMatchObject({
      title: 'Agents meet',
      ical_uid: created.ical_uid,
      organizer: { email: AGENT, name: 'Agent' },
      read_only: true,
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    });

    await events.sendRsvp(principal, { grant_id: peer.id, calendar_id: 'primary', event_id: copy.id, status: 'yes' });
    expect(await deliver(sender.sent.at(-1)!, agent)).toEqual([{ action: 'reply_recorded', eventId: created.id }]);
    expect(
      (await events.find(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: created.id })).participants,
    ).toEqual([{ email: PEER, status: 'yes' }]);

    // One occurrence is cancelled, then the whole series.
    await events.destroy(principal, {
      grant_id: agent.id,
      calendar_id: 'primary',
      event_id: `${created.id}_20250708T090000Z`,
    });
    expect(await deliver(sender.sent.at(-1)!, peer)).toEqual([
      { action: 'cancelled', eventId: `${copy.id}_20250708T090000Z` },
    ]);
    const peerWindow = {
      grant_id: peer.id,
      calendar_id: 'primary',
      start: utc('2025-06-01T00:00:00Z'),
      end: utc('2025-08-01T00:00:00Z'),
      expand_recurring: true,
    };
    expect((await events.list(principal, peerWindow)).data.map((event) => event.id)).toEqual([
      `${copy.id}_20250701T090000Z`,
      `${copy.id}_20250715T090000Z`,
    ]);
    await events.destroy(principal, { grant_id: agent.id, calendar_id: 'primary', event_id: created.id });
    expect(await deliver(sender.sent.at(-1)!, peer)).toEqual([{ action: 'cancelled', eventId: copy.id }]);
    expect((await events.list(principal, peerWindow)).data).toEqual([]);
  });

  it('queues the iMIP REPLY to the organizer on the outbound mail path (the core wires its invitation sender)', async () => {
    const [outcome] = await core.calendar.events.applyInvitation(peer, {
      sender: 'bob@contoso.example',
      ics: fixture('outlook-windows-tz.ics'),
    });
    const result = await core.calendar.events.sendRsvp(principal, {
      grant_id: peer.id,
      calendar_id: 'primary',
      event_id: outcome!.eventId!,
      status: 'maybe',
    });
    expect(result.send_ics_error).toBeUndefined();
    const queued = await core.deps.db.orm
      .select()
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.email, 'bob@contoso.example'));
    expect(queued.map((row) => row.route)).toEqual(['remote']);
    expect(
      (
        await core.calendar.events.find(principal, {
          grant_id: peer.id,
          calendar_id: 'primary',
          event_id: outcome!.eventId!,
        })
      ).participants.find((participant) => participant.email === PEER),
    ).toMatchObject({ status: 'maybe' });
  });
});
