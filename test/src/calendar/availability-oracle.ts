/**
 * A brute-force, minute-by-minute reference for src/calendar/availability.ts, written from the rules in that
 * module's documentation and sharing none of its code: wall clocks come straight from Intl, open hours are
 * decided minute by minute, busy time is a per-minute flag. Inputs must be whole minutes.
 */
import type { AvailabilityQuery, ExclusionReason, TimeSlot } from '../../../src/calendar/availability.js';

const formatters = new Map<string, Intl.DateTimeFormat>();
const wallCache = new Map<string, Wall>();

interface Wall {
  /** Seconds since 1970-01-01T00:00 of the zone's wall clock. */
  seconds: number;
  date: string;
  weekday: number;
  minuteOfDay: number;
}

/** The wall clock of `timeZone` at unix second `t` (a whole minute). */
export function wallAt(timeZone: string, t: number): Wall {
  const key = `${timeZone}|${t}`;
  const cached = wallCache.get(key);
  if (cached) return cached;
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(new Date(t * 1000)))
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const seconds = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute) / 1000;
  const date = new Date(seconds * 1000).toISOString().slice(0, 10);
  const wall: Wall = {
    seconds,
    date,
    weekday: new Date(seconds * 1000).getUTCDay(),
    minuteOfDay: parts.hour! * 60 + parts.minute!,
  };
  if (wallCache.size > 2_000_000) wallCache.clear();
  wallCache.set(key, wall);
  return wall;
}

function clockMinutes(text: string): number {
  const [hours, minutes] = text.split(':').map(Number);
  return hours! * 60 + minutes!;
}

type Participant = AvailabilityQuery['participants'][number];

/** Whether `participant` has any open-hours rule at all (otherwise always open). */
function hasRules(query: AvailabilityQuery, participant: Participant): boolean {
  const rules = participant.openHours?.length ? participant.openHours : (query.defaultOpenHours ?? []);
  return (
    rules.length > 0 ||
    (participant.specificTimeAvailability?.length ?? 0) > 0 ||
    participant.onlySpecificTimeAvailability === true
  );
}

/** Open at minute `t`, and the time zone of the rule that opens it (specific entries first, then rules). */
function openAt(query: AvailabilityQuery, participant: Participant, t: number): { open: boolean; timeZone: string } {
  const rules = participant.openHours?.length ? participant.openHours : (query.defaultOpenHours ?? []);
  const specifics = participant.specificTimeAvailability ?? [];
  const fallbackZone = rules[0]?.timezone ?? 'UTC';
  let onSpecificDay = false;
  for (const entry of specifics) {
    const wall = wallAt(entry.timezone ?? fallbackZone, t);
    if (wall.date !== entry.date) continue;
    onSpecificDay = true;
    if (wall.minuteOfDay >= clockMinutes(entry.start) && wall.minuteOfDay < clockMinutes(entry.end))
      return { open: true, timeZone: entry.timezone ?? fallbackZone };
  }
  if (onSpecificDay || participant.onlySpecificTimeAvailability) return { open: false, timeZone: 'UTC' };
  if (rules.length === 0) return { open: true, timeZone: 'UTC' };
  for (const rule of rules) {
    const wall = wallAt(rule.timezone, t);
    if (!rule.days.includes(wall.weekday) || (rule.exdates ?? []).includes(wall.date)) continue;
    if (wall.minuteOfDay >= clockMinutes(rule.start) && wall.minuteOfDay < clockMinutes(rule.end))
      return { open: true, timeZone: rule.timezone };
  }
  return { open: false, timeZone: 'UTC' };
}

/** Everything the oracle knows about one participant, per minute of `[from, to)`. */
interface MinuteMap {
  from: number;
  open: boolean[];
  /** Prefix sums of minutes that are closed or inside a widened busy interval. */
  badPrefix: number[];
  openPrefix: number[];
}

function minuteMap(query: AvailabilityQuery, participant: Participant, from: number, to: number): MinuteMap {
  const before = (query.buffer?.before ?? 0) * 60;
  const after = (query.buffer?.after ?? 0) * 60;
  const count = (to - from) / 60;
  const open: boolean[] = [];
  const badPrefix = [0];
  const openPrefix = [0];
  for (let index = 0; index < count; index++) {
    const t = from + index * 60;
    const isOpen = openAt(query, participant, t).open;
    const busy = participant.busy.some((interval) => interval.start - before <= t && t < interval.end + after);
    open.push(isOpen);
    badPrefix.push(badPrefix[index]! + (!isOpen || busy ? 1 : 0));
    openPrefix.push(openPrefix[index]! + (isOpen ? 0 : 1));
  }
  return { from, open, badPrefix, openPrefix };
}

function range(map: MinuteMap, prefix: number[], start: number, end: number): number {
  return prefix[(end - map.from) / 60]! - prefix[(start - map.from) / 60]!;
}

/** Round-robin order, written out longhand. */
export function oracleOrder(participants: readonly Participant[]): string[] {
  const never = participants
    .filter((participant) => participant.lastBookedAt == null)
    .map((participant) => participant.email)
    .sort();
  const booked = participants
    .filter((participant) => participant.lastBookedAt != null)
    .sort((a, b) =>
      a.lastBookedAt! !== b.lastBookedAt! ? a.lastBookedAt! - b.lastBookedAt! : a.email < b.email ? -1 : 1,
    )
    .map((participant) => participant.email);
  return [...never, ...booked];
}

/** Why `participant` cannot take `[start, end)`, per minute. */
function oracleConflicts(
  query: AvailabilityQuery,
  participant: Participant,
  map: MinuteMap,
  start: number,
  end: number,
): ExclusionReason[] {
  const before = (query.buffer?.before ?? 0) * 60;
  const after = (query.buffer?.after ?? 0) * 60;
  const reasons: ExclusionReason[] = [];
  if (range(map, map.openPrefix, start, end) > 0)
    reasons.push({ type: 'outside_open_hours', email: participant.email });
  const busyIds = new Set<string>();
  const bufferIds = new Set<string>();
  let busyHit = false;
  let bufferHit = false;
  for (const interval of participant.busy) {
    const widenedStart = interval.start - before;
    const widenedEnd = interval.end + after;
    if (!(widenedStart < end && widenedEnd > start && widenedEnd > widenedStart)) continue;
    if (interval.start < interval.end && interval.start < end && interval.end > start) {
      busyHit = true;
      if (interval.eventId) busyIds.add(interval.eventId);
    } else {
      bufferHit = true;
      if (interval.eventId) bufferIds.add(interval.eventId);
    }
  }
  if (busyHit) reasons.push({ type: 'busy', email: participant.email, eventIds: [...busyIds].sort() });
  if (bufferHit) reasons.push({ type: 'buffer', email: participant.email, eventIds: [...bufferIds].sort() });
  return reasons;
}

/** The oracle's answer, with explanation reasons normalised (event ids sorted). */
export interface OracleResult {
  timeSlots: TimeSlot[];
  order: string[];
  explanations: { startTime: number; endTime: number; reasons: ExclusionReason[] }[];
  candidates: number[];
}

function search(
  query: AvailabilityQuery,
  considered: readonly Participant[],
  maps: Map<string, MinuteMap>,
  mode: 'all' | 'any',
  sortEmails: (emails: string[]) => string[],
) {
  const duration = query.durationMinutes * 60;
  const interval = (query.intervalMinutes ?? query.durationMinutes) * 60;
  const roundTo = query.roundTo ?? 15;
  const timeSlots: TimeSlot[] = [];
  const explanations: OracleResult['explanations'] = [];
  const candidates: number[] = [];
  const groupOpen = (t: number) => {
    const flags = considered.map((participant) => maps.get(participant.email)!.open[(t - query.startTime) / 60]!);
    return mode === 'all' ? flags.every(Boolean) : flags.some(Boolean);
  };
  let t = query.startTime;
  while (t < query.endTime) {
    if (!groupOpen(t)) {
      t += 60;
      continue;
    }
    const periodStart = t;
    while (t < query.endTime && groupOpen(t)) t += 60;
    const periodEnd = t;
    // The grid's time zone: first participant with rules that is open at the period start.
    let timeZone = 'UTC';
    for (const participant of considered) {
      if (!hasRules(query, participant)) continue;
      const at = openAt(query, participant, periodStart);
      if (at.open) {
        timeZone = at.timeZone;
        break;
      }
    }
    let anchor = periodStart;
    while (anchor < periodEnd && wallAt(timeZone, anchor).minuteOfDay % roundTo !== 0) anchor += 60;
    if (anchor >= periodEnd) continue;
    const anchorWall = wallAt(timeZone, anchor).seconds;
    for (let start = anchor; start < periodEnd; start += 60) {
      const wall = wallAt(timeZone, start).seconds;
      if ((((wall - anchorWall) % interval) + interval) % interval !== 0) continue;
      let repeated = false;
      for (let back = 1; back <= 180 && !repeated; back++)
        if (wallAt(timeZone, start - back * 60).seconds >= wall) repeated = true;
      if (repeated) continue;
      candidates.push(start);
      const end = start + duration;
      const inWindow = end <= query.endTime;
      const available = inWindow
        ? considered
            .filter(
              (participant) =>
                range(maps.get(participant.email)!, maps.get(participant.email)!.badPrefix, start, end) === 0,
            )
            .map((participant) => participant.email)
        : [];
      const offered = inWindow && (mode === 'all' ? available.length === considered.length : available.length > 0);
      if (offered) timeSlots.push({ emails: sortEmails(available), startTime: start, endTime: end });
      else {
        const reasons: ExclusionReason[] = inWindow ? [] : [{ type: 'past_window' }];
        for (const participant of considered)
          reasons.push(...oracleConflicts(query, participant, maps.get(participant.email)!, start, end));
        explanations.push({ startTime: start, endTime: end, reasons });
      }
    }
  }
  return { timeSlots, explanations, candidates };
}

/** Brute-force availability. */
export function oracleAvailability(query: AvailabilityQuery): OracleResult {
  const to = query.endTime + query.durationMinutes * 60;
  const maps = new Map(
    query.participants.map((participant) => [participant.email, minuteMap(query, participant, query.startTime, to)]),
  );
  const method = query.method ?? 'collective';
  if (method === 'collective')
    return { ...search(query, query.participants, maps, 'all', (emails) => emails), order: [] };
  const order = oracleOrder(query.participants);
  const byOrder = (emails: string[]) => order.filter((email) => emails.includes(email));
  if (method === 'max-fairness') {
    const top = new Set(order.slice(0, Math.ceil(order.length / 2)));
    const result = search(
      query,
      query.participants.filter((participant) => top.has(participant.email)),
      maps,
      'any',
      byOrder,
    );
    if (result.timeSlots.length > 0 || top.size === query.participants.length) return { ...result, order };
  }
  return { ...search(query, query.participants, maps, 'any', byOrder), order };
}

/** Sorts event ids inside reasons so two answers compare regardless of id order. */
export function normaliseReasons(reasons: readonly ExclusionReason[]): ExclusionReason[] {
  return reasons.map((reason) =>
    'eventIds' in reason ? { ...reason, eventIds: [...reason.eventIds].sort() } : reason,
  );
}
