/**
 * Slot computation speed (src/calendar/availability.ts), with the brute-force minute-by-minute oracle of the
 * tests (test/src/calendar/availability-oracle.ts) measured on the same inputs in the same run.
 *
 * Scenarios:
 * - small: 5 participants × 200 busy events (15–45 minutes), 2-week window, 15-minute interval (collective).
 * - large (issue 6): 10 participants × 2,000 events (15–120 minutes) each, a tenth of them weekly-recurring series expanded in the
 *   window, 30-day window, 15-minute interval; collective and max-availability, with and without explain.
 * - service: the large scenario stored in libSQL (weekly RRULE series, no end) and asked through the core's
 *   find_availability / get_free_busy (event query, series expansion, slot computation).
 * - end-to-end (issue 6's target): 10 grants × 2,000 stored events (bench/calendar-seed.ts: 200 weekly, biweekly,
 *   weekday and daily series started up to two years back, with EXDATEs and overrides; single events in and
 *   around the window), asked through `core.calendar.availability.find` and over HTTP with the nylas SDK's
 *   `calendars.getAvailability`: median and p95 per request, beside the engine alone on the same busy time and
 *   the brute-force oracle, which must agree with the service's answer. Machine load is printed with them.
 * Target: under 50 ms per request for the large scenario, end to end.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { createDb, tables } from '../storage/index.js';
import {
  computeAvailability,
  freeBusy,
  type AvailabilityParticipant,
  type AvailabilityQuery,
  type BusyInterval,
  type OpenHoursRule,
} from '../src/calendar/availability.js';
import { eventTimeColumns } from '../src/calendar/event-mapper.js';
import type { EventTime } from '../src/calendar/event-time.js';
import { parseRecurrence } from '../src/calendar/ical.js';
import { seriesInstances, storedRange } from '../src/calendar/recurrence.js';
import type { Principal } from '../src/index.js';
import { oracleAvailability } from '../test/src/calendar/availability-oracle.js';
import { createTestCore, startTestService, tempDir } from '../test/helpers/service.js';
import { seedCalendars } from './calendar-seed.js';

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same calendars. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WEEKDAYS = [1, 2, 3, 4, 5];
const ZONES = ['America/New_York', 'Europe/London', 'America/Chicago'];

/** Busy intervals: one-off events (15 minutes to `maxQuarters` quarter hours) plus weekly series expanded over the window. */
function busyCalendar(
  next: () => number,
  windowStart: number,
  windowEnd: number,
  events: number,
  recurringShare: number,
  prefix: string,
  maxQuarters: number,
): BusyInterval[] {
  const busy: BusyInterval[] = [];
  const span = windowEnd - windowStart;
  const recurring = Math.round(events * recurringShare);
  for (let index = 0; index < events - recurring; index++) {
    const start = windowStart + Math.floor((next() * span) / 300) * 300;
    busy.push({ start, end: start + (1 + Math.floor(next() * maxQuarters)) * 15 * 60, eventId: `${prefix}-${index}` });
  }
  for (let index = 0; index < recurring; index++) {
    const first = windowStart - 7 * 86_400 + Math.floor((next() * 7 * 86_400) / 900) * 900;
    const length = (1 + Math.floor(next() * 4)) * 15 * 60;
    for (let start = first; start < windowEnd; start += 7 * 86_400) {
      if (start + length > windowStart) busy.push({ start, end: start + length, eventId: `${prefix}-r${index}` });
    }
  }
  return busy;
}

export function scenario(options: {
  participants: number;
  events: number;
  days: number;
  recurringShare: number;
  method: AvailabilityQuery['method'];
  explain: boolean;
  maxQuarters?: number;
}): AvailabilityQuery {
  const next = random(42);
  const startTime = Date.UTC(2025, 2, 3) / 1000; // Monday 2025-03-03: the window crosses the US and EU DST changes
  const endTime = startTime + options.days * 86_400;
  const participants: AvailabilityParticipant[] = [];
  for (let index = 0; index < options.participants; index++) {
    const timezone = ZONES[index % ZONES.length]!;
    const openHours: OpenHoursRule[] = [
      { days: WEEKDAYS, timezone, start: index % 2 === 0 ? '8:00' : '9:30', end: index % 2 === 0 ? '17:00' : '18:30' },
    ];
    participants.push({
      email: `p${index}@bench.test`,
      busy: busyCalendar(
        next,
        startTime,
        endTime,
        options.events,
        options.recurringShare,
        `p${index}`,
        options.maxQuarters ?? 8,
      ),
      openHours,
      lastBookedAt: index % 3 === 0 ? null : startTime - index * 3600,
    });
  }
  return {
    startTime,
    endTime,
    durationMinutes: 30,
    intervalMinutes: 15,
    buffer: { before: 5, after: 10 },
    method: options.method,
    participants,
    explain: options.explain,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The value below which `share` of the values lie (nearest rank). */
function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

/**
 * Times `work` once cold, then `runs` times: first, median and p95 in milliseconds, and the median CPU time of
 * this process (libSQL runs on the main thread), which other load on the machine disturbs less.
 */
async function timed(
  work: () => unknown,
  runs: number,
): Promise<{ first: number; median: number; p95: number; cpu: number }> {
  let started = performance.now();
  await work();
  const first = performance.now() - started;
  const times: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < runs; run++) {
    const usage = process.cpuUsage();
    started = performance.now();
    await work();
    times.push(performance.now() - started);
    const used = process.cpuUsage(usage);
    cpu.push((used.user + used.system) / 1000);
  }
  return { first, median: median(times), p95: percentile(times, 0.95), cpu: median(cpu) };
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');

function measure(query: AvailabilityQuery, runs: number): { first: number; median: number; slots: number } {
  let started = performance.now();
  const result = computeAvailability(query);
  const first = performance.now() - started;
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    started = performance.now();
    computeAvailability(query);
    times.push(performance.now() - started);
  }
  return { first, median: median(times), slots: result.timeSlots.length };
}

function sameAsOracle(query: AvailabilityQuery): { ms: number; same: boolean } {
  const started = performance.now();
  const expected = oracleAvailability(query);
  const ms = performance.now() - started;
  const actual = computeAvailability(query);
  return { ms, same: JSON.stringify(expected.timeSlots) === JSON.stringify(actual.timeSlots) };
}

/** Stores the large scenario's calendars in a temporary database and times requests through the core. */
async function serviceFigures(figures: Record<string, number | string>): Promise<void> {
  const { core, db, close } = await createTestCore();
  try {
    const principal: Principal = {
      applicationId: await core.accounts.applications.defaultApplicationId(),
      via: 'local',
    };
    await core.accounts.domains.create(principal, { name: 'Bench', domain_address: 'bench.agentpost.localhost' });
    const next = random(7);
    const startTime = Date.UTC(2025, 2, 3) / 1000;
    const endTime = startTime + 30 * 86_400;
    const emails: string[] = [];
    let seeded = 0;
    const series: { id: string; when: EventTime }[] = [];
    for (let index = 0; index < 10; index++) {
      const email = `p${index}@bench.agentpost.localhost`;
      emails.push(email);
      const { grant } = await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
      const calendar = await db.orm.query.calendars.findFirst({
        where: and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.isPrimary, true)),
      });
      const rows: (typeof tables.events.$inferInsert)[] = [];
      for (let event = 0; event < 2000; event++) {
        const recurring = event % 10 === 0;
        const start = recurring
          ? startTime - 7 * 86_400 + Math.floor((next() * 7 * 86_400) / 900) * 900
          : startTime + Math.floor((next() * 30 * 86_400) / 300) * 300;
        const length = (1 + Math.floor(next() * (recurring ? 4 : 8))) * 900;
        const when: EventTime = {
          kind: 'timespan',
          startTime: start,
          endTime: start + length,
          startTimezone: 'America/New_York',
          endTimezone: 'America/New_York',
        };
        const recurrence = recurring ? ['RRULE:FREQ=WEEKLY'] : null;
        const parsed = recurrence ? parseRecurrence(recurrence, when) : undefined;
        const id = `${grant.id}-${event}`;
        if (recurring) series.push({ id, when });
        rows.push({
          id,
          grantId: grant.id,
          calendarId: calendar!.id,
          icalUid: `${id}@bench`,
          ...eventTimeColumns(when),
          ...storedRange(when, parsed?.ok ? parsed.value : null),
          recurrence,
          createdAt: startTime,
          updatedAt: startTime,
        });
      }
      for (let offset = 0; offset < rows.length; offset += 500) {
        await db.write(async (tx) => {
          await tx.insert(tables.events).values(rows.slice(offset, offset + 500));
        });
      }
      seeded += rows.length;
    }
    figures['service: events stored (10 grants)'] = seeded;
    const input = {
      start_time: startTime,
      end_time: endTime,
      duration_minutes: 30,
      interval_minutes: 15,
      participants: emails.map((email, index) => ({
        email,
        open_hours: [{ days: WEEKDAYS, timezone: ZONES[index % ZONES.length]!, start: '8:00', end: '18:00' }],
      })),
      availability_rules: { buffer: { before: 5, after: 10 }, availability_method: 'max-availability' as const },
    };
    const times: number[] = [];
    for (let run = 0; run < 6; run++) {
      const started = performance.now();
      await core.calendar.availability.find(principal, input);
      times.push(performance.now() - started);
    }
    figures['service find_availability (10 × 2,000, 30 d): ms, median'] = median(times.slice(1));
    figures['service find_availability: ms, first call'] = times[0]!;
    const freeBusyTimes: number[] = [];
    for (let run = 0; run < 6; run++) {
      const started = performance.now();
      await core.calendar.availability.freeBusy(principal, {
        grant_id: emails[0]!,
        start_time: startTime,
        end_time: endTime,
        emails,
      });
      freeBusyTimes.push(performance.now() - started);
    }
    figures['service get_free_busy (10 emails, 30 d): ms, median'] = median(freeBusyTimes.slice(1));
    // Where the service time goes: expanding the 2,000 weekly series alone (src/calendar/recurrence.ts, ical.js).
    const expansionTimes: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      for (const master of series)
        seriesInstances(
          master.id,
          master.when,
          ['RRULE:FREQ=WEEKLY'],
          { start: startTime - 86_400, end: endTime + 86_400 },
          new Set(),
        );
      expansionTimes.push(performance.now() - started);
    }
    figures[`service: expanding the ${series.length} series alone, ms`] = median(expansionTimes);
  } finally {
    close();
  }
}

/**
 * Issue 6's benchmark end to end: realistic calendars in a real database, asked through the core and over HTTP,
 * next to the engine alone and the minute-by-minute oracle on the same busy time, in the same run.
 */
export async function endToEndFigures(figures: Record<string, number | string>): Promise<void> {
  const dir = tempDir('agentpost-bench-');
  const db = await createDb({ url: `file:${join(dir.path, 'bench.db')}` });
  const service = await startTestService({ deps: { db } });
  try {
    const core = service.core;
    const principal: Principal = {
      applicationId: await core.accounts.applications.defaultApplicationId(),
      via: 'local',
    };
    await core.accounts.domains.create(principal, { name: 'Bench', domain_address: 'e2e.agentpost.localhost' });
    let started = performance.now();
    const seeded = await seedCalendars(core, db, principal, {
      grants: 10,
      events: 2000,
      series: 200,
      days: 30,
      zones: ZONES,
      domain: 'e2e.agentpost.localhost',
    });
    figures['e2e: seeding, s'] = (performance.now() - started) / 1000;
    const { counts, window } = seeded;
    figures['e2e: rows stored (series / overrides / single, all-day)'] =
      `${counts.rows.toLocaleString('en-US')} (${counts.series} / ${counts.overrides} / ${counts.singles}, ${counts.allDay})`;
    const expectedBusy = [...seeded.expected.values()].reduce(
      (sum, busy) => sum + busy.filter((interval) => interval.start < window.end && interval.end > window.start).length,
      0,
    );
    figures['e2e: busy intervals in the window (expected)'] = expectedBusy;

    const openHours = seeded.emails.map((_, index) => ({
      days: WEEKDAYS,
      timezone: seeded.zones[index]!,
      start: index % 2 === 0 ? '8:00' : '9:30',
      end: index % 2 === 0 ? '17:00' : '18:30',
    }));
    const request = (method: 'collective' | 'max-availability') => ({
      start_time: window.start,
      end_time: window.end,
      duration_minutes: 30,
      interval_minutes: 15,
      participants: seeded.emails.map((email, index) => ({
        email,
        open_hours: [{ ...openHours[index]!, exdates: [] }],
      })),
      availability_rules: { buffer: { before: 5, after: 10 }, availability_method: method },
    });
    const oracleQuery = (method: 'collective' | 'max-availability'): AvailabilityQuery => ({
      startTime: window.start,
      endTime: window.end,
      durationMinutes: 30,
      intervalMinutes: 15,
      roundTo: 15,
      buffer: { before: 5, after: 10 },
      method,
      participants: seeded.emails.map((email, index) => ({
        email,
        busy: seeded.expected.get(seeded.grantIds[index]!)!,
        openHours: [openHours[index]!],
        lastBookedAt: null,
      })),
      explain: false,
    });

    figures['e2e: load average (1 / 5 / 15 min), before'] = load();
    const endToEnd: number[] = [];
    for (const method of ['max-availability', 'collective'] as const) {
      const input = request(method);
      const core1 = await timed(() => core.calendar.availability.find(principal, input), 30);
      figures[`e2e ${method}: core.calendar.availability.find ms, median`] = core1.median;
      figures[`e2e ${method}: core.calendar.availability.find ms, p95`] = core1.p95;
      figures[`e2e ${method}: core.calendar.availability.find ms, first call`] = core1.first;
      figures[`e2e ${method}: core.calendar.availability.find CPU ms, median`] = core1.cpu;
      endToEnd.push(core1.median);
      const query = oracleQuery(method);
      const engine = measure(query, 20);
      figures[`e2e ${method}: engine alone (same busy time) ms, median`] = engine.median;
      started = performance.now();
      const expected = oracleAvailability(query);
      const oracleMs = performance.now() - started;
      figures[`e2e ${method}: oracle ms (minute by minute)`] = oracleMs;
      figures[`e2e ${method}: oracle / end-to-end core call`] = oracleMs / core1.median;
      const actual = await core.calendar.availability.find(principal, input);
      const same =
        JSON.stringify(actual.time_slots) ===
          JSON.stringify(
            expected.timeSlots.map((slot) => ({
              emails: slot.emails,
              start_time: slot.startTime,
              end_time: slot.endTime,
            })),
          ) && JSON.stringify(actual.order) === JSON.stringify(expected.order);
      figures[`e2e ${method}: slots found`] = actual.time_slots.length;
      figures[`e2e ${method}: service equals oracle`] = same ? 'yes' : 'NO';
    }

    const httpInput = request('max-availability');
    const http = await timed(
      () =>
        service.nylas.calendars.getAvailability({
          requestBody: {
            startTime: httpInput.start_time,
            endTime: httpInput.end_time,
            durationMinutes: httpInput.duration_minutes,
            intervalMinutes: httpInput.interval_minutes,
            participants: httpInput.participants.map((participant) => ({
              email: participant.email,
              openHours: participant.open_hours,
              calendarIds: [],
            })),
            availabilityRules: { buffer: { before: 5, after: 10 }, availabilityMethod: 'max-availability' },
          } as never,
        }),
      20,
    );
    figures['e2e max-availability over HTTP (nylas SDK): ms, median'] = http.median;
    figures['e2e over HTTP: ms, p95'] = http.p95;
    figures['target: end to end under 50 ms (median, core and HTTP)'] = [...endToEnd, http.median].every(
      (ms) => ms < 50,
    )
      ? 'met'
      : 'NOT met';

    const freeBusyInput = {
      grant_id: seeded.emails[0]!,
      start_time: window.start,
      end_time: window.end,
      emails: seeded.emails,
    };
    const freeBusyTimes = await timed(() => core.calendar.availability.freeBusy(principal, freeBusyInput), 20);
    figures['e2e get_free_busy (10 emails, 30 d): ms, median'] = freeBusyTimes.median;
    figures['e2e get_free_busy: ms, p95'] = freeBusyTimes.p95;
    const freeBusyResult = await core.calendar.availability.freeBusy(principal, freeBusyInput);
    const freeBusySame = seeded.grantIds.every((grantId, index) => {
      const entry = freeBusyResult.data[index]!;
      const expected = freeBusy({ startTime: window.start, endTime: window.end }, seeded.expected.get(grantId)!);
      return (
        'time_slots' in entry &&
        JSON.stringify(entry.time_slots.map((slot) => [slot.start_time, slot.end_time])) ===
          JSON.stringify(expected.map((block) => [block.startTime, block.endTime]))
      );
    });
    figures['e2e get_free_busy equals expected busy time'] = freeBusySame ? 'yes' : 'NO';

    const calendar = (
      await db.orm.select().from(tables.calendars).where(eq(tables.calendars.grantId, seeded.grantIds[0]!))
    ).find((row) => row.isPrimary)!;
    const listInput = {
      grant_id: seeded.grantIds[0]!,
      calendar_id: calendar.id,
      start: window.start,
      end: window.end,
      expand_recurring: true,
      limit: 200,
    };
    const list = await timed(() => core.calendar.events.list(principal, listInput), 20);
    figures['e2e list events expand_recurring (1 calendar, 30 d, 200): ms, median'] = list.median;
    figures['e2e: load average (1 / 5 / 15 min), after'] = load();
  } finally {
    await service.close();
    dir.remove();
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {};

  const small = scenario({
    participants: 5,
    events: 200,
    days: 14,
    recurringShare: 0,
    method: 'collective',
    explain: false,
    maxQuarters: 3,
  });
  const smallEngine = measure(small, 50);
  const smallOracle = sameAsOracle(small);
  figures['small (5 × 200 events, 14 d): engine ms, median'] = smallEngine.median;
  figures['small: engine ms, first call (cold caches)'] = smallEngine.first;
  figures['small: oracle ms (minute by minute)'] = smallOracle.ms;
  figures['small: oracle / engine'] = smallOracle.ms / smallEngine.median;
  figures['small: slots found'] = smallEngine.slots;
  figures['small: engine equals oracle'] = smallOracle.same ? 'yes' : 'NO';

  const large = scenario({
    participants: 10,
    events: 2000,
    days: 30,
    recurringShare: 0.1,
    method: 'collective',
    explain: false,
  });
  const busyIntervals = large.participants.reduce((sum, participant) => sum + participant.busy.length, 0);
  figures['large: busy intervals in all (series expanded)'] = busyIntervals;
  const largeCollective = measure(large, 20);
  figures['large (10 × 2,000 events, 30 d) collective: engine ms, median'] = largeCollective.median;
  figures['large collective: engine ms, first call'] = largeCollective.first;
  figures['large collective: slots found'] = largeCollective.slots;
  const largeAny = { ...large, method: 'max-availability' as const };
  const largeAnyEngine = measure(largeAny, 20);
  figures['large max-availability: engine ms, median'] = largeAnyEngine.median;
  figures['large max-availability: slots found'] = largeAnyEngine.slots;
  figures['large collective + explain: engine ms, median'] = measure({ ...large, explain: true }, 20).median;
  const largeOracle = sameAsOracle(large);
  figures['large collective: oracle ms (minute by minute)'] = largeOracle.ms;
  figures['large collective: oracle / engine'] = largeOracle.ms / largeCollective.median;
  figures['large collective: engine equals oracle'] = largeOracle.same ? 'yes' : 'NO';
  figures['target: large under 50 ms (slot computation)'] =
    largeCollective.median < 50 && largeAnyEngine.median < 50 ? 'met' : 'NOT met';
  await serviceFigures(figures);
  await endToEndFigures(figures);
  return figures;
}
