/**
 * A series whose start moves takes its EXDATEs and its overrides' original starts along (recurrence.ts,
 * moveSeries; event-service.ts, update), in its own wall-clock time: an excluded occurrence stays excluded and a
 * changed one stays changed, instead of naming a time the series no longer has.
 */
import { and, eq } from 'drizzle-orm';
import { type Event } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables, type GrantRow } from '../../../storage/index.js';
import { createEventService } from '../../../src/calendar/event-service.js';
import type { EventTime } from '../../../src/calendar/event-time.js';
import type { OutgoingInvitation } from '../../../src/calendar/invitation-message.js';
import { moveSeries, seriesStarts } from '../../../src/calendar/recurrence.js';
import { fixedClock } from '../../helpers/clock.js';
import { sdkError } from '../../helpers/sdk.js';
import { createTestCore, type TestService } from '../../helpers/service.js';
import { validateICalendar } from './ics-validator.js';
import { iso, nyHour, startNewYorkPlanner, utc, zonedHour as hour } from '../../helpers/calendar.js';
const NY = 'America/New_York';
const MARCH = { start: utc('2025-03-01T00:00:00Z'), end: utc('2025-04-01T00:00:00Z') };

/** The starts of a series in March 2025. */
const march = (when: EventTime, lines: string[]) => seriesStarts(when, lines, MARCH, new Set()).starts.map(iso);

describe('moveSeries', () => {
  it('moves an exclusion with a new time of day (+2 h)', () => {
    const from = hour('UTC', '2025-03-03T09:00:00Z');
    const to = hour('UTC', '2025-03-03T11:00:00Z');
    const moved = moveSeries(from, to, ['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T090000Z']);
    expect(moved.lines).toEqual(['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T110000Z']);
    expect(iso(moved.start(utc('2025-03-24T09:00:00Z')))).toBe('2025-03-24T11:00:00Z');
    expect(march(to, moved.lines)).toEqual([
      '2025-03-03T11:00:00Z',
      '2025-03-10T11:00:00Z',
      '2025-03-24T11:00:00Z',
      '2025-03-31T11:00:00Z',
    ]);
  });

  it('keeps wall-clock times across the DST change: a start moved a week and two hours later (New York)', () => {
    // Mondays 09:00 EST (14:00Z) from 3 March; the 17th is 09:00 EDT (13:00Z). Moved to 11:00 from the 10th (EDT).
    const from = hour(NY, '2025-03-03T14:00:00Z');
    const to = hour(NY, '2025-03-10T15:00:00Z');
    const moved = moveSeries(from, to, ['RRULE:FREQ=WEEKLY', 'EXDATE;TZID=America/New_York:20250317T090000']);
    // 11:00 EDT on the same Monday (an instant shift of 7 days and 1 hour would give the 24th, 14:00Z).
    expect(moved.lines).toEqual(['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T150000Z']);
    expect(march(to, moved.lines)).toEqual(['2025-03-10T15:00:00Z', '2025-03-24T15:00:00Z', '2025-03-31T15:00:00Z']);
  });

  it('keeps wall-clock times across the DST change: Saturdays 09:00 moved to Sundays 11:00 (New York)', () => {
    // Saturday 8 March is EST (14:00Z); Sunday the 9th at 11:00 is EDT (15:00Z): an instant shift of 26 h gives 16:00Z.
    const from = hour(NY, '2025-03-01T14:00:00Z');
    const to = hour(NY, '2025-03-02T16:00:00Z');
    const moved = moveSeries(from, to, ['RRULE:FREQ=WEEKLY', 'EXDATE:20250308T140000Z,20250315T130000Z']);
    expect(moved.lines).toEqual(['RRULE:FREQ=WEEKLY', 'EXDATE:20250309T150000Z,20250316T150000Z']);
    expect(march(to, moved.lines)).toEqual(['2025-03-02T16:00:00Z', '2025-03-23T15:00:00Z', '2025-03-30T15:00:00Z']);
  });

  it.each([
    // The occurrences did not move (only the first one is gone): the exclusions stay where they are.
    [
      'a daily series started a day later',
      hour('UTC', '2025-03-03T09:00:00Z'),
      hour('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=DAILY', 'EXDATE:20250306T090000Z'],
      ['RRULE:FREQ=DAILY', 'EXDATE:20250306T090000Z'],
    ],
    [
      'a weekly series started three weeks later',
      hour('UTC', '2025-03-04T09:00:00Z'),
      hour('UTC', '2025-03-25T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY', 'EXDATE:20250401T090000Z'],
      ['RRULE:FREQ=WEEKLY', 'EXDATE:20250401T090000Z'],
    ],
    [
      'BYDAY=MO,WE started on the Wednesday',
      hour('UTC', '2025-03-03T09:00:00Z'),
      hour('UTC', '2025-03-05T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'EXDATE:20250312T090000Z'],
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'EXDATE:20250312T090000Z'],
    ],
    // BYDAY keeps the days; only the time of day moves.
    [
      'BYDAY=MO,WE moved from Monday 09:00 to Tuesday 11:00',
      hour('UTC', '2025-03-03T09:00:00Z'),
      hour('UTC', '2025-03-04T11:00:00Z'),
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'EXDATE:20250312T090000Z'],
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE', 'EXDATE:20250312T110000Z'],
    ],
    // Without BYDAY the day moves with the start.
    [
      'a weekly series moved from Tuesdays to Wednesdays',
      hour('UTC', '2025-03-04T09:00:00Z'),
      hour('UTC', '2025-03-05T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY', 'EXDATE:20250311T090000Z'],
      ['RRULE:FREQ=WEEKLY', 'EXDATE:20250312T090000Z'],
    ],
    [
      'an all-day series moved a day',
      { kind: 'date', date: '2025-03-03' },
      { kind: 'date', date: '2025-03-04' },
      ['RRULE:FREQ=WEEKLY', 'EXDATE;VALUE=DATE:20250317'],
      ['RRULE:FREQ=WEEKLY', 'EXDATE;VALUE=DATE:20250318'],
    ],
    [
      'a whole-day EXDATE of a timed series moved past midnight',
      hour(NY, '2025-03-05T03:00:00Z'),
      hour(NY, '2025-03-05T05:00:00Z'),
      ['RRULE:FREQ=WEEKLY', 'EXDATE;VALUE=DATE:20250311'],
      ['RRULE:FREQ=WEEKLY', 'EXDATE;VALUE=DATE:20250312'],
    ],
    [
      'a timed series made all-day',
      hour('UTC', '2025-03-03T09:00:00Z'),
      { kind: 'date', date: '2025-03-03' },
      ['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T090000Z'],
      ['RRULE:FREQ=WEEKLY', 'EXDATE;VALUE=DATE:20250317'],
    ],
    // RDATEs are absolute: they and their exclusions stay.
    [
      'the exclusion of an RDATE',
      hour('UTC', '2025-03-03T09:00:00Z'),
      hour('UTC', '2025-03-03T11:00:00Z'),
      ['RRULE:FREQ=WEEKLY', 'RDATE:20250315T090000Z', 'EXDATE:20250315T090000Z,20250310T090000Z'],
      ['RRULE:FREQ=WEEKLY', 'RDATE:20250315T090000Z', 'EXDATE:20250315T090000Z,20250310T110000Z'],
    ],
  ] as const)('%s', (_name, from, to, lines, expected) => {
    const moved = moveSeries(from, to, [...lines]);
    expect(moved.lines).toEqual(expected);
  });

  it('leaves the lines as written when the start does not move', () => {
    const lines = ['RRULE:FREQ=WEEKLY', 'EXDATE;TZID=America/New_York:20250317T090000'];
    const longer: EventTime = {
      ...hour(NY, '2025-03-03T14:00:00Z'),
      endTime: utc('2025-03-03T16:00:00Z'),
    } as EventTime;
    const moved = moveSeries(hour(NY, '2025-03-03T14:00:00Z'), longer, lines);
    expect(moved.lines).toEqual(lines);
    expect(moved.start(utc('2025-03-17T13:00:00Z'))).toBe(utc('2025-03-17T13:00:00Z'));
  });
});

describe('moving a series through the API', () => {
  const DOMAIN = 'move.agentpost.localhost';
  const EMAIL = `mover@${DOMAIN}`;
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    ({ service, grantId } = await startNewYorkPlanner(EMAIL, '2025-02-20T12:00:00Z'));
  });
  afterAll(async () => {
    await service?.close();
  });

  const query = { calendarId: 'primary', notifyParticipants: false };
  const startOf = (event: Event) => iso((event.when as { startTime: number }).startTime);

  async function expanded(masterEventId: string) {
    const listed = await service.nylas.events.list({
      identifier: grantId,
      queryParams: {
        calendarId: 'primary',
        start: String(MARCH.start),
        end: String(MARCH.end),
        expandRecurring: true,
        masterEventId,
      },
    });
    return listed.data;
  }

  async function busy() {
    const freeBusy = await service.nylas.calendars.getFreeBusy({
      identifier: grantId,
      requestBody: { startTime: MARCH.start, endTime: MARCH.end, emails: [EMAIL] },
    });
    return (freeBusy.data[0] as { timeSlots: { startTime: number }[] }).timeSlots.map((slot) => iso(slot.startTime));
  }

  it('a weekly series moved +2 h across the DST change keeps its excluded and changed occurrences', async () => {
    // Mondays 09:00 New York from 3 March (14:00Z; from the 10th, 09:00 is 13:00Z).
    const created = await service.nylas.events.create({
      identifier: grantId,
      queryParams: query,
      requestBody: { title: 'Weekly', when: nyHour('2025-03-03T14:00:00Z'), recurrence: ['RRULE:FREQ=WEEKLY'] },
    });
    const id = created.data.id;
    // The 17th excluded; the 24th renamed (its time untouched); the 10th moved to 16:00 New York (20:00Z).
    await service.nylas.events.destroy({ identifier: grantId, eventId: `${id}_20250317T130000Z`, queryParams: query });
    await service.nylas.events.update({
      identifier: grantId,
      eventId: `${id}_20250324T130000Z`,
      queryParams: query,
      requestBody: { title: 'Renamed' },
    });
    await service.nylas.events.update({
      identifier: grantId,
      eventId: `${id}_20250310T130000Z`,
      queryParams: query,
      requestBody: { when: { startTime: utc('2025-03-10T20:00:00Z'), endTime: utc('2025-03-10T21:00:00Z') } },
    });

    // The series moved to 11:00 New York.
    const moved = await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: query,
      requestBody: { when: nyHour('2025-03-03T16:00:00Z') },
    });
    expect(moved.data.recurrence).toEqual(['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T150000Z']);

    const instances = await expanded(id);
    expect(instances.map((event) => [event.id, startOf(event), event.title, event.originalStartTime])).toEqual([
      [`${id}_20250303T160000Z`, '2025-03-03T16:00:00Z', 'Weekly', utc('2025-03-03T16:00:00Z')],
      // Moved to a time of its own: it keeps that time, under the key of its occurrence in the moved series.
      [`${id}_20250310T150000Z`, '2025-03-10T20:00:00Z', 'Weekly', utc('2025-03-10T15:00:00Z')],
      // The 17th stays excluded; the renamed 24th moves with the series.
      [`${id}_20250324T150000Z`, '2025-03-24T15:00:00Z', 'Renamed', utc('2025-03-24T15:00:00Z')],
      [`${id}_20250331T150000Z`, '2025-03-31T15:00:00Z', 'Weekly', utc('2025-03-31T15:00:00Z')],
    ]);
    expect(await busy()).toEqual([
      '2025-03-03T16:00:00Z',
      '2025-03-10T20:00:00Z',
      '2025-03-24T15:00:00Z',
      '2025-03-31T15:00:00Z',
    ]);

    // The overrides are found by their new ids only.
    const renamed = await service.nylas.events.find({
      identifier: grantId,
      eventId: `${id}_20250324T150000Z`,
      queryParams: { calendarId: 'primary' },
    });
    expect(renamed.data).toMatchObject({ title: 'Renamed', masterEventId: id });
    expect(
      (
        await sdkError(
          service.nylas.events.find({
            identifier: grantId,
            eventId: `${id}_20250324T130000Z`,
            queryParams: { calendarId: 'primary' },
          }),
        )
      ).statusCode,
    ).toBe(404);
    const rows = await service.core.deps.db.orm.query.events.findMany({
      where: and(eq(tables.events.grantId, grantId), eq(tables.events.masterEventId, id)),
    });
    expect(rows.map((row) => row.id).sort()).toEqual([`${id}_20250310T150000Z`, `${id}_20250324T150000Z`]);

    await service.nylas.events.destroy({ identifier: grantId, eventId: id, queryParams: query });
  });

  it('a weekly series moved from Saturdays 09:00 to Sundays 11:00 across the DST change keeps its excluded occurrence', async () => {
    const created = await service.nylas.events.create({
      identifier: grantId,
      queryParams: query,
      requestBody: { title: 'Weekend', when: nyHour('2025-03-01T14:00:00Z'), recurrence: ['RRULE:FREQ=WEEKLY'] },
    });
    const id = created.data.id;
    await service.nylas.events.destroy({ identifier: grantId, eventId: `${id}_20250308T140000Z`, queryParams: query });
    // Sunday 2 March 11:00 EST is 16:00Z; from the 9th, 11:00 EDT is 15:00Z. The lines are sent back as they are.
    const current = await service.nylas.events.find({
      identifier: grantId,
      eventId: id,
      queryParams: { calendarId: 'primary' },
    });
    await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: query,
      requestBody: { when: nyHour('2025-03-02T16:00:00Z'), recurrence: current.data.recurrence },
    });
    expect((await expanded(id)).map(startOf)).toEqual([
      '2025-03-02T16:00:00Z',
      '2025-03-16T15:00:00Z',
      '2025-03-23T15:00:00Z',
      '2025-03-30T15:00:00Z',
    ]);
    expect(await busy()).toEqual([
      '2025-03-02T16:00:00Z',
      '2025-03-16T15:00:00Z',
      '2025-03-23T15:00:00Z',
      '2025-03-30T15:00:00Z',
    ]);
    await service.nylas.events.destroy({ identifier: grantId, eventId: id, queryParams: query });
  });

  it('lines given anew with the move are taken as given, and the changed instances are dropped', async () => {
    const created = await service.nylas.events.create({
      identifier: grantId,
      queryParams: query,
      requestBody: {
        title: 'Rule',
        when: nyHour('2025-03-03T14:00:00Z'),
        recurrence: ['RRULE:FREQ=WEEKLY', 'EXDATE:20250317T130000Z'],
      },
    });
    const id = created.data.id;
    await service.nylas.events.update({
      identifier: grantId,
      eventId: `${id}_20250324T130000Z`,
      queryParams: query,
      requestBody: { title: 'Renamed' },
    });
    await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: query,
      requestBody: { when: nyHour('2025-03-03T16:00:00Z'), recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'] },
    });
    const instances = await expanded(id);
    expect(instances.map((event) => [startOf(event), event.title])).toEqual([
      ['2025-03-03T16:00:00Z', 'Rule'],
      ['2025-03-10T15:00:00Z', 'Rule'],
      ['2025-03-17T15:00:00Z', 'Rule'],
    ]);
    await service.nylas.events.destroy({ identifier: grantId, eventId: id, queryParams: query });
  });
});

describe('moving a series between two agents (iMIP)', () => {
  it('the invitee sees the moved series with the same occurrence excluded and the same one changed', async () => {
    const DOMAIN = 'imip-move.agentpost.localhost';
    const env = await createTestCore({ clock: fixedClock('2025-02-20T12:00:00Z') });
    try {
      const { core } = env;
      const sent: OutgoingInvitation[] = [];
      const events = createEventService(core.deps, core.accounts.grants, core.calendar.calendars, {
        send: async (invitation) => void sent.push(invitation),
      });
      const principal = {
        applicationId: await core.accounts.applications.defaultApplicationId(),
        via: 'local' as const,
      };
      await core.accounts.domains.ensureVerified(principal.applicationId, [DOMAIN]);
      const grantRow = async (email: string) => {
        const id = (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } })).grant.id;
        await core.calendar.calendars.update(principal, { grant_id: id, calendar_id: 'primary', timezone: NY });
        return (await env.db.orm.query.grants.findFirst({ where: eq(tables.grants.id, id) }))!;
      };
      const organizer = await grantRow(`organizer@${DOMAIN}`);
      const invitee = await grantRow(`invitee@${DOMAIN}`);
      const deliver = (to: GrantRow) =>
        events.applyInvitation(to, { sender: sent.at(-1)!.from.email, ics: sent.at(-1)!.ics });
      const on = (grant: GrantRow) => ({ grant_id: grant.id, calendar_id: 'primary' });
      const instances = async (grant: GrantRow) =>
        (
          await events.list(principal, { ...on(grant), start: MARCH.start, end: MARCH.end, expand_recurring: true })
        ).data.map((event) => [iso((event.when as { start_time: number }).start_time), event.title]);

      // Mondays 09:00 New York (14:00Z, 13:00Z from the 10th).
      const created = await events.create(principal, {
        ...on(organizer),
        title: 'Sync',
        when: {
          start_time: utc('2025-03-03T14:00:00Z'),
          end_time: utc('2025-03-03T14:30:00Z'),
          start_timezone: NY,
          end_timezone: NY,
        },
        participants: [{ email: invitee.email }],
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=5'],
      });
      await deliver(invitee);
      await events.destroy(principal, { ...on(organizer), event_id: `${created.id}_20250317T130000Z` });
      await deliver(invitee);
      await events.update(principal, {
        ...on(organizer),
        event_id: `${created.id}_20250324T130000Z`,
        title: 'Sync (retro)',
      });
      await deliver(invitee);
      expect(await instances(invitee)).toEqual([
        ['2025-03-03T14:00:00Z', 'Sync'],
        ['2025-03-10T13:00:00Z', 'Sync'],
        ['2025-03-24T13:00:00Z', 'Sync (retro)'],
        ['2025-03-31T13:00:00Z', 'Sync'],
      ]);

      // Moved to 11:00 New York.
      await events.update(principal, {
        ...on(organizer),
        event_id: created.id,
        when: {
          start_time: utc('2025-03-03T16:00:00Z'),
          end_time: utc('2025-03-03T16:30:00Z'),
          start_timezone: NY,
          end_timezone: NY,
        },
      });
      const moved = sent.at(-1)!;
      expect(validateICalendar(moved.ics, 'REQUEST')).toEqual([]);
      expect(moved.ics.replaceAll('\r\n ', '')).toContain('RECURRENCE-ID;TZID=America/New_York:20250324T110000');
      expect(await deliver(invitee)).toEqual([
        { action: 'updated', eventId: expect.any(String) },
        { action: 'created', eventId: expect.stringMatching(/_20250324T150000Z$/) },
      ]);
      const expected = [
        ['2025-03-03T16:00:00Z', 'Sync'],
        ['2025-03-10T15:00:00Z', 'Sync'],
        ['2025-03-24T15:00:00Z', 'Sync (retro)'],
        ['2025-03-31T15:00:00Z', 'Sync'],
      ];
      expect(await instances(organizer)).toEqual(expected);
      expect(await instances(invitee)).toEqual(expected);
    } finally {
      env.close();
    }
  });
});
