/**
 * Realistic calendars for the end-to-end availability benchmark, written straight into a database, and the
 * busy time they must produce, computed here independently of src/calendar (wall clocks via date-fns-tz,
 * recurrence by plain day arithmetic), so the benchmark can check the service's answer against the oracle.
 *
 * Per grant: `series` recurring masters (weekly, every-other-week, weekdays and daily rules in the grant's
 * zone, started up to two years before the window, some ended by UNTIL or COUNT, most with EXDATEs), about one
 * series in five with an override row (an instance moved, or cancelled), and single events for the rest: 40% in
 * the window, the others up to a year around it; a few all-day, free, tentative, cancelled or declined.
 */
import { eq } from 'drizzle-orm';
import { fromZonedTime, toZonedTime } from 'date-fns-tz';
import { tables, type Database } from '../storage/index.js';
import type { BusyInterval } from '../src/calendar/availability.js';
import { eventTimeColumns } from '../src/calendar/event-mapper.js';
import type { EventTime } from '../src/calendar/event-time.js';
import { parseRecurrence } from '../src/calendar/ical.js';
import { storedRange } from '../src/calendar/recurrence.js';
import type { Core, Principal } from '../src/index.js';

const DAY = 86_400;

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same calendars. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** What was stored, and the busy intervals it must yield (per grant id, unmerged). */
export interface SeededCalendars {
  emails: string[];
  grantIds: string[];
  zones: string[];
  window: { start: number; end: number };
  expected: Map<string, BusyInterval[]>;
  counts: { rows: number; series: number; overrides: number; singles: number; allDay: number };
}

interface Wall {
  date: string;
  hour: number;
  minute: number;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');
const stamp = (unix: number) =>
  new Date(unix * 1000)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** Unix seconds of a wall-clock time in `zone` (times used here never fall in a DST gap). */
function instant(zone: string, wall: Wall): number {
  return fromZonedTime(`${wall.date}T${pad(wall.hour)}:${pad(wall.minute)}:00`, zone).getTime() / 1000;
}

function localDate(zone: string, unix: number): string {
  const zoned = toZonedTime(new Date(unix * 1000), zone);
  return `${zoned.getFullYear()}-${pad(zoned.getMonth() + 1)}-${pad(zoned.getDate())}`;
}

function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY * 1000).toISOString().slice(0, 10);
}

function weekday(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

type Rule = { kind: 'weekly'; interval: number } | { kind: 'weekdays' } | { kind: 'daily' };

/** The local dates of a rule's occurrences from `first` (a weekday for `weekdays`), without end. */
function* ruleDates(rule: Rule, first: string): Generator<string> {
  if (rule.kind === 'weekdays') {
    for (let date = first; ; date = plusDays(date, 1)) if (weekday(date) >= 1 && weekday(date) <= 5) yield date;
  }
  const step = rule.kind === 'daily' ? 1 : 7 * rule.interval;
  for (let date = first; ; date = plusDays(date, step)) yield date;
}

/**
 * Seeds `grants` Agent Accounts with `events` events each (`series` of them recurring masters; overrides and
 * single events make up the rest) around a `days`-day window starting on Monday 2025-03-03 (it crosses the US
 * and EU daylight-saving changes). Rows go in by bulk insert; the core's own writes would take minutes.
 */
export async function seedCalendars(
  core: Core,
  db: Database,
  principal: Principal,
  options: {
    grants: number;
    events: number;
    series: number;
    days: number;
    zones: readonly string[];
    domain: string;
    seed?: number;
  },
): Promise<SeededCalendars> {
  const next = random(options.seed ?? 11);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const start = Date.UTC(2025, 2, 3) / 1000;
  const end = start + options.days * DAY;
  const result: SeededCalendars = {
    emails: [],
    grantIds: [],
    zones: [],
    window: { start, end },
    expected: new Map(),
    counts: { rows: 0, series: 0, overrides: 0, singles: 0, allDay: 0 },
  };
  for (let index = 0; index < options.grants; index++) {
    const email = `p${index}@${options.domain}`;
    const zone = options.zones[index % options.zones.length]!;
    const { grant } = await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
    const calendar = (await db.orm.select().from(tables.calendars).where(eq(tables.calendars.grantId, grant.id))).find(
      (row) => row.isPrimary,
    )!;
    await db.write(async (tx) => {
      await tx.update(tables.calendars).set({ timezone: zone }).where(eq(tables.calendars.id, calendar.id));
    });
    result.emails.push(email);
    result.grantIds.push(grant.id);
    result.zones.push(zone);
    const busy: BusyInterval[] = [];
    result.expected.set(grant.id, busy);
    const rows: (typeof tables.events.$inferInsert)[] = [];
    const row = (
      id: string,
      when: EventTime,
      extra: Partial<typeof tables.events.$inferInsert> = {},
      recurrence: string[] | null = null,
    ) => {
      const parsed = recurrence ? parseRecurrence(recurrence, when) : undefined;
      if (parsed && !parsed.ok) throw new Error(`seed: ${parsed.error}`);
      rows.push({
        id,
        grantId: grant.id,
        calendarId: calendar.id,
        icalUid: `${extra.masterEventId ?? id}@bench`,
        title: `Event ${id.slice(-6)}`,
        ...eventTimeColumns(when),
        ...storedRange(when, parsed?.ok ? parsed.value : null),
        recurrence,
        createdAt: start - 400 * DAY,
        updatedAt: start - 400 * DAY,
        ...extra,
      });
    };

    // Recurring series in the grant's zone, on the quarter hours of a working day (never in a DST gap).
    let overrides = 0;
    for (let serial = 0; serial < options.series; serial++) {
      const id = `${grant.id}-s${serial}`;
      const draw = next();
      const rule: Rule =
        draw < 0.7
          ? { kind: 'weekly', interval: 1 }
          : draw < 0.9
            ? { kind: 'weekly', interval: 2 }
            : draw < 0.96
              ? { kind: 'weekdays' }
              : { kind: 'daily' };
      let first = plusDays('2025-03-03', -Math.floor(next() * 730) + 20);
      if (rule.kind === 'weekdays') while (weekday(first) === 0 || weekday(first) === 6) first = plusDays(first, 1);
      const wall = { hour: 7 + Math.floor(next() * 11), minute: 15 * Math.floor(next() * 4) };
      const length = (1 + Math.floor(next() * 3)) * 15 * 60;
      const firstStart = instant(zone, { date: first, ...wall });
      const when: EventTime = {
        kind: 'timespan',
        startTime: firstStart,
        endTime: firstStart + length,
        startTimezone: zone,
        endTimezone: zone,
      };
      const text =
        rule.kind === 'weekly'
          ? `FREQ=WEEKLY${rule.interval > 1 ? `;INTERVAL=${rule.interval}` : ''}`
          : rule.kind === 'weekdays'
            ? 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR'
            : 'FREQ=DAILY';
      // A quarter end by UNTIL, a quarter by COUNT (many of those before the window), half never.
      const ending = next();
      let until: number | undefined;
      let count: number | undefined;
      if (ending < 0.25) until = Math.max(firstStart + 7 * DAY, start + Math.floor((next() * 200 - 150) * DAY));
      else if (ending < 0.5) count = 5 + Math.floor(next() * 300);
      const lines = [
        `RRULE:${text}${until !== undefined ? `;UNTIL=${stamp(until)}` : ''}${count !== undefined ? `;COUNT=${count}` : ''}`,
      ];

      // Occurrences (original starts) up to the window's end plus a day, before EXDATEs and overrides. Local
      // wall time read as UTC is within 14 hours of the instant, so exact conversions are needed only near edges.
      const dates: string[] = [];
      const approximate = (date: string) =>
        Date.parse(`${date}T00:00:00Z`) / 1000 + wall.hour * 3600 + wall.minute * 60;
      for (const date of ruleDates(rule, first)) {
        const approx = approximate(date);
        if (approx > end + 2 * DAY || (count !== undefined && dates.length >= count)) break;
        if (
          until !== undefined &&
          approx > until - 2 * DAY &&
          (approx > until + 2 * DAY || instant(zone, { date, ...wall }) > until)
        )
          break;
        dates.push(date);
      }
      const exact = new Map<number, number>();
      const occurrence = (position: number) => {
        let at = exact.get(position);
        if (at === undefined) exact.set(position, (at = instant(zone, { date: dates[position]!, ...wall })));
        return at;
      };
      const near: number[] = [];
      dates.forEach((date, position) => {
        const approx = approximate(date);
        if (approx + length > start - 2 * DAY && approx < end + 2 * DAY) {
          const at = occurrence(position);
          if (at + length > start - DAY && at < end + DAY) near.push(at);
        }
      });
      // EXDATEs: 0–3, in UTC or in the zone's wall time (as Outlook writes them), mostly near the window.
      const excluded = new Set<number>();
      const exdates = Math.floor(next() * 4);
      for (let serialDate = 0; serialDate < exdates; serialDate++) {
        if (dates.length === 0) break;
        const at = near.length > 0 && next() < 0.8 ? pick(near) : occurrence(Math.floor(next() * dates.length));
        if (excluded.has(at)) continue;
        excluded.add(at);
        if (next() < 0.5) lines.push(`EXDATE:${stamp(at)}`);
        else {
          const local = toZonedTime(new Date(at * 1000), zone);
          lines.push(
            `EXDATE;TZID=${zone}:${local.getFullYear()}${pad(local.getMonth() + 1)}${pad(local.getDate())}T${pad(local.getHours())}${pad(local.getMinutes())}00`,
          );
        }
      }
      row(id, when, {}, lines);
      result.counts.series++;

      // An override of one instance in the window for about one series in five: moved (2/3) or cancelled.
      const replaced = new Set<number>();
      const candidates = near.filter((at) => !excluded.has(at));
      if (candidates.length > 0 && next() < 0.2) {
        const original = pick(candidates);
        replaced.add(original);
        const cancelled = next() < 1 / 3;
        const moved = original + (1 + Math.floor(next() * 3)) * 3600;
        const overrideWhen: EventTime = {
          kind: 'timespan',
          startTime: moved,
          endTime: moved + length,
          startTimezone: zone,
          endTimezone: zone,
        };
        row(`${id}-o${overrides}`, overrideWhen, {
          masterEventId: id,
          originalStartTime: original,
          ...(cancelled ? { status: 'cancelled' as const } : {}),
        });
        overrides++;
        if (!cancelled) busy.push({ start: moved, end: moved + length, eventId: `${id}-o${overrides - 1}` });
      }
      for (const at of near)
        if (!excluded.has(at) && !replaced.has(at)) busy.push({ start: at, end: at + length, eventId: id });
    }
    result.counts.overrides += overrides;

    // Single events: most in the window, the rest up to a year before or after it.
    const singles = options.events - options.series - overrides;
    for (let serial = 0; serial < singles; serial++) {
      const id = `${grant.id}-e${serial}`;
      const placement = next();
      const at =
        placement < 0.4
          ? start + Math.floor((next() * options.days * DAY) / 300) * 300
          : placement < 0.7
            ? start - Math.floor((next() * 365 * DAY) / 300) * 300 - DAY
            : end + Math.floor((next() * 365 * DAY) / 300) * 300;
      const kind = next();
      if (kind < 0.02) {
        // All-day: one or two days in the calendar's zone.
        const first = localDate(zone, at);
        const last = plusDays(first, Math.floor(next() * 2));
        row(id, first === last ? { kind: 'date', date: first } : { kind: 'datespan', startDate: first, endDate: last });
        busy.push({
          start: instant(zone, { date: first, hour: 0, minute: 0 }),
          end: instant(zone, { date: plusDays(last, 1), hour: 0, minute: 0 }),
          eventId: id,
        });
        result.counts.allDay++;
        continue;
      }
      const length = (1 + Math.floor(next() * 4)) * 15 * 60;
      const when: EventTime = {
        kind: 'timespan',
        startTime: at,
        endTime: at + length,
        startTimezone: zone,
        endTimezone: zone,
      };
      const flavour = next();
      if (flavour < 0.03) row(id, when, { busy: false });
      else if (flavour < 0.05) row(id, when, { status: 'cancelled' });
      else if (flavour < 0.07)
        row(id, when, {
          participants: [
            { email, status: 'no' },
            { email: 'someone@example.com', status: 'yes' },
          ],
        });
      else {
        row(
          id,
          when,
          flavour < 0.1
            ? { status: 'maybe' }
            : flavour < 0.3
              ? {
                  participants: [
                    { email, status: 'yes' },
                    { email: 'someone@example.com', status: 'noreply' },
                  ],
                }
              : {},
        );
        busy.push({ start: at, end: at + length, eventId: id });
      }
    }
    result.counts.singles += singles;
    for (let offset = 0; offset < rows.length; offset += 500) {
      await db.write(async (tx) => {
        await tx.insert(tables.events).values(rows.slice(offset, offset + 500));
      });
    }
    result.counts.rows += rows.length;
  }
  return result;
}
