/**
 * @module time-zones
 * IANA time zones through the runtime's own tz database (Intl): validation, UTC offsets, wall-clock ↔ UTC
 * conversion with the RFC 5545 rules for DST gaps and overlaps, and mapping of the time-zone names other
 * calendars put in TZID (Windows names from Outlook, Mozilla-prefixed names) to IANA names. Pure functions.
 */

/** A local wall-clock time (no zone). Months are 1–12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
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
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

let knownZones: Map<string, string> | undefined;

/** Lower-cased IANA name → its spelling in the runtime's tz database. */
function zoneIndex(): Map<string, string> {
  if (!knownZones) {
    knownZones = new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
    knownZones.set('utc', 'UTC');
    knownZones.set('etc/utc', 'Etc/UTC');
    knownZones.set('gmt', 'GMT');
  }
  return knownZones;
}

/**
 * The IANA name as it should be stored (case fixed), or undefined when it is not a time zone of the tz
 * database. Aliases the runtime accepts (`Asia/Kolkata`, `US/Eastern`) are kept as given.
 */
export function normalizeTimeZone(name: string): string | undefined {
  const trimmed = name.trim();
  // Offsets ("+05:00") and abbreviations ("EST") are not zones a calendar can follow across DST.
  if (trimmed === '' || trimmed.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(trimmed)) return undefined;
  const known = zoneIndex().get(trimmed.toLowerCase());
  if (known) return known;
  if (!trimmed.includes('/')) return undefined;
  try {
    formatterFor(trimmed);
    return trimmed;
  } catch {
    return undefined;
  }
}

/** True for a name of the IANA tz database (`America/New_York`, `UTC`). */
export function isIanaTimeZone(name: string): boolean {
  return normalizeTimeZone(name) !== undefined;
}

/** The wall-clock time in `timeZone` at the instant `epochMs`. */
export function wallTimeAt(timeZone: string, epochMs: number): WallTime {
  return epochToWallAsUtc(epochMs + offsetAt(timeZone, epochMs));
}

/** The wall-clock time as Intl reports it (the source of every offset). */
function intlWallTimeAt(timeZone: string, epochMs: number): WallTime {
  const parts = formatterFor(timeZone).formatToParts(new Date(epochMs));
  const value = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  const era = parts.find((part) => part.type === 'era')?.value;
  const year = era === 'BC' || era === 'B' ? 1 - value('year') : value('year');
  return {
    year,
    month: value('month'),
    day: value('day'),
    hour: value('hour'),
    minute: value('minute'),
    second: value('second'),
  };
}

/** Milliseconds of a wall time read as if it were UTC. */
export function wallTimeToEpochAsUtc(wall: WallTime): number {
  const date = new Date(0);
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  date.setUTCHours(wall.hour, wall.minute, wall.second, 0);
  return date.getTime();
}

/** The wall time of an epoch read as UTC. */
export function epochToWallAsUtc(epochMs: number): WallTime {
  const date = new Date(epochMs);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

/** UTC offset read from Intl directly (slow: one formatToParts call). */
function rawOffsetAt(timeZone: string, epochMs: number): number {
  const second = Math.floor(epochMs / 1000) * 1000;
  return wallTimeToEpochAsUtc(intlWallTimeAt(timeZone, second)) - second;
}

/** Per zone and UTC year: the offset at the year's start and the year's transitions (computed once). */
const yearOffsets = new Map<string, { startOffset: number; transitions: OffsetTransition[] }>();

function offsetsOfYear(timeZone: string, year: number): { startOffset: number; transitions: OffsetTransition[] } {
  const key = `${timeZone}\u0000${year}`;
  let entry = yearOffsets.get(key);
  if (!entry) {
    const start = Date.UTC(year, 0, 1);
    const end = Date.UTC(year + 1, 0, 1);
    const transitions: OffsetTransition[] = [];
    let at = start;
    let offset = rawOffsetAt(timeZone, at);
    const startOffset = offset;
    // Scan in 1-day steps (no zone changes twice within a day), then bisect to the second.
    while (at < end) {
      const next = Math.min(at + 86_400_000, end);
      const nextOffset = rawOffsetAt(timeZone, next);
      if (nextOffset !== offset) {
        let low = at;
        let high = next;
        while (high - low > 1000) {
          const middle = Math.floor((low + high) / 2000) * 1000;
          if (rawOffsetAt(timeZone, middle) === offset) low = middle;
          else high = middle;
        }
        transitions.push({ epochMs: high, offsetFrom: offset, offsetTo: nextOffset });
        offset = nextOffset;
      }
      at = next;
    }
    entry = { startOffset, transitions };
    if (yearOffsets.size > 20_000) yearOffsets.clear();
    yearOffsets.set(key, entry);
  }
  return entry;
}

/**
 * Per zone, the constant-offset stretch the last lookup fell in: recurrence expansion asks for many instants a
 * week or a day apart, nearly all in the same stretch.
 */
const lastStretch = new Map<string, { start: number; end: number; offset: number }>();

/** UTC offset of `timeZone` at the instant `epochMs`, in milliseconds (east positive: New York in winter is −5 h). */
export function offsetAt(timeZone: string, epochMs: number): number {
  const last = lastStretch.get(timeZone);
  if (last !== undefined && epochMs >= last.start && epochMs < last.end) return last.offset;
  const year = new Date(epochMs).getUTCFullYear();
  // Outside the years calendars use, ask Intl each time rather than cache whole years.
  if (!(year >= 1800 && year <= 2600)) return rawOffsetAt(timeZone, epochMs);
  const { startOffset, transitions } = offsetsOfYear(timeZone, year);
  let offset = startOffset;
  let start = Date.UTC(year, 0, 1);
  let end = Date.UTC(year + 1, 0, 1);
  for (const transition of transitions) {
    if (epochMs >= transition.epochMs) {
      offset = transition.offsetTo;
      start = transition.epochMs;
    } else {
      end = transition.epochMs;
      break;
    }
  }
  if (lastStretch.size > 1_000) lastStretch.clear();
  lastStretch.set(timeZone, { start, end, offset });
  return offset;
}

const DAY_MS = 86_400_000;

/**
 * The instant a wall-clock time in `timeZone` denotes. RFC 5545 §3.3.5: a time that falls in a DST gap is
 * read with the offset from before the gap (02:30 on the spring-forward night is 03:30 daylight time); a
 * time that occurs twice at the fall-back is the first occurrence.
 */
export function zonedWallTimeToEpoch(timeZone: string, wall: WallTime): number {
  const asUtc = wallTimeToEpochAsUtc(wall);
  const before = offsetAt(timeZone, asUtc - DAY_MS);
  const after = offsetAt(timeZone, asUtc + DAY_MS);
  const candidates = [...new Set([before, after])]
    .map((offset) => asUtc - offset)
    .filter((epoch) => offsetAt(timeZone, epoch) === asUtc - epoch)
    .sort((a, b) => a - b);
  return candidates[0] ?? asUtc - before;
}

/**
 * {@link zonedWallTimeToEpoch} for a wall time given as whole seconds since 1970-01-01T00:00 wall time, in unix
 * seconds, without allocating: recurrence expansion runs it once per occurrence.
 */
export function zonedWallSecondsToUnix(timeZone: string, wallSeconds: number): number {
  const asUtc = wallSeconds * 1000;
  const before = offsetAt(timeZone, asUtc - DAY_MS);
  const after = offsetAt(timeZone, asUtc + DAY_MS);
  const first = asUtc - before;
  if (before === after) return Math.floor(first / 1000);
  const second = asUtc - after;
  const firstValid = offsetAt(timeZone, first) === before;
  const secondValid = offsetAt(timeZone, second) === after;
  const epoch = firstValid && secondValid ? Math.min(first, second) : secondValid ? second : first;
  return Math.floor(epoch / 1000);
}

/** The wall clock in `timeZone` at unix second `unix`, as whole seconds since 1970-01-01T00:00 wall time. */
export function wallSecondsAt(timeZone: string, unix: number): number {
  return unix + Math.round(offsetAt(timeZone, unix * 1000) / 1000);
}

/** `YYYY-MM-DD` of a wall time or epoch date part. */
export function formatDate(wall: Pick<WallTime, 'year' | 'month' | 'day'>): string {
  return `${String(wall.year).padStart(4, '0')}-${String(wall.month).padStart(2, '0')}-${String(wall.day).padStart(2, '0')}`;
}

/** Parses `YYYY-MM-DD` into its parts, or undefined when it is not a real calendar date. */
export function parseDate(text: string): { year: number; month: number; day: number } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = epochToWallAsUtc(wallTimeToEpochAsUtc({ year, month, day, hour: 0, minute: 0, second: 0 }));
  if (check.year !== year || check.month !== month || check.day !== day) return undefined;
  return { year, month, day };
}

/** Unix seconds of 00:00 UTC on a `YYYY-MM-DD` date (all-day events are placed in UTC). */
export function dateToUnix(text: string): number {
  const date = parseDate(text);
  if (!date) throw new RangeError(`not a date: ${text}`);
  return wallTimeToEpochAsUtc({ ...date, hour: 0, minute: 0, second: 0 }) / 1000;
}

/** `YYYY-MM-DD` of the UTC day containing unix seconds `unix`. */
export function unixToDate(unix: number): string {
  return formatDate(epochToWallAsUtc(unix * 1000));
}

/** Adds whole days to a `YYYY-MM-DD` date. */
export function addDays(text: string, days: number): string {
  return unixToDate(dateToUnix(text) + days * 86_400);
}

/**
 * Windows time-zone names (as Outlook and Exchange write them in TZID) → IANA, from CLDR's windowsZones
 * (territory 001). Names not here fall back to matching the VTIMEZONE's offsets.
 */
const WINDOWS_ZONES: Record<string, string> = {
  'Dateline Standard Time': 'Etc/GMT+12',
  'UTC-11': 'Etc/GMT+11',
  'Aleutian Standard Time': 'America/Adak',
  'Hawaiian Standard Time': 'Pacific/Honolulu',
  'Marquesas Standard Time': 'Pacific/Marquesas',
  'Alaskan Standard Time': 'America/Anchorage',
  'UTC-09': 'Etc/GMT+9',
  'Pacific Standard Time (Mexico)': 'America/Tijuana',
  'UTC-08': 'Etc/GMT+8',
  'Pacific Standard Time': 'America/Los_Angeles',
  'US Mountain Standard Time': 'America/Phoenix',
  'Mountain Standard Time (Mexico)': 'America/Mazatlan',
  'Mountain Standard Time': 'America/Denver',
  'Yukon Standard Time': 'America/Whitehorse',
  'Central America Standard Time': 'America/Guatemala',
  'Central Standard Time': 'America/Chicago',
  'Easter Island Standard Time': 'Pacific/Easter',
  'Central Standard Time (Mexico)': 'America/Mexico_City',
  'Canada Central Standard Time': 'America/Regina',
  'SA Pacific Standard Time': 'America/Bogota',
  'Eastern Standard Time (Mexico)': 'America/Cancun',
  'Eastern Standard Time': 'America/New_York',
  'Haiti Standard Time': 'America/Port-au-Prince',
  'Cuba Standard Time': 'America/Havana',
  'US Eastern Standard Time': 'America/Indiana/Indianapolis',
  'Turks And Caicos Standard Time': 'America/Grand_Turk',
  'Paraguay Standard Time': 'America/Asuncion',
  'Atlantic Standard Time': 'America/Halifax',
  'Venezuela Standard Time': 'America/Caracas',
  'Central Brazilian Standard Time': 'America/Cuiaba',
  'SA Western Standard Time': 'America/La_Paz',
  'Pacific SA Standard Time': 'America/Santiago',
  'Newfoundland Standard Time': 'America/St_Johns',
  'Tocantins Standard Time': 'America/Araguaina',
  'E. South America Standard Time': 'America/Sao_Paulo',
  'SA Eastern Standard Time': 'America/Cayenne',
  'Argentina Standard Time': 'America/Argentina/Buenos_Aires',
  'Greenland Standard Time': 'America/Nuuk',
  'Montevideo Standard Time': 'America/Montevideo',
  'Magallanes Standard Time': 'America/Punta_Arenas',
  'Saint Pierre Standard Time': 'America/Miquelon',
  'Bahia Standard Time': 'America/Bahia',
  'UTC-02': 'Etc/GMT+2',
  'Azores Standard Time': 'Atlantic/Azores',
  'Cape Verde Standard Time': 'Atlantic/Cape_Verde',
  UTC: 'UTC',
  'Coordinated Universal Time': 'UTC',
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'Sao Tome Standard Time': 'Africa/Sao_Tome',
  'Morocco Standard Time': 'Africa/Casablanca',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Romance Standard Time': 'Europe/Paris',
  'Central European Standard Time': 'Europe/Warsaw',
  'W. Central Africa Standard Time': 'Africa/Lagos',
  'Jordan Standard Time': 'Asia/Amman',
  'GTB Standard Time': 'Europe/Bucharest',
  'Middle East Standard Time': 'Asia/Beirut',
  'Egypt Standard Time': 'Africa/Cairo',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'Syria Standard Time': 'Asia/Damascus',
  'West Bank Standard Time': 'Asia/Hebron',
  'South Africa Standard Time': 'Africa/Johannesburg',
  'FLE Standard Time': 'Europe/Kiev',
  'Israel Standard Time': 'Asia/Jerusalem',
  'South Sudan Standard Time': 'Africa/Juba',
  'Kaliningrad Standard Time': 'Europe/Kaliningrad',
  'Sudan Standard Time': 'Africa/Khartoum',
  'Libya Standard Time': 'Africa/Tripoli',
  'Namibia Standard Time': 'Africa/Windhoek',
  'Arabic Standard Time': 'Asia/Baghdad',
  'Turkey Standard Time': 'Europe/Istanbul',
  'Arab Standard Time': 'Asia/Riyadh',
  'Belarus Standard Time': 'Europe/Minsk',
  'Russian Standard Time': 'Europe/Moscow',
  'E. Africa Standard Time': 'Africa/Nairobi',
  'Volgograd Standard Time': 'Europe/Volgograd',
  'Iran Standard Time': 'Asia/Tehran',
  'Arabian Standard Time': 'Asia/Dubai',
  'Astrakhan Standard Time': 'Europe/Astrakhan',
  'Azerbaijan Standard Time': 'Asia/Baku',
  'Russia Time Zone 3': 'Europe/Samara',
  'Mauritius Standard Time': 'Indian/Mauritius',
  'Saratov Standard Time': 'Europe/Saratov',
  'Georgian Standard Time': 'Asia/Tbilisi',
  'Caucasus Standard Time': 'Asia/Yerevan',
  'Afghanistan Standard Time': 'Asia/Kabul',
  'West Asia Standard Time': 'Asia/Tashkent',
  'Ekaterinburg Standard Time': 'Asia/Yekaterinburg',
  'Pakistan Standard Time': 'Asia/Karachi',
  'Qyzylorda Standard Time': 'Asia/Qyzylorda',
  'India Standard Time': 'Asia/Kolkata',
  'Sri Lanka Standard Time': 'Asia/Colombo',
  'Nepal Standard Time': 'Asia/Kathmandu',
  'Central Asia Standard Time': 'Asia/Almaty',
  'Bangladesh Standard Time': 'Asia/Dhaka',
  'Omsk Standard Time': 'Asia/Omsk',
  'Myanmar Standard Time': 'Asia/Yangon',
  'SE Asia Standard Time': 'Asia/Bangkok',
  'Altai Standard Time': 'Asia/Barnaul',
  'W. Mongolia Standard Time': 'Asia/Hovd',
  'North Asia Standard Time': 'Asia/Krasnoyarsk',
  'N. Central Asia Standard Time': 'Asia/Novosibirsk',
  'Tomsk Standard Time': 'Asia/Tomsk',
  'China Standard Time': 'Asia/Shanghai',
  'North Asia East Standard Time': 'Asia/Irkutsk',
  'Singapore Standard Time': 'Asia/Singapore',
  'W. Australia Standard Time': 'Australia/Perth',
  'Taipei Standard Time': 'Asia/Taipei',
  'Ulaanbaatar Standard Time': 'Asia/Ulaanbaatar',
  'Aus Central W. Standard Time': 'Australia/Eucla',
  'Transbaikal Standard Time': 'Asia/Chita',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'North Korea Standard Time': 'Asia/Pyongyang',
  'Korea Standard Time': 'Asia/Seoul',
  'Yakutsk Standard Time': 'Asia/Yakutsk',
  'Cen. Australia Standard Time': 'Australia/Adelaide',
  'AUS Central Standard Time': 'Australia/Darwin',
  'E. Australia Standard Time': 'Australia/Brisbane',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  'West Pacific Standard Time': 'Pacific/Port_Moresby',
  'Tasmania Standard Time': 'Australia/Hobart',
  'Vladivostok Standard Time': 'Asia/Vladivostok',
  'Lord Howe Standard Time': 'Australia/Lord_Howe',
  'Bougainville Standard Time': 'Pacific/Bougainville',
  'Russia Time Zone 10': 'Asia/Srednekolymsk',
  'Magadan Standard Time': 'Asia/Magadan',
  'Norfolk Standard Time': 'Pacific/Norfolk',
  'Sakhalin Standard Time': 'Asia/Sakhalin',
  'Central Pacific Standard Time': 'Pacific/Guadalcanal',
  'Russia Time Zone 11': 'Asia/Kamchatka',
  'New Zealand Standard Time': 'Pacific/Auckland',
  'UTC+12': 'Etc/GMT-12',
  'Fiji Standard Time': 'Pacific/Fiji',
  'Chatham Islands Standard Time': 'Pacific/Chatham',
  'UTC+13': 'Etc/GMT-13',
  'Tonga Standard Time': 'Pacific/Tongatapu',
  'Samoa Standard Time': 'Pacific/Apia',
  'Line Islands Standard Time': 'Pacific/Kiritimati',
};

const WINDOWS_ZONES_LOWER = new Map(Object.entries(WINDOWS_ZONES).map(([name, zone]) => [name.toLowerCase(), zone]));

/** Zones tried, in this order, when a TZID must be recognised by its offsets alone. */
export const PREFERRED_ZONES: readonly string[] = [...new Set(Object.values(WINDOWS_ZONES))];

/**
 * The IANA zone a TZID names, when the name alone says it: an IANA name (any case), one with a
 * `/mozilla.org/…/` or similar prefix, a Windows name, or a Windows name in Outlook's display form
 * `(UTC-05:00) Eastern Standard Time`. Undefined when the name is not recognised.
 */
export function ianaFromTzid(tzid: string): string | undefined {
  const trimmed = tzid.trim().replace(/^"|"$/g, '');
  const direct = normalizeTimeZone(trimmed);
  if (direct) return direct;
  const windows = WINDOWS_ZONES_LOWER.get(trimmed.toLowerCase());
  if (windows) return normalizeTimeZone(windows) ?? windows;
  const withoutDisplayOffset = trimmed.replace(/^\((?:UTC|GMT)[^)]*\)\s*/i, '');
  const windowsDisplay = WINDOWS_ZONES_LOWER.get(withoutDisplayOffset.toLowerCase());
  if (windowsDisplay) return normalizeTimeZone(windowsDisplay) ?? windowsDisplay;
  // "/mozilla.org/20050126_1/America/New_York", "/softwarestudio.org/Olson_20011030_5/America/New_York"
  const segments = trimmed.split('/').filter(Boolean);
  for (let start = 1; start < segments.length - 1; start++) {
    const candidate = normalizeTimeZone(segments.slice(start).join('/'));
    if (candidate) return candidate;
  }
  return undefined;
}

/**
 * The first preferred IANA zone whose UTC offset at local noon of every week of `year` and the next equals
 * `offsetOfWall(wall)` (milliseconds), or undefined. Used for a VTIMEZONE whose name means nothing here.
 */
export function zoneMatchingOffsets(year: number, offsetOfWall: (wall: WallTime) => number): string | undefined {
  const samples: WallTime[] = [];
  for (let at = Date.UTC(year, 0, 1, 12); at < Date.UTC(year + 2, 0, 1); at += 7 * DAY_MS)
    samples.push(epochToWallAsUtc(at));
  const wanted = samples.map(offsetOfWall);
  for (const zone of PREFERRED_ZONES) {
    if (!isIanaTimeZone(zone)) continue;
    if (samples.every((wall, index) => wallTimeToEpochAsUtc(wall) - zonedWallTimeToEpoch(zone, wall) === wanted[index]))
      return zone;
  }
  return undefined;
}

/** One change of UTC offset: the instant, and the offsets before and after. */
export interface OffsetTransition {
  epochMs: number;
  offsetFrom: number;
  offsetTo: number;
}

/** The offset changes of `timeZone` during the UTC years `fromYear`..`toYear` (inclusive). */
export function transitionsBetween(timeZone: string, fromYear: number, toYear: number): OffsetTransition[] {
  const result: OffsetTransition[] = [];
  for (let year = fromYear; year <= toYear; year++) result.push(...offsetsOfYear(timeZone, year).transitions);
  return result;
}
