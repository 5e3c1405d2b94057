/**
 * @module calendar/availability-open-hours
 * The open hours of a participant (./availability.ts): the weekly rules of its time zones, replaced on the dates of
 * its specific times, as intervals labelled with the zone of the rule that opened them.
 */
import type { AvailabilityParticipant, OpenHoursRule } from './availability-types.js';
import { mergeIntervals, subtractIntervals, type Interval } from './availability-intervals.js';
import {
  DAY_MARGIN,
  isValidTimeZone,
  parseClock,
  SECONDS_PER_DAY,
  wallMidnight,
  zoneFor,
  dateOfWall,
} from './availability-zones.js';

/** An open interval tagged with the time zone of the rule that opened it; lower rank wins. */
export interface LabeledInterval extends Interval {
  timeZone: string;
  rank: number;
}

function ruleIntervals(rule: OpenHoursRule, rank: number, from: number, to: number): LabeledInterval[] {
  const startOfDay = parseClock(rule.start);
  const endOfDay = parseClock(rule.end, true);
  if (endOfDay <= startOfDay) throw new RangeError(`open hours end ${rule.end} must be after start ${rule.start}`);
  if (!isValidTimeZone(rule.timezone)) throw new RangeError(`unknown time zone ${rule.timezone}`);
  const days = new Set(rule.days);
  const exdates = new Set(rule.exdates ?? []);
  const zone = zoneFor(rule.timezone, from - DAY_MARGIN, to + DAY_MARGIN);
  const result: LabeledInterval[] = [];
  const firstDay = Math.floor((from - DAY_MARGIN / 2) / SECONDS_PER_DAY) * SECONDS_PER_DAY;
  for (let day = firstDay; day < to + DAY_MARGIN / 2; day += SECONDS_PER_DAY) {
    const weekday = new Date(day * 1000).getUTCDay();
    if (!days.has(weekday) || exdates.has(dateOfWall(day))) continue;
    for (const piece of zone.instantsOfWallRange(day + startOfDay, day + endOfDay)) {
      const start = Math.max(piece.start, from);
      const end = Math.min(piece.end, to);
      if (start < end) result.push({ start, end, timeZone: rule.timezone, rank });
    }
  }
  return result;
}

/** Open time of one participant within `[from, to)`: merged intervals plus labels; null when always open. */
interface OpenTime {
  merged: Interval[];
  labeled: LabeledInterval[];
}

export function participantOpenTime(
  participant: AvailabilityParticipant,
  defaultOpenHours: readonly OpenHoursRule[] | undefined,
  from: number,
  to: number,
): OpenTime | null {
  const rules =
    participant.openHours && participant.openHours.length > 0 ? participant.openHours : (defaultOpenHours ?? []);
  const specifics = participant.specificTimeAvailability ?? [];
  const onlySpecific = participant.onlySpecificTimeAvailability === true;
  if (rules.length === 0 && specifics.length === 0 && !onlySpecific) return null;

  const specificRankBase = 0;
  const ruleRankBase = specifics.length;
  let base: LabeledInterval[];
  if (onlySpecific) base = [];
  else if (rules.length === 0) base = [{ start: from, end: to, timeZone: 'UTC', rank: Number.MAX_SAFE_INTEGER }];
  else base = rules.flatMap((rule, index) => ruleIntervals(rule, ruleRankBase + index, from, to));

  const fallbackZone = rules[0]?.timezone ?? 'UTC';
  const specificDays: Interval[] = [];
  const specificTimes: LabeledInterval[] = [];
  specifics.forEach((entry, index) => {
    const timeZone = entry.timezone ?? fallbackZone;
    if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${timeZone}`);
    const midnight = wallMidnight(entry.date);
    const startOfDay = parseClock(entry.start);
    const endOfDay = parseClock(entry.end, true);
    if (endOfDay <= startOfDay)
      throw new RangeError(`specific time end ${entry.end} must be after start ${entry.start}`);
    const zone = zoneFor(timeZone, from - DAY_MARGIN, to + DAY_MARGIN);
    specificDays.push(...zone.instantsOfWallRange(midnight, midnight + SECONDS_PER_DAY));
    for (const piece of zone.instantsOfWallRange(midnight + startOfDay, midnight + endOfDay)) {
      const start = Math.max(piece.start, from);
      const end = Math.min(piece.end, to);
      if (start < end) specificTimes.push({ start, end, timeZone, rank: specificRankBase + index });
    }
  });

  const removed = mergeIntervals(specificDays);
  const labeled: LabeledInterval[] = [...specificTimes];
  for (const interval of base) {
    for (const kept of subtractIntervals([interval], removed))
      labeled.push({ ...kept, timeZone: interval.timeZone, rank: interval.rank });
  }
  return { merged: mergeIntervals(labeled), labeled };
}
