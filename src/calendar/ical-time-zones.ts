/**
 * @module calendar/ical-time-zones
 * Time zones in iCalendar. Written: a VTIMEZONE generated from the runtime's tz database for every TZID we write.
 * Read: every TZID mapped to an IANA name (Windows names included) or, for a VTIMEZONE that names no known zone,
 * its offset changes computed over the years the calendar needs, under {@link ICAL_LIMITS}.
 */
import ICAL from 'ical.js';
import {
  epochToWallAsUtc,
  ianaFromTzid,
  offsetAt,
  transitionsBetween,
  wallTimeToEpochAsUtc,
  zonedWallTimeToEpoch,
  zoneMatchingOffsets,
  type OffsetTransition,
  type WallTime,
} from '../time-zones.js';
import { checkRule } from './ical-rules.js';
import {
  ICAL_LIMITS,
  floatingTime,
  wallOf,
  wallSecondsOf,
  type ICalComponent,
  type ICalProperty,
  type ICalRecur,
  type ICalTime,
  type Result,
} from './ical-values.js';

interface Observance {
  kind: 'standard' | 'daylight';
  transition: OffsetTransition;
}

function localOnset(transition: OffsetTransition): WallTime {
  return epochToWallAsUtc(transition.epochMs + transition.offsetFrom);
}

function weekdayRule(wall: WallTime, last: boolean): string {
  const weekday = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][
    new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay()
  ]!;
  return `FREQ=YEARLY;BYMONTH=${wall.month};BYDAY=${last ? -1 : Math.ceil(wall.day / 7)}${weekday}`;
}

/** The yearly rule that produces the given transitions, tried as "last weekday" and "nth weekday" of the month. */
function yearlyRuleFor(transition: OffsetTransition, later: OffsetTransition[]): string | undefined {
  const onset = localOnset(transition);
  const daysInMonth = new Date(Date.UTC(onset.year, onset.month, 0)).getUTCDate();
  const candidates =
    onset.day + 7 > daysInMonth ? [weekdayRule(onset, true), weekdayRule(onset, false)] : [weekdayRule(onset, false)];
  for (const rule of candidates) {
    const iterator = ICAL.Recur.fromString(rule).iterator(floatingTime(onset));
    iterator.next();
    const matches = later.every((expected) => {
      const next = iterator.next();
      if (!next) return false;
      const got = wallOf(next);
      const want = localOnset(expected);
      return (
        got.year === want.year &&
        got.month === want.month &&
        got.day === want.day &&
        got.hour === want.hour &&
        got.minute === want.minute
      );
    });
    if (matches) return rule;
  }
  return undefined;
}

const vtimezoneCache = new Map<string, ICalComponent>();

/**
 * A VTIMEZONE for an IANA zone, valid from `fromYear` on: yearly rules when the zone follows one (checked
 * against the next years), otherwise the explicit transitions of twenty years (RDATE).
 */
export function buildVtimezone(timeZone: string, fromYear: number): ICalComponent {
  const key = `${timeZone}@${fromYear}`;
  const cached = vtimezoneCache.get(key);
  if (cached) return new ICAL.Component(cached.toJSON() as unknown[]);

  const component = new ICAL.Component('vtimezone');
  component.addPropertyWithValue('tzid', timeZone);
  const transitions = transitionsBetween(timeZone, fromYear, fromYear + 8);
  const firstYear = transitions.filter((transition) => new Date(transition.epochMs).getUTCFullYear() === fromYear);
  const addObservance = (
    kind: 'standard' | 'daylight',
    from: number,
    to: number,
    onset: WallTime,
    extra: (sub: ICalComponent) => void,
  ) => {
    const sub = new ICAL.Component(kind);
    sub.addPropertyWithValue('dtstart', floatingTime(onset));
    sub.addPropertyWithValue('tzoffsetfrom', ICAL.UtcOffset.fromSeconds(Math.round(from / 1000)));
    sub.addPropertyWithValue('tzoffsetto', ICAL.UtcOffset.fromSeconds(Math.round(to / 1000)));
    extra(sub);
    component.addSubcomponent(sub);
  };

  if (transitions.length === 0) {
    const offset = offsetAt(timeZone, Date.UTC(fromYear, 0, 1));
    addObservance(
      'standard',
      offset,
      offset,
      { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 },
      () => undefined,
    );
  } else {
    const observances: Observance[] = firstYear.map((transition) => ({
      kind: transition.offsetTo > transition.offsetFrom ? 'daylight' : 'standard',
      transition,
    }));
    const rules = observances.map((observance) => {
      const same = transitions.filter(
        (other) =>
          other.epochMs > observance.transition.epochMs &&
          other.offsetFrom === observance.transition.offsetFrom &&
          other.offsetTo === observance.transition.offsetTo,
      );
      return same.length >= 2 ? yearlyRuleFor(observance.transition, same) : undefined;
    });
    if (observances.length > 0 && rules.every((rule) => rule !== undefined)) {
      observances.forEach((observance, index) => {
        addObservance(
          observance.kind,
          observance.transition.offsetFrom,
          observance.transition.offsetTo,
          localOnset(observance.transition),
          (sub) => {
            sub.addPropertyWithValue('rrule', ICAL.Recur.fromString(rules[index]!));
          },
        );
      });
    } else {
      // Irregular zone: list every transition of twenty years explicitly.
      const all = transitionsBetween(timeZone, fromYear, fromYear + 20);
      const before = offsetAt(timeZone, Date.UTC(fromYear, 0, 1));
      addObservance(
        'standard',
        before,
        before,
        { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 },
        () => undefined,
      );
      for (const transition of all) {
        addObservance(
          transition.offsetTo > transition.offsetFrom ? 'daylight' : 'standard',
          transition.offsetFrom,
          transition.offsetTo,
          localOnset(transition),
          () => undefined,
        );
      }
    }
  }
  vtimezoneCache.set(key, component);
  return new ICAL.Component(component.toJSON() as unknown[]);
}

interface ZoneResolution {
  /** The IANA zone we store. */
  zone: string;
  /** The VTIMEZONE to convert with, when the name alone did not say (times converted by its rules). */
  definition?: CustomZone;
}

/** One change of UTC offset of a VTIMEZONE: its instant (unix seconds) and the offsets before and after (seconds). */
interface ZoneChange {
  onset: number;
  from: number;
  to: number;
}

/**
 * A VTIMEZONE whose TZID names no zone we know, reduced to its offset changes over the years the calendar needs.
 * ical.js's own ICAL.Timezone is never built from untrusted input: on first use it expands every observance from
 * its DTSTART (1601 in Outlook's) up to five years past the current year, step by step of its rule, and again for
 * each later year asked for; a MINUTELY rule from 1601 ran the heap out.
 */
interface CustomZone {
  /** Sorted by the wall-clock time from which each applies. */
  changes: ZoneChange[];
}

/** Wall-clock seconds (as if UTC) from which a change applies: a gap's times take the new offset, a repeated hour's the later. */
const appliesFrom = (change: ZoneChange) => change.onset + Math.min(change.from, change.to);

/** The UTC offset (seconds) of a wall-clock time (seconds as if UTC) in a custom zone; before its first change, that change's TZOFFSETFROM. */
function customOffsetAt(zone: CustomZone, wall: number): number {
  const { changes } = zone;
  let low = 0;
  let high = changes.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (appliesFrom(changes[middle]!) <= wall) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found >= 0 ? changes[found]!.to : (changes[0]?.from ?? 0);
}

/**
 * Seconds of a UTC-OFFSET property (TZOFFSETFROM/TZOFFSETTO), or undefined when it is missing, malformed or beyond
 * ±18 hours. Read from the text as written: ical.js wraps an offset such as +9959 into -0801.
 */
function offsetSeconds(property: ICalProperty | null): number | undefined {
  const raw = (property?.toJSON() as unknown[] | undefined)?.[3];
  const match = typeof raw === 'string' ? /^([+-])(\d{2}):?(\d{2})(?::?(\d{2}))?$/.exec(raw) : null;
  if (!match) return undefined;
  const [, sign, hours, minutes, seconds] = match;
  if (Number(minutes) > 59 || Number(seconds ?? 0) > 59) return undefined;
  const total = Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds ?? 0);
  return total <= ICAL_LIMITS.maxUtcOffset ? (sign === '-' ? -total : total) : undefined;
}

/** Frequencies an observance rule may have: sub-daily ones are refused (no zone changes offset more than daily). */
const OBSERVANCE_FREQUENCIES = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);

/**
 * The start of an observance's rule moved forward by whole periods of the rule, to the latest such date in
 * `year` or before. Only rules without COUNT are moved (COUNT numbers occurrences from the real start). The moved
 * start itself may not match the rule (ical.js yields it first regardless): that touches only `year`, which is
 * before every year read.
 */
function rebasedStart(start: ICalTime, rule: ICalRecur, year: number): ICalTime {
  if (rule.count || start.year >= year) return start;
  const interval = Math.max(1, rule.interval);
  const freq = rule.freq;
  const make = (y: number, m: number) =>
    ICAL.Time.fromData({
      year: y,
      month: m,
      day: Math.min(start.day, ICAL.Time.daysInMonth(m, y)),
      hour: start.hour,
      minute: start.minute,
      second: start.second,
      isDate: start.isDate,
    });
  if (freq === 'YEARLY') return make(start.year + Math.floor((year - start.year) / interval) * interval, start.month);
  if (freq === 'MONTHLY') {
    const months = Math.floor(((year - start.year) * 12) / interval) * interval;
    const index = start.month - 1 + months;
    return make(start.year + Math.floor(index / 12), (index % 12) + 1);
  }
  const periodDays = (freq === 'WEEKLY' ? 7 : 1) * interval;
  const days = Math.floor((Date.UTC(year, 0, 1) - Date.UTC(start.year, start.month - 1, start.day)) / 86_400_000);
  const moved = start.clone();
  moved.adjust(Math.floor(days / periodDays) * periodDays, 0, 0, 0);
  return moved;
}

/**
 * The offset changes of one VTIMEZONE during the UTC years `fromYear`..`toYear` (plus the last one before, which
 * gives the offset in force at the start), or the reason it is refused: an offset beyond ±18 hours, a sub-daily
 * rule, too many observances or changes. `steps` counts rule steps across the calendar's zones.
 */
function customZoneOf(
  vtimezone: ICalComponent,
  tzid: string,
  fromYear: number,
  toYear: number,
  steps: { count: number },
): Result<CustomZone> {
  const name = JSON.stringify(tzid.slice(0, 80));
  const observances = vtimezone
    .getAllSubcomponents()
    .filter((sub) => sub.name === 'standard' || sub.name === 'daylight');
  if (observances.length > ICAL_LIMITS.maxObservances)
    return { ok: false, error: `VTIMEZONE ${name} has more than ${ICAL_LIMITS.maxObservances} observances.` };
  const changes: ZoneChange[] = [];
  const tooMany = (): Result<CustomZone> => ({
    ok: false,
    error: `VTIMEZONE ${name} has more than ${ICAL_LIMITS.maxZoneChanges} offset changes in ${fromYear}–${toYear}.`,
  });
  for (const observance of observances) {
    const kind = observance.name.toUpperCase();
    const start = observance.getFirstPropertyValue('dtstart');
    const from = offsetSeconds(observance.getFirstProperty('tzoffsetfrom'));
    const to = offsetSeconds(observance.getFirstProperty('tzoffsetto'));
    if (from === undefined || to === undefined) {
      return { ok: false, error: `VTIMEZONE ${name}: a ${kind} needs TZOFFSETFROM and TZOFFSETTO within ±18:00.` };
    }
    if (!(start instanceof ICAL.Time)) return { ok: false, error: `VTIMEZONE ${name}: a ${kind} has no DTSTART.` };
    // Changes before the years needed are dropped, but for the latest one of each observance (it may be in force).
    const cutoff = Date.UTC(fromYear - 1, 0, 1) / 1000;
    let before: ZoneChange | undefined;
    const add = (time: ICalTime, utc: boolean): boolean => {
      const wall = wallSecondsOf(
        time.isDate
          ? ICAL.Time.fromData({
              year: time.year,
              month: time.month,
              day: time.day,
              hour: start.hour,
              minute: start.minute,
              second: start.second,
            })
          : time,
      );
      const change = { onset: utc ? wall : wall - from, from, to };
      if (change.onset < cutoff) {
        if (!before || before.onset < change.onset) before = change;
        return true;
      }
      changes.push(change);
      return changes.length <= ICAL_LIMITS.maxZoneChanges;
    };
    const rdates = observance.getAllProperties('rdate');
    const ruleValue = observance.getFirstPropertyValue('rrule');
    if (!ruleValue && rdates.length === 0) add(start, false);
    for (const property of rdates) {
      for (const raw of property.getValues() as unknown[]) {
        const value = raw instanceof ICAL.Period ? raw.start : raw;
        if (!(value instanceof ICAL.Time) || value.year > toYear) continue;
        if (!add(value, value.zone === ICAL.Timezone.utcTimezone)) return tooMany();
      }
    }
    if (ruleValue) {
      if (!(ruleValue instanceof ICAL.Recur))
        return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE is not valid.` };
      if (!OBSERVANCE_FREQUENCIES.has(ruleValue.freq)) {
        return {
          ok: false,
          error: `VTIMEZONE ${name}: a ${kind} RRULE with FREQ=${String(ruleValue.freq)} is refused; observances recur yearly (DAILY at most).`,
        };
      }
      const checked = checkRule(ruleValue.toString(), OBSERVANCE_FREQUENCIES);
      if (!checked.ok) return { ok: false, error: `VTIMEZONE ${name}: ${checked.error}` };
      const rule = checked.value;
      if (rule.until && rule.until.zone === ICAL.Timezone.utcTimezone) {
        // UNTIL is UTC; the iterator runs in the observance's wall time (before the change), as ical.js does it.
        const until = ICAL.Time.fromData({ ...wallOf(rule.until), isDate: rule.until.isDate });
        until.adjust(0, 0, 0, from);
        rule.until = until;
      }
      let iterator;
      try {
        iterator = rule.iterator(rebasedStart(start, rule, fromYear - 1));
      } catch {
        return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE cannot be expanded.` };
      }
      for (;;) {
        if (++steps.count > ICAL_LIMITS.maxZoneSteps)
          return {
            ok: false,
            error: `the calendar's VTIMEZONEs take more than ${ICAL_LIMITS.maxZoneSteps} rule steps to expand.`,
          };
        let next: ICalTime | null;
        try {
          next = iterator.next();
        } catch {
          return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE cannot be expanded.` };
        }
        if (!next || next.year > toYear) break;
        if (!add(next, false)) return tooMany();
      }
    }
    if (before) changes.push(before);
  }
  changes.sort((a, b) => appliesFrom(a) - appliesFrom(b) || a.onset - b.onset);
  return { ok: true, value: { changes } };
}

/**
 * The zone of each VTIMEZONE: an IANA zone its TZID names (Windows names included), else the IANA zone whose
 * offsets its rules reproduce in `years[0]` (when one does) with the definition to convert with, else UTC with the
 * definition. Definitions are computed only for `years` (the calendar's events' years, padded by one).
 */
export function resolveZones(
  vtimezones: ICalComponent[],
  warnings: string[],
  years: [number, number],
): Result<Map<string, ZoneResolution>> {
  const result = new Map<string, ZoneResolution>();
  if (vtimezones.length > ICAL_LIMITS.maxTimeZones)
    return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxTimeZones} VTIMEZONEs.` };
  const steps = { count: 0 };
  for (const vtimezone of vtimezones) {
    const tzid = vtimezone.getFirstPropertyValue('tzid');
    if (typeof tzid !== 'string' || result.has(tzid)) continue;
    const named = ianaFromTzid(tzid);
    if (named) {
      result.set(tzid, { zone: named });
      continue;
    }
    const definition = customZoneOf(vtimezone, tzid, years[0], years[1], steps);
    if (!definition.ok) return definition;
    const matched = zoneMatchingOffsets(
      Math.max(years[0], Math.min(years[1] - 1, years[0] + 1)),
      (wall) => customOffsetAt(definition.value, wallTimeToEpochAsUtc(wall) / 1000) * 1000,
    );
    if (matched) {
      result.set(tzid, { zone: matched, definition: definition.value });
    } else {
      warnings.push(
        `time zone ${JSON.stringify(tzid)} is not known; its own definition is used and events are stored in UTC.`,
      );
      result.set(tzid, { zone: 'UTC', definition: definition.value });
    }
  }
  return { ok: true, value: result };
}

export interface TimeReader {
  /** The instant and the IANA zone of a date-time property value; undefined when its zone is unknown. */
  read(time: ICalTime, tzid: string | null): { unix: number; zone: string } | undefined;
}

/** Reads date-time values with the calendar's resolved zones; floating times in `floatingZone`. */
export function timeReader(zones: Map<string, ZoneResolution>, floatingZone: string, warnings: string[]): TimeReader {
  return {
    read(time, tzid) {
      if (time.zone === ICAL.Timezone.utcTimezone)
        return { unix: wallTimeToEpochAsUtc(wallOf(time)) / 1000, zone: 'UTC' };
      if (!tzid)
        return { unix: Math.floor(zonedWallTimeToEpoch(floatingZone, wallOf(time)) / 1000), zone: floatingZone };
      const resolution = zones.get(tzid) ?? (ianaFromTzid(tzid) ? { zone: ianaFromTzid(tzid)! } : undefined);
      if (!resolution) {
        warnings.push(`time zone ${JSON.stringify(tzid)} has no definition; read as UTC.`);
        return { unix: wallTimeToEpochAsUtc(wallOf(time)) / 1000, zone: 'UTC' };
      }
      if (resolution.definition) {
        const wall = wallTimeToEpochAsUtc(wallOf(time)) / 1000;
        return { unix: wall - customOffsetAt(resolution.definition, wall), zone: resolution.zone };
      }
      return { unix: Math.floor(zonedWallTimeToEpoch(resolution.zone, wallOf(time)) / 1000), zone: resolution.zone };
    },
  };
}
