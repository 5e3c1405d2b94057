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
 * Target: under 50 ms per request for the large scenario.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../storage/index.js';
import { computeAvailability, type AvailabilityParticipant, type AvailabilityQuery, type BusyInterval, type OpenHoursRule } from '../src/calendar/availability.js';
import { eventTimeColumns } from '../src/calendar/event-mapper.js';
import type { EventTime } from '../src/calendar/event-time.js';
import { parseRecurrence } from '../src/calendar/ical.js';
import { seriesInstances, storedRange } from '../src/calendar/recurrence.js';
import type { Principal } from '../src/index.js';
import { oracleAvailability } from '../test/src/calendar/availability-oracle.js';
import { createTestCore } from '../test/helpers/service.js';

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
function busyCalendar(next: () => number, windowStart: number, windowEnd: number, events: number, recurringShare: number, prefix: string, maxQuarters: number): BusyInterval[] {
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

export function scenario(options: { participants: number; events: number; days: number; recurringShare: number; method: AvailabilityQuery['method']; explain: boolean; maxQuarters?: number }): AvailabilityQuery {
  const next = random(42);
  const startTime = Date.UTC(2025, 2, 3) / 1000; // Monday 2025-03-03: the window crosses the US and EU DST changes
  const endTime = startTime + options.days * 86_400;
  const participants: AvailabilityParticipant[] = [];
  for (let index = 0; index < options.participants; index++) {
    const timezone = ZONES[index % ZONES.length]!;
    const openHours: OpenHoursRule[] = [{ days: WEEKDAYS, timezone, start: index % 2 === 0 ? '8:00' : '9:30', end: index % 2 === 0 ? '17:00' : '18:30' }];
    participants.push({
      email: `p${index}@bench.test`,
      busy: busyCalendar(next, startTime, endTime, options.events, options.recurringShare, `p${index}`, options.maxQuarters ?? 8),
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
    const principal: Principal = { applicationId: await core.applications.defaultApplicationId(), via: 'local' };
    await core.domains.create(principal, { name: 'Bench', domain_address: 'bench.agentpost.localhost' });
    const next = random(7);
    const startTime = Date.UTC(2025, 2, 3) / 1000;
    const endTime = startTime + 30 * 86_400;
    const emails: string[] = [];
    let seeded = 0;
    const series: { id: string; when: EventTime }[] = [];
    for (let index = 0; index < 10; index++) {
      const email = `p${index}@bench.agentpost.localhost`;
      emails.push(email);
      const { grant } = await core.grants.create(principal, { provider: 'nylas', settings: { email } });
      const calendar = await db.orm.query.calendars.findFirst({ where: and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.isPrimary, true)) });
      const rows: (typeof tables.events.$inferInsert)[] = [];
      for (let event = 0; event < 2000; event++) {
        const recurring = event % 10 === 0;
        const start = recurring
          ? startTime - 7 * 86_400 + Math.floor((next() * 7 * 86_400) / 900) * 900
          : startTime + Math.floor((next() * 30 * 86_400) / 300) * 300;
        const length = (1 + Math.floor(next() * (recurring ? 4 : 8))) * 900;
        const when: EventTime = { kind: 'timespan', startTime: start, endTime: start + length, startTimezone: 'America/New_York', endTimezone: 'America/New_York' };
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
      participants: emails.map((email, index) => ({ email, open_hours: [{ days: WEEKDAYS, timezone: ZONES[index % ZONES.length]!, start: '8:00', end: '18:00' }] })),
      availability_rules: { buffer: { before: 5, after: 10 }, availability_method: 'max-availability' as const },
    };
    const times: number[] = [];
    for (let run = 0; run < 6; run++) {
      const started = performance.now();
      await core.availability.find(principal, input);
      times.push(performance.now() - started);
    }
    figures['service find_availability (10 × 2,000, 30 d): ms, median'] = median(times.slice(1));
    figures['service find_availability: ms, first call'] = times[0]!;
    const freeBusyTimes: number[] = [];
    for (let run = 0; run < 6; run++) {
      const started = performance.now();
      await core.availability.freeBusy(principal, { grant_id: emails[0]!, start_time: startTime, end_time: endTime, emails });
      freeBusyTimes.push(performance.now() - started);
    }
    figures['service get_free_busy (10 emails, 30 d): ms, median'] = median(freeBusyTimes.slice(1));
    // Where the service time goes: expanding the 2,000 weekly series alone (src/calendar/recurrence.ts, ical.js).
    const expansionTimes: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      for (const master of series) seriesInstances(master.id, master.when, ['RRULE:FREQ=WEEKLY'], { start: startTime - 86_400, end: endTime + 86_400 }, new Set());
      expansionTimes.push(performance.now() - started);
    }
    figures[`service: expanding the ${series.length} series alone, ms`] = median(expansionTimes);
  } finally {
    close();
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {};

  const small = scenario({ participants: 5, events: 200, days: 14, recurringShare: 0, method: 'collective', explain: false, maxQuarters: 3 });
  const smallEngine = measure(small, 50);
  const smallOracle = sameAsOracle(small);
  figures['small (5 × 200 events, 14 d): engine ms, median'] = smallEngine.median;
  figures['small: engine ms, first call (cold caches)'] = smallEngine.first;
  figures['small: oracle ms (minute by minute)'] = smallOracle.ms;
  figures['small: oracle / engine'] = smallOracle.ms / smallEngine.median;
  figures['small: slots found'] = smallEngine.slots;
  figures['small: engine equals oracle'] = smallOracle.same ? 'yes' : 'NO';

  const large = scenario({ participants: 10, events: 2000, days: 30, recurringShare: 0.1, method: 'collective', explain: false });
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
  figures['target: large under 50 ms (slot computation)'] = largeCollective.median < 50 && largeAnyEngine.median < 50 ? 'met' : 'NOT met';
  await serviceFigures(figures);
  return figures;
}
