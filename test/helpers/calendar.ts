/** Time helpers and a New York planner shared by the calendar tests. */
import type { Event } from 'nylas';
import type { EventTime } from '../../src/calendar/event-time.js';
import { fixedClock } from './clock.js';
import { createMailbox } from './mail.js';
import { startTestService, type TestService } from './service.js';

/** Unix seconds of an ISO instant. */
export const utc = (instant: string): number => Date.parse(instant) / 1000;

/** An ISO instant of unix seconds, without milliseconds (`2025-03-03T14:00:00Z`). */
export const iso = (unix: number): string => new Date(unix * 1000).toISOString().replace('.000', '');

/** A `when` of `hours` hours from `isoStart`, in New York time (as the nylas SDK sends it). */
export const nyHour = (isoStart: string, hours = 1) => ({
  startTime: utc(isoStart),
  endTime: utc(isoStart) + hours * 3600,
  startTimezone: 'America/New_York',
  endTimezone: 'America/New_York',
});

/** A core event time of one hour from `isoStart`, in `zone`. */
export const zonedHour = (zone: string, isoStart: string): EventTime => ({
  kind: 'timespan',
  startTime: utc(isoStart),
  endTime: utc(isoStart) + 3600,
  startTimezone: zone,
  endTimezone: zone,
});

/** A service whose clock stands still at `now`, with the mailbox `email`, its primary calendar in New York time. */
export async function startNewYorkPlanner(
  email: string,
  now: string,
): Promise<{ service: TestService; grantId: string }> {
  const service = await startTestService({ deps: { clock: fixedClock(now) } });
  const grantId = await createMailbox(service, email);
  await service.nylas.calendars.update({
    identifier: grantId,
    calendarId: 'primary',
    requestBody: { timezone: 'America/New_York' },
  });
  return { service, grantId };
}

/**
 * What each reader of the API gives for `window`: busy block starts from free/busy, slot starts from availability
 * (09:00–10:00 New York on `openDays`, hourly), and the events of the primary calendar with expand_recurring (their
 * starts in `instances`).
 */
export async function readStarts(
  service: TestService,
  grantId: string,
  email: string,
  window: { start: number; end: number },
  openDays = [0, 1, 2, 3, 4, 5, 6],
) {
  const freeBusy = await service.nylas.calendars.getFreeBusy({
    identifier: grantId,
    requestBody: { startTime: window.start, endTime: window.end, emails: [email] },
  });
  const availability = await service.nylas.calendars.getAvailability({
    requestBody: {
      startTime: window.start,
      endTime: window.end,
      durationMinutes: 60,
      intervalMinutes: 60,
      participants: [
        {
          email,
          openHours: [{ days: openDays, timezone: 'America/New_York', start: '9:00', end: '10:00', exdates: [] }],
        },
      ],
    },
  });
  const listed = await service.nylas.events.list({
    identifier: grantId,
    queryParams: { calendarId: 'primary', start: String(window.start), end: String(window.end), expandRecurring: true },
  });
  const events: Event[] = listed.data;
  return {
    busy: (freeBusy.data[0] as { timeSlots: { startTime: number }[] }).timeSlots.map((slot) => iso(slot.startTime)),
    free: availability.data.timeSlots.map((slot) => iso(Number(slot.startTime))),
    instances: events.map((event) => iso((event.when as { startTime: number }).startTime)),
    events,
  };
}
