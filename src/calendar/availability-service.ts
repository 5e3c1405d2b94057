/**
 * @module calendar/availability-service
 * Free/busy and availability over the calendars this service hosts: reads the busy events of the grants of
 * the calling application (busy, not cancelled, not declined; recurring series expanded in the window) and
 * hands them, as intervals, to the pure engine in availability.ts.
 *
 * The service is plain functions over a small state made here: the busy time (./availability-reads.ts) and the
 * reads of rows (./availability-store.ts).
 */
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import type { Availability, GetAvailabilityInput, OpenHours } from '../schemas/availability.js';
import { MAX_AVAILABILITY_WINDOW_DAYS, MAX_EXPLANATIONS } from '../schemas/availability.js';
import type { FreeBusyEntry, FreeBusyList, GetFreeBusyInput } from '../schemas/free-busy.js';
import { MAX_FREE_BUSY_WINDOW_DAYS } from '../schemas/free-busy.js';
import {
  computeAvailability,
  freeBusy,
  type AvailabilityParticipant,
  type ExclusionReason,
  type OpenHoursRule,
} from './availability.js';
import { busyIntervals, type CalendarOwner } from './availability-reads.js';
import { heldIntervals, HOLD_MARK } from './hold-service.js';
import { unixSeconds } from '../time.js';
import { calendarChoices, grantsByEmail, lastBooked } from './availability-store.js';
import type { AvailabilityService } from './contracts.js';
import { normalizeTimeZone } from '../time-zones.js';

const DAY = 86_400;
/** Bounds the work and the answer of one availability request: window minutes / interval minutes. */
const MAX_CANDIDATE_STARTS = 50_000;

/** What the requests of the availability service share, made once by `createAvailabilityService`. */
interface AvailabilityState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  grants: GrantService;
}

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}

function checkWindow(startTime: number, endTime: number, maxDays: number): void {
  if (endTime <= startTime) throw invalid('end_time', 'must be after start_time.');
  if (endTime - startTime > maxDays * DAY)
    throw invalid('end_time', `the window may span at most ${maxDays} days; split the search into several requests.`);
}

/** Creates the availability service. */
export function createAvailabilityService({ db, clock }: CoreDeps, grants: GrantService): AvailabilityService {
  const state: AvailabilityState = { db, clock, grants };
  return {
    /**
     * Busy blocks of each address in the window. Addresses that are not grants of the caller's application
     * get an inline error entry, as Nylas answers for addresses it cannot read.
     */
    freeBusy: (principal: Principal, input: GetFreeBusyInput) => readFreeBusy(state, principal, input),

    /** Bookable slots for the participants (all grants of the caller's application), per availability.ts. */
    find: (principal: Principal, input: GetAvailabilityInput) => findAvailability(state, principal, input),
  };
}

const toRules = (hours: OpenHours[] | undefined): OpenHoursRule[] | undefined =>
  hours?.map((rule) => ({
    days: rule.days,
    timezone: normalizeTimeZone(rule.timezone) ?? rule.timezone,
    start: rule.start,
    end: rule.end,
    ...(rule.exdates ? { exdates: rule.exdates } : {}),
  }));

/** Event ids and hold ids apart: a hold's busy interval is named `hold:<id>` (./hold-service.ts). */
function busyIds(ids: string[]): { event_ids: string[]; hold_ids?: string[] } {
  const holdIds = ids.filter((id) => id.startsWith(HOLD_MARK)).map((id) => id.slice(HOLD_MARK.length));
  if (holdIds.length === 0) return { event_ids: ids };
  return { event_ids: ids.filter((id) => !id.startsWith(HOLD_MARK)), hold_ids: holdIds };
}

const toWireReason = (reason: ExclusionReason): NonNullable<Availability['explanations']>[number]['reasons'][number] =>
  reason.type === 'busy' || reason.type === 'buffer'
    ? { type: reason.type, email: reason.email, ...busyIds(reason.eventIds) }
    : reason.type === 'outside_open_hours'
      ? { type: reason.type, email: reason.email }
      : { type: 'past_window' };

/** The owners' busy events and, beside them, the slots of live holds (./hold-service.ts), by grant id. */
async function busyAndHeld(
  { db, clock }: AvailabilityState,
  principal: Principal,
  owners: CalendarOwner[],
  from: number,
  to: number,
  options: { tentativeAsBusy: boolean; withEventIds: boolean },
) {
  const [busy, held] = await Promise.all([
    busyIntervals(db, owners, from, to, options),
    heldIntervals(db, principal.applicationId, owners, { from, to, now: unixSeconds(clock.now()) }),
  ]);
  for (const [grantId, intervals] of held) {
    const list = busy.get(grantId);
    if (list) for (const interval of intervals) list.push(interval);
  }
  return busy;
}

/**
 * Busy blocks of each address in the window. Addresses that are not grants of the caller's application
 * get an inline error entry, as Nylas answers for addresses it cannot read.
 */
async function readFreeBusy(
  state: AvailabilityState,
  principal: Principal,
  input: GetFreeBusyInput,
): Promise<FreeBusyList> {
  const { db, grants } = state;
  await grants.require(principal, input.grant_id);
  checkWindow(input.start_time, input.end_time, MAX_FREE_BUSY_WINDOW_DAYS);
  const emails = input.emails.map((email) => email.trim().toLowerCase());
  const known = await grantsByEmail(db, principal, [...new Set(emails)]);
  const owners = [...known.values()].map((grant) => ({ grantId: grant.id, email: grant.email }));
  const busy = await busyAndHeld(state, principal, owners, input.start_time, input.end_time, {
    tentativeAsBusy: input.tentative_as_busy ?? true,
    withEventIds: false,
  });
  const data = input.emails.map((original, index): FreeBusyEntry => {
    const grant = known.get(emails[index]!);
    if (!grant) {
      return {
        email: original,
        object: 'error',
        error: `${original} is not an Agent Account of this application; free/busy can only read calendars this service hosts.`,
      };
    }
    const blocks = freeBusy({ startTime: input.start_time, endTime: input.end_time }, busy.get(grant.id) ?? []);
    return {
      email: original,
      object: 'free_busy',
      time_slots: blocks.map((block) => ({
        start_time: block.startTime,
        end_time: block.endTime,
        status: 'busy' as const,
        object: 'time_slot' as const,
      })),
    };
  });
  return { data };
}

/** Bookable slots for the participants (all grants of the caller's application), per availability.ts. */
async function findAvailability(
  state: AvailabilityState,
  principal: Principal,
  input: GetAvailabilityInput,
): Promise<Availability> {
  const { db } = state;
  checkWindow(input.start_time, input.end_time, MAX_AVAILABILITY_WINDOW_DAYS);
  const interval = input.interval_minutes ?? input.duration_minutes;
  if ((input.end_time - input.start_time) / 60 / interval > MAX_CANDIDATE_STARTS) {
    throw invalid(
      'interval_minutes',
      `${interval} minutes is too fine for this window (at most ${MAX_CANDIDATE_STARTS} candidate starts); use a larger interval or a shorter window.`,
    );
  }
  const rules = input.availability_rules ?? {};
  const emails = input.participants.map((participant) => participant.email.trim().toLowerCase());
  const seen = new Set<string>();
  emails.forEach((email, index) => {
    if (seen.has(email)) throw invalid(`participants[${index}].email`, `${email} is listed twice.`);
    seen.add(email);
  });
  const known = await grantsByEmail(db, principal, emails);
  emails.forEach((email, index) => {
    if (!known.has(email)) {
      throw invalid(
        `participants[${index}].email`,
        `${email} is not an Agent Account of this application; every participant must be a grant of the calling application.`,
      );
    }
  });

  // Calendars: the primary unless calendar_ids names others ("primary" allowed); each must be the participant's.
  const grantIds = emails.map((email) => known.get(email)!.id);
  const calendarRows = await calendarChoices(db, grantIds);
  const owners: CalendarOwner[] = input.participants.map((participant, index) => {
    const grantId = grantIds[index]!;
    const own = calendarRows.filter((row) => row.grantId === grantId);
    const requested =
      participant.calendar_ids && participant.calendar_ids.length > 0 ? participant.calendar_ids : ['primary'];
    const calendarIds = requested.map((id) => {
      const calendar = id === 'primary' ? own.find((row) => row.isPrimary) : own.find((row) => row.id === id);
      if (!calendar)
        throw invalid(
          `participants[${index}].calendar_ids`,
          `${id} is not a calendar of ${emails[index]}; list its calendars with GET /v3/grants/${emails[index]}/calendars.`,
        );
      return calendar.id;
    });
    return { grantId, email: emails[index]!, calendarIds };
  });

  const duration = input.duration_minutes * 60;
  const before = (rules.buffer?.before ?? 0) * 60;
  const after = (rules.buffer?.after ?? 0) * 60;
  // Buffers reach into the window from events outside it; explanations look up to one meeting past its end.
  const busy = await busyAndHeld(
    state,
    principal,
    owners,
    input.start_time - after,
    input.end_time + duration + before,
    {
      tentativeAsBusy: rules.tentative_as_busy ?? true,
      withEventIds: input.explain === true,
    },
  );
  const group = rules.round_robin_group_id ?? rules.round_robin_event_id;
  const method = rules.availability_method ?? 'collective';
  const booked = method === 'collective' ? new Map<string, number>() : await lastBooked(db, grantIds, group);

  const participants: AvailabilityParticipant[] = input.participants.map((participant, index) => {
    const grantId = grantIds[index]!;
    return {
      email: emails[index]!,
      busy: busy.get(grantId) ?? [],
      ...(participant.open_hours && participant.open_hours.length > 0
        ? { openHours: toRules(participant.open_hours) }
        : {}),
      ...(participant.specific_time_availability
        ? {
            specificTimeAvailability: participant.specific_time_availability.map((entry) => ({
              date: entry.date,
              start: entry.start,
              end: entry.end,
              ...(entry.timezone ? { timezone: normalizeTimeZone(entry.timezone) ?? entry.timezone } : {}),
            })),
          }
        : {}),
      ...(participant.only_specific_time_availability ? { onlySpecificTimeAvailability: true } : {}),
      lastBookedAt: booked.get(grantId) ?? null,
    };
  });
  const defaultOpenHours = toRules(rules.default_open_hours);
  let result;
  try {
    result = computeAvailability({
      startTime: input.start_time,
      endTime: input.end_time,
      durationMinutes: input.duration_minutes,
      ...(input.interval_minutes !== undefined ? { intervalMinutes: input.interval_minutes } : {}),
      roundTo: input.round_to ?? (input.round_to_30_minutes ? 30 : 15),
      method,
      buffer: { before: rules.buffer?.before ?? 0, after: rules.buffer?.after ?? 0 },
      ...(defaultOpenHours ? { defaultOpenHours } : {}),
      participants,
      explain: input.explain === true,
      explainLimit: MAX_EXPLANATIONS,
    });
  } catch (error) {
    if (error instanceof RangeError) throw new AppError('invalid_request', `availability: ${error.message}.`);
    throw error;
  }
  // Slots list participants by the addresses the caller sent.
  const original = new Map(emails.map((email, index) => [email, input.participants[index]!.email]));
  const name = (email: string) => original.get(email) ?? email;
  return {
    order: result.order.map(name),
    time_slots: result.timeSlots.map((slot) => ({
      emails: slot.emails.map(name),
      start_time: slot.startTime,
      end_time: slot.endTime,
    })),
    ...(result.explanations
      ? {
          explanations: result.explanations.map((explanation) => ({
            start_time: explanation.startTime,
            end_time: explanation.endTime,
            reasons: explanation.reasons.map((reason) => {
              const wire = toWireReason(reason);
              return 'email' in wire ? { ...wire, email: name(wire.email) } : wire;
            }),
          })),
        }
      : {}),
    ...(result.explanationsTruncated ? { explanations_truncated: true } : {}),
  };
}

export type { AvailabilityService } from './contracts.js';
