import { readFileSync } from 'node:fs';
import { type Event } from 'nylas';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { validateICalendar } from '../src/calendar/ics-validator.js';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';
import { utc } from '../helpers/calendar.js';

const DOMAIN = 'events.agentpost.localhost';
const EMAIL = `planner@${DOMAIN}`;
const startOf = (event: Event) => {
  const when = event.when as { object: string; startTime?: number; time?: number; date?: string; startDate?: string };
  return when.startTime ?? when.time ?? when.date ?? when.startDate;
};

describe('events through the nylas SDK', () => {
  let service: TestService;
  let grantId: string;
  const window = { start: String(utc('2025-01-01T00:00:00Z')), end: String(utc('2026-01-01T00:00:00Z')) };

  beforeAll(async () => {
    service = await startTestService();
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Events', domain_address: DOMAIN },
    });
    grantId = (
      await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email: EMAIL } } })
    ).data.id;
    await service.nylas.calendars.update({
      identifier: grantId,
      calendarId: 'primary',
      requestBody: { timezone: 'America/New_York' },
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('create, find, update, delete', () => {
    let meeting: Event;

    it('creates a meeting with participants, conferencing, reminders and metadata', async () => {
      const created = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary', notifyParticipants: false },
        requestBody: {
          title: 'Budget review',
          description: 'Numbers for Q3',
          location: 'Room 1',
          when: {
            startTime: utc('2025-06-10T14:00:00Z'),
            endTime: utc('2025-06-10T15:00:00Z'),
            startTimezone: 'Europe/Paris',
            endTimezone: 'Europe/Paris',
          },
          participants: [
            { email: 'cfo@corp.example', name: 'CFO', status: 'noreply' },
            { email: 'ana@corp.example' } as never,
          ],
          conferencing: { provider: 'Zoom Meeting', details: { url: 'https://zoom.us/j/42', meetingCode: '42' } },
          reminders: { useDefault: false, overrides: [{ reminderMinutes: 10, reminderMethod: 'popup' }] },
          metadata: { project: 'q3', key5: 'finance' },
          visibility: 'private',
          busy: true,
        },
      });
      meeting = created.data;
      const primaryId = (await service.nylas.calendars.find({ identifier: grantId, calendarId: 'primary' })).data.id;
      expect(meeting).toMatchObject({
        grantId,
        calendarId: primaryId,
        object: 'event',
        title: 'Budget review',
        description: 'Numbers for Q3',
        location: 'Room 1',
        when: {
          object: 'timespan',
          startTime: utc('2025-06-10T14:00:00Z'),
          endTime: utc('2025-06-10T15:00:00Z'),
          startTimezone: 'Europe/Paris',
          endTimezone: 'Europe/Paris',
        },
        participants: [
          { email: 'cfo@corp.example', name: 'CFO', status: 'noreply' },
          { email: 'ana@corp.example', status: 'noreply' },
        ],
        organizer: { email: EMAIL },
        status: 'confirmed',
        busy: true,
        readOnly: false,
        visibility: 'private',
        conferencing: { provider: 'Zoom Meeting', details: { url: 'https://zoom.us/j/42', meetingCode: '42' } },
        reminders: { useDefault: false, overrides: [{ reminderMinutes: 10, reminderMethod: 'popup' }] },
        metadata: { project: 'q3', key5: 'finance' },
        icalUid: `${meeting.id}@${DOMAIN}`,
      });
      expect(
        (
          await service.nylas.events.find({
            identifier: grantId,
            eventId: meeting.id,
            queryParams: { calendarId: 'primary' },
          })
        ).data,
      ).toEqual(meeting);
    });

    it("accepts the other three `when` shapes, with the calendar's zone as default", async () => {
      const moment = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: { title: 'Launch', when: { time: utc('2025-06-11T12:00:00Z') } as never },
      });
      expect(moment.data.when).toEqual({
        object: 'time',
        time: utc('2025-06-11T12:00:00Z'),
        timezone: 'America/New_York',
      });
      const day = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: { title: 'Holiday', when: { date: '2025-07-04' } },
      });
      expect(day.data.when).toEqual({ object: 'date', date: '2025-07-04' });
      const span = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: { title: 'Offsite', when: { startDate: '2025-08-01', endDate: '2025-08-03' } },
      });
      expect(span.data.when).toEqual({ object: 'datespan', startDate: '2025-08-01', endDate: '2025-08-03' });
      const listed = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId: 'primary', ...window },
      });
      expect(listed.data.map((event) => event.title)).toEqual(['Budget review', 'Launch', 'Holiday', 'Offsite']);
    });

    it('updates given fields only; participants keep their answers', async () => {
      await service.core.deps.db.write((tx) =>
        tx
          .update(tables.events)
          .set({
            participants: [
              { email: 'cfo@corp.example', name: 'CFO', status: 'yes' },
              { email: 'ana@corp.example', status: 'noreply' },
            ],
          })
          .where(eq(tables.events.id, meeting.id)),
      );
      const updated = await service.nylas.events.update({
        identifier: grantId,
        eventId: meeting.id,
        queryParams: { calendarId: 'primary', notifyParticipants: false },
        requestBody: {
          location: 'Room 2',
          participants: [{ email: 'cfo@corp.example' }, { email: 'ben@corp.example' }],
        },
      });
      expect(updated.data).toMatchObject({
        title: 'Budget review',
        location: 'Room 2',
        participants: [
          { email: 'cfo@corp.example', name: 'CFO', status: 'yes' },
          { email: 'ben@corp.example', status: 'noreply' },
        ],
      });
      expect(updated.data.updatedAt).toBeGreaterThanOrEqual(meeting.updatedAt!);
    });

    it('writes event.created, event.updated and event.deleted outbox events', async () => {
      await service.nylas.events.destroy({
        identifier: grantId,
        eventId: meeting.id,
        queryParams: { calendarId: 'primary' },
      });
      expect(
        (
          await sdkError(
            service.nylas.events.find({
              identifier: grantId,
              eventId: meeting.id,
              queryParams: { calendarId: 'primary' },
            }),
          )
        ).statusCode,
      ).toBe(404);
      const outbox = await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.objectId, meeting.id)))
        .orderBy(tables.outboxEvents.seq);
      expect(outbox.map((row) => row.type)).toEqual(['event.created', 'event.updated', 'event.deleted']);
      expect(outbox[2]!.payload).toMatchObject({ id: meeting.id, object: 'event', location: 'Room 2' });
    });

    it('refuses an RSVP on an event the grant organizes', async () => {
      const own = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: {
          title: 'Mine',
          when: { startTime: utc('2025-09-01T10:00:00Z'), endTime: utc('2025-09-01T11:00:00Z') },
        },
      });
      const error = await sdkError(
        service.nylas.events.sendRsvp({
          identifier: grantId,
          eventId: own.data.id,
          queryParams: { calendarId: 'primary' },
          requestBody: { status: 'yes' },
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toContain('you organize this event');
    });
  });

  it('answers an invitation received by mail with send-rsvp (saved; the reply is queued for the organizer)', async () => {
    const grant = (await service.core.deps.db.orm.query.grants.findFirst({ where: eq(tables.grants.id, grantId) }))!;
    const ics = readFileSync(new URL('../fixtures/ics/outlook-windows-tz.ics', import.meta.url), 'utf8')
      .replaceAll('agent@invites.agentpost.localhost', EMAIL)
      .replaceAll('agent@invi\r\n tes.agentpost.localhost', EMAIL);
    const [outcome] = await service.core.calendar.events.applyInvitation(grant, { sender: 'bob@contoso.example', ics });
    expect(outcome).toMatchObject({ action: 'created' });
    const invite = await service.nylas.events.find({
      identifier: grantId,
      eventId: outcome!.eventId!,
      queryParams: { calendarId: 'primary' },
    });
    expect(invite.data).toMatchObject({
      readOnly: true,
      organizer: { email: 'bob@contoso.example', name: 'Bob Builder' },
      title: 'Quarterly planning',
    });
    const answered = await service.nylas.events.sendRsvp({
      identifier: grantId,
      eventId: invite.data.id,
      queryParams: { calendarId: 'primary' },
      requestBody: { status: 'no' },
    });
    expect((answered as unknown as { data: { sendIcsError?: { type: string } } }).data.sendIcsError).toBeUndefined();
    const queued = await service.core.deps.db.orm
      .select()
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.email, 'bob@contoso.example'));
    expect(queued).toHaveLength(1);
    const after = await service.nylas.events.find({
      identifier: grantId,
      eventId: invite.data.id,
      queryParams: { calendarId: 'primary' },
    });
    expect(after.data.participants.find((participant) => participant.email === EMAIL)?.status).toBe('no');
    const wrong = await sdkError(
      service.nylas.events.sendRsvp({
        identifier: grantId,
        eventId: invite.data.id,
        queryParams: { calendarId: 'primary' },
        requestBody: { status: 'perhaps' as never },
      }),
    );
    expect(wrong.statusCode).toBe(400);
    expect(wrong.message).toContain('status');
  });

  describe('bad input', () => {
    const create = (requestBody: Record<string, unknown>) =>
      sdkError(
        service.nylas.events.create({
          identifier: grantId,
          queryParams: { calendarId: 'primary' },
          requestBody: { title: 'x', ...requestBody } as never,
        }),
      );

    it.each([
      [
        'an end before the start',
        { when: { startTime: 2_000, endTime: 1_000 } },
        'when.end_time: the event ends (1000) before it starts (2000)',
      ],
      [
        'an unknown time zone',
        { when: { startTime: 1_000, endTime: 2_000, startTimezone: 'Mars/Olympus_Mons', endTimezone: 'UTC' } },
        'when.start_timezone: "Mars/Olympus_Mons" is not an IANA time zone',
      ],
      ['no `when`', {}, 'when:'],
      [
        'a rule that never matches',
        { when: { startTime: 1_000, endTime: 2_000 }, recurrence: ['RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31'] },
        'recurrence: RRULE',
      ],
      [
        'a minutely rule',
        { when: { startTime: 1_000, endTime: 2_000 }, recurrence: ['RRULE:FREQ=MINUTELY'] },
        'recurrence: RRULE FREQ=MINUTELY is not supported',
      ],
      [
        'conferencing autocreate',
        { when: { startTime: 1_000, endTime: 2_000 }, conferencing: { provider: 'Google Meet', autocreate: {} } },
        'conferencing: this service cannot create meetings',
      ],
      [
        'a participant without an address',
        { when: { startTime: 1_000, endTime: 2_000 }, participants: [{ name: 'Nobody' }] },
        'participants.0.email',
      ],
    ])('rejects %s (400, naming the field)', async (_name, body, words) => {
      const error = await create(body);
      expect(error.statusCode).toBe(400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toContain(words);
    });

    it('requires calendar_id to list, find and create', async () => {
      const listing = await request(service.url, 'GET', `/v3/grants/${grantId}/events`, { key: service.apiKey });
      expect(listing.status).toBe(400);
      expect(listing.body.error.message).toContain('calendar_id');
      const creating = await request(service.url, 'POST', `/v3/grants/${grantId}/events`, {
        key: service.apiKey,
        body: { when: { start_time: 1, end_time: 2 } },
      });
      expect(creating.status).toBe(400);
      expect(creating.body.error.message).toContain('calendar_id');
      expect(
        (
          await request(service.url, 'GET', `/v3/grants/${grantId}/events?calendar_id=nope&start=0&end=10`, {
            key: service.apiKey,
          })
        ).status,
      ).toBe(404);
    });

    it('refuses a window that ends before it starts', async () => {
      const error = await sdkError(
        service.nylas.events.list({
          identifier: grantId,
          queryParams: { calendarId: 'primary', start: '2000', end: '1000' },
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toContain('end:');
    });
  });

  describe('recurring events', () => {
    let series: Event;

    it('expands a weekly series across the DST change into instances with their own ids', async () => {
      series = (
        await service.nylas.events.create({
          identifier: grantId,
          queryParams: { calendarId: 'primary' },
          requestBody: {
            title: 'Standup',
            when: {
              startTime: utc('2025-03-03T14:00:00Z'),
              endTime: utc('2025-03-03T14:15:00Z'),
              startTimezone: 'America/New_York',
              endTimezone: 'America/New_York',
            },
            recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=5', 'EXDATE:20250317T130000Z'],
          },
        })
      ).data;
      expect(series.recurrence).toEqual(['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=5', 'EXDATE:20250317T130000Z']);
      const query = {
        calendarId: 'primary',
        start: String(utc('2025-03-01T00:00:00Z')),
        end: String(utc('2025-04-30T00:00:00Z')),
        expandRecurring: true,
        title: 'standup',
      };
      const expanded = await service.nylas.events.list({ identifier: grantId, queryParams: query });
      expect(expanded.data.map((event) => [event.id, startOf(event)])).toEqual([
        [`${series.id}_20250303T140000Z`, utc('2025-03-03T14:00:00Z')],
        [`${series.id}_20250310T130000Z`, utc('2025-03-10T13:00:00Z')],
        [`${series.id}_20250324T130000Z`, utc('2025-03-24T13:00:00Z')],
        [`${series.id}_20250331T130000Z`, utc('2025-03-31T13:00:00Z')],
      ]);
      expect(expanded.data[1]).toMatchObject({
        masterEventId: series.id,
        originalStartTime: utc('2025-03-10T13:00:00Z'),
        icalUid: series.icalUid,
        title: 'Standup',
      });
      expect(expanded.data[1]!.recurrence).toBeUndefined();
      const collapsed = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { ...query, expandRecurring: false },
      });
      expect(collapsed.data.map((event) => event.id)).toEqual([series.id]);
    });

    it('finds, changes and deletes single instances', async () => {
      const instanceId = `${series.id}_20250324T130000Z`;
      const found = await service.nylas.events.find({
        identifier: grantId,
        eventId: instanceId,
        queryParams: { calendarId: 'primary' },
      });
      expect(found.data).toMatchObject({
        id: instanceId,
        masterEventId: series.id,
        when: { startTime: utc('2025-03-24T13:00:00Z') },
      });
      expect(
        (
          await sdkError(
            service.nylas.events.find({
              identifier: grantId,
              eventId: `${series.id}_20250325T130000Z`,
              queryParams: { calendarId: 'primary' },
            }),
          )
        ).statusCode,
      ).toBe(404);

      const moved = await service.nylas.events.update({
        identifier: grantId,
        eventId: instanceId,
        queryParams: { calendarId: 'primary' },
        requestBody: {
          title: 'Standup (late)',
          when: { startTime: utc('2025-03-24T16:00:00Z'), endTime: utc('2025-03-24T16:15:00Z') },
        },
      });
      expect(moved.data).toMatchObject({
        id: instanceId,
        title: 'Standup (late)',
        masterEventId: series.id,
        originalStartTime: utc('2025-03-24T13:00:00Z'),
      });
      await service.nylas.events.destroy({
        identifier: grantId,
        eventId: `${series.id}_20250310T130000Z`,
        queryParams: { calendarId: 'primary' },
      });

      const expanded = await service.nylas.events.list({
        identifier: grantId,
        queryParams: {
          calendarId: 'primary',
          start: String(utc('2025-03-01T00:00:00Z')),
          end: String(utc('2025-04-30T00:00:00Z')),
          expandRecurring: true,
          masterEventId: series.id,
        },
      });
      expect(expanded.data.map((event) => [event.title, startOf(event)])).toEqual([
        ['Standup', utc('2025-03-03T14:00:00Z')],
        ['Standup (late)', utc('2025-03-24T16:00:00Z')],
        ['Standup', utc('2025-03-31T13:00:00Z')],
      ]);
      const master = await service.nylas.events.find({
        identifier: grantId,
        eventId: series.id,
        queryParams: { calendarId: 'primary' },
      });
      expect(master.data.recurrence).toEqual([
        'RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=5',
        'EXDATE:20250317T130000Z',
        'EXDATE:20250310T130000Z',
      ]);
    });

    it('caps an unbounded rule expanded over the widest window, paging through the instances; refuses wider windows', async () => {
      const daily = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: {
          title: 'Forever',
          when: { startTime: utc('2000-01-01T09:00:00Z'), endTime: utc('2000-01-01T09:05:00Z') },
          recurrence: ['RRULE:FREQ=DAILY'],
        },
      });
      const hourly = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: {
          title: 'Every hour',
          when: { startTime: utc('2000-01-01T09:00:00Z'), endTime: utc('2000-01-01T09:05:00Z') },
          recurrence: ['RRULE:FREQ=HOURLY'],
        },
      });
      const huge = await request(
        service.url,
        'GET',
        `/v3/grants/${grantId}/events?calendar_id=primary&start=0&end=253402300000&expand_recurring=true&title=Forever`,
        { key: service.apiKey },
      );
      expect(huge.status).toBe(400);
      expect(huge.body.error).toMatchObject({
        type: 'invalid_request_error',
        message: expect.stringContaining('at most 366 days'),
      });
      // 366 days of an hourly rule are 8,784 instances: the series stops at 2,000.
      const start = utc('2000-01-01T00:00:00Z');
      const end = start + 366 * 86_400;
      const query = {
        calendarId: 'primary',
        start: String(start),
        end: String(end),
        expandRecurring: true,
        title: 'Every hour',
        limit: 200,
      };
      const first = await service.nylas.events.list({ identifier: grantId, queryParams: query });
      expect(first.data).toHaveLength(200);
      expect(first.data[0]!.id).toBe(`${hourly.data.id}_20000101T090000Z`);
      expect(first.nextCursor).toBeDefined();
      let total = first.data.length;
      let cursor = first.nextCursor;
      while (cursor) {
        const page = await request(
          service.url,
          'GET',
          `/v3/grants/${grantId}/events?calendar_id=primary&start=${start}&end=${end}&expand_recurring=true&title=Every%20hour&limit=200&page_token=${cursor}`,
          { key: service.apiKey },
        );
        total += page.body.data.length;
        cursor = page.body.next_cursor;
      }
      expect(total).toBe(2_000);
      // Stored with an open end, so any later window finds the series.
      const row = await service.core.deps.db.orm.query.events.findFirst({ where: eq(tables.events.id, daily.data.id) });
      expect(row!.rangeEnd).toBe(tables.OPEN_ENDED_RANGE_END);
      const late = await service.nylas.events.list({
        identifier: grantId,
        queryParams: {
          calendarId: 'primary',
          start: String(utc('2031-05-05T00:00:00Z')),
          end: String(utc('2031-05-07T00:00:00Z')),
          expandRecurring: true,
          title: 'Forever',
        },
      });
      // 09:00Z on 1 January 2000 is 04:00 in New York (the calendar's zone), which is 08:00Z in May.
      expect(late.data.map((event) => event.id)).toEqual([
        `${daily.data.id}_20310505T080000Z`,
        `${daily.data.id}_20310506T080000Z`,
      ]);
    });
  });

  describe('list filters', () => {
    let calendarId: string;

    beforeAll(async () => {
      calendarId = (
        await service.nylas.calendars.create({ identifier: grantId, requestBody: { name: 'Filters', timezone: 'UTC' } })
      ).data.id;
      const make = (title: string, start: string, extra: Record<string, unknown> = {}) =>
        service.nylas.events.create({
          identifier: grantId,
          queryParams: { calendarId, notifyParticipants: false },
          requestBody: { title, when: { startTime: utc(start), endTime: utc(start) + 1800 }, ...extra },
        });
      await make('Alpha sync', '2025-05-01T10:00:00Z', {
        location: 'Paris office',
        metadata: { team: 'red' },
        participants: [{ email: 'zoe@x.example' }],
      });
      await make('Beta review', '2025-05-02T10:00:00Z', {
        location: 'Berlin office',
        metadata: { team: 'blue' },
        busy: false,
      });
      await make('Gamma', '2025-05-03T10:00:00Z', { status: 'cancelled' });
      await make('Delta', '2025-07-01T10:00:00Z');
    });

    const titles = async (query: Record<string, unknown>) =>
      (
        await service.nylas.events.list({
          identifier: grantId,
          queryParams: {
            calendarId,
            start: String(utc('2025-04-01T00:00:00Z')),
            end: String(utc('2025-06-01T00:00:00Z')),
            ...query,
          },
        })
      ).data.map((event) => event.title);

    it.each([
      ['the window', {}, ['Alpha sync', 'Beta review']],
      ['title (contains, any case)', { title: 'REVIEW' }, ['Beta review']],
      ['location', { location: 'paris' }, ['Alpha sync']],
      ['metadata_pair', { metadataPair: { team: 'blue' } }, ['Beta review']],
      ['show_cancelled', { showCancelled: true }, ['Alpha sync', 'Beta review', 'Gamma']],
      ['busy', { busy: false }, ['Beta review']],
      ['attendees', { attendees: ['ZOE@x.example'] }, ['Alpha sync']],
      ['a wider window', { end: String(utc('2025-08-01T00:00:00Z')) }, ['Alpha sync', 'Beta review', 'Delta']],
    ])('filters by %s', async (_name, query, expected) => {
      expect(await titles(query)).toEqual(expected);
    });

    it('applies no time window with metadata_pair', async () => {
      const listed = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId, metadataPair: { team: 'red' } },
      });
      expect(listed.data.map((event) => event.title)).toEqual(['Alpha sync']);
    });

    it('filters by ical_uid and updated_after, and pages with next_cursor', async () => {
      const all = (
        await service.nylas.events.list({
          identifier: grantId,
          queryParams: { calendarId, start: '0', end: '2000000000' },
        })
      ).data;
      expect((await titles({ icalUid: all[1]!.icalUid })).length).toBe(1);
      expect(await titles({ updatedAfter: String(Math.max(...all.map((event) => event.updatedAt!))) })).toEqual([]);
      const first = await request(
        service.url,
        'GET',
        `/v3/grants/${grantId}/events?calendar_id=${calendarId}&start=0&end=2000000000&limit=2`,
        { key: service.apiKey },
      );
      const second = await request(
        service.url,
        'GET',
        `/v3/grants/${grantId}/events?calendar_id=${calendarId}&start=0&end=2000000000&limit=2&page_token=${first.body.next_cursor}`,
        { key: service.apiKey },
      );
      expect([...first.body.data, ...second.body.data].map((event: { title: string }) => event.title)).toEqual([
        'Alpha sync',
        'Beta review',
        'Delta',
      ]);
      expect(second.body.next_cursor).toBeUndefined();
    });
  });

  describe('ICS feed', () => {
    it('serves the calendar as text/calendar to an authenticated caller', async () => {
      const response = await fetch(`${service.url}/v3/grants/${grantId}/calendars/primary/ics`, {
        headers: { authorization: `Bearer ${service.apiKey}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
      const text = await response.text();
      expect(validateICalendar(text, 'PUBLISH')).toEqual([]);
      expect(text).toContain('SUMMARY:Standup\r\n');
      expect(text).toContain('SUMMARY:Standup (late)\r\n');
      expect(text).toContain('RECURRENCE-ID;TZID=America/New_York:20250324T090000');
      expect(text.replaceAll('\r\n ', '')).toContain('EXDATE;TZID=America/New_York:20250317T090000,20250310T090000');
      expect(text).toContain('DTSTART;VALUE=DATE:20250704');
      expect(text).toContain('X-WR-TIMEZONE:America/New_York');
    });

    it('needs the API key and a calendar of the grant', async () => {
      expect((await fetch(`${service.url}/v3/grants/${grantId}/calendars/primary/ics`)).status).toBe(401);
      const missing = await request(service.url, 'GET', `/v3/grants/${grantId}/calendars/nope/ics`, {
        key: service.apiKey,
      });
      expect(missing.status).toBe(404);
      expect(missing.body.error.type).toBe('not_found_error');
    });
  });
});
