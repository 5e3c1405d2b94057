/**
 * Prepared recurring series are kept in memory between requests (src/calendar/recurrence.ts): a series that is
 * changed, loses an instance or is deleted must never come back as it was, through any of the three readers
 * (free/busy, availability, events with expand_recurring). The clock stands still, so every change happens in
 * the same second as the read before it (same updated_at).
 */
import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { nyHour, readStarts, startNewYorkPlanner, utc } from '../helpers/calendar.js';

const DOMAIN = 'series.agentpost.localhost';
const EMAIL = `standup@${DOMAIN}`;
/** Monday 2025-03-03 to Monday 2025-03-10 (New York springs forward on Sunday the 9th). */
const WINDOW = { start: utc('2025-03-03T00:00:00Z'), end: utc('2025-03-10T00:00:00Z') };

describe('changed and deleted series are never read stale', () => {
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    ({ service, grantId } = await startNewYorkPlanner(EMAIL, '2025-03-01T12:00:00Z'));
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Busy block starts from free/busy, slot starts from availability (09:00–10:00 New York, hourly), instance starts from the events list. */
  const readAll = () => readStarts(service, grantId, EMAIL, WINDOW);

  /** The seven 09:00 New York mornings of the window, minus `except` (indexes 0 = Monday 3rd … 6 = Sunday 9th). */
  const mornings = (...except: number[]) =>
    [
      '2025-03-03T14:00:00Z',
      '2025-03-04T14:00:00Z',
      '2025-03-05T14:00:00Z',
      '2025-03-06T14:00:00Z',
      '2025-03-07T14:00:00Z',
      '2025-03-08T14:00:00Z',
      '2025-03-09T13:00:00Z',
    ].filter((_, index) => !except.includes(index));

  /** A daily 09:00 New York stand-up from Monday 3 March 2025. */
  const createStandUp = () =>
    service.nylas.events.create({
      identifier: grantId,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: { title: 'Stand-up', when: nyHour('2025-03-03T14:00:00Z'), recurrence: ['RRULE:FREQ=DAILY'] },
    });

  it('follows a daily series through a changed rule, a moved time, a deleted instance and its deletion', async () => {
    const created = await createStandUp();
    const id = created.data.id;
    let read = await readAll();
    expect(read.busy).toEqual(mornings());
    expect(read.instances).toEqual(mornings());
    expect(read.free).toEqual([]);

    // A changed rule: weekdays only.
    await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: { recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR'] },
    });
    read = await readAll();
    expect(read.busy).toEqual(mornings(5, 6));
    expect(read.instances).toEqual(mornings(5, 6));
    expect(read.free).toEqual(mornings(0, 1, 2, 3, 4));

    // An EXDATE added to the lines.
    await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: {
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', 'EXDATE;TZID=America/New_York:20250305T090000'],
      },
    });
    read = await readAll();
    expect(read.busy).toEqual(mornings(2, 5, 6));
    expect(read.free).toEqual(mornings(0, 1, 3, 4));

    // The series moved an hour later: the 09:00 mornings are all free, and the EXDATE moved with the series
    // (09:00 → 10:00 on the 5th), so that day stays excluded.
    await service.nylas.events.update({
      identifier: grantId,
      eventId: id,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: { when: nyHour('2025-03-03T15:00:00Z') },
    });
    read = await readAll();
    expect(read.busy).toEqual([
      '2025-03-03T15:00:00Z',
      '2025-03-04T15:00:00Z',
      '2025-03-06T15:00:00Z',
      '2025-03-07T15:00:00Z',
    ]);
    expect(read.instances).toEqual(read.busy);
    expect(read.free).toEqual(mornings());

    // One instance deleted (the service adds an EXDATE to the master) and one moved (an override row).
    await service.nylas.events.destroy({
      identifier: grantId,
      eventId: `${id}_20250304T150000Z`,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
    });
    await service.nylas.events.update({
      identifier: grantId,
      eventId: `${id}_20250306T150000Z`,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: { when: { startTime: utc('2025-03-06T14:00:00Z'), endTime: utc('2025-03-06T15:00:00Z') } },
    });
    read = await readAll();
    expect(read.busy).toEqual(['2025-03-03T15:00:00Z', '2025-03-06T14:00:00Z', '2025-03-07T15:00:00Z']);
    expect(read.instances).toEqual(['2025-03-03T15:00:00Z', '2025-03-06T14:00:00Z', '2025-03-07T15:00:00Z']);
    expect(read.free).toEqual(mornings(3));

    // The whole series deleted: nothing left, in all three readers.
    await service.nylas.events.destroy({
      identifier: grantId,
      eventId: id,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
    });
    read = await readAll();
    expect(read).toEqual({ busy: [], free: mornings(), instances: [], events: [] });

    // The same series created again reads as new.
    const again = await createStandUp();
    read = await readAll();
    expect(read.busy).toEqual(mornings());
    await service.nylas.events.destroy({
      identifier: grantId,
      eventId: again.data.id,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
    });
  });

  it('refuses a DAILY rule whose interval only ever lands on a weekday BYDAY leaves out (ical.js would never return)', async () => {
    const error = await service.nylas.events
      .create({
        identifier: grantId,
        queryParams: { calendarId: 'primary', notifyParticipants: false },
        requestBody: {
          title: 'Never',
          // Monday, every 7 days, but only on Wednesdays.
          when: nyHour('2025-03-03T14:00:00Z'),
          recurrence: ['RRULE:FREQ=DAILY;INTERVAL=7;BYDAY=WE;COUNT=3'],
        },
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NylasApiError);
    expect((error as NylasApiError).statusCode).toBe(400);
    expect((error as NylasApiError).message).toContain('recurrence');
    expect((error as NylasApiError).message).toContain('INTERVAL=7');
  });
});
