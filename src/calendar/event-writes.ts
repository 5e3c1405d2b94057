/**
 * @module calendar/event-writes
 * The event service's writes (./event-service.ts): create, update (an instance of a series stored as an override, a
 * moved series taking its overrides along) and delete (an instance by an EXDATE on its series). Every change writes
 * its outbox event in the same transaction; participants are mailed after the commit (./event-imip.ts).
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CreateEventInput, DeleteEventInput, Event, UpdateEventInput } from '../schemas/events.js';
import {
  eventTimeColumns,
  eventTimeOf,
  toCalendarEventData,
  toEvent,
  type EventInsert,
  type EventRow,
} from './event-mapper.js';
import type { EventStore } from './event-store.js';
import { readWhen, shiftTo, type EventTime } from './event-time.js';
import type { CalendarEventData } from './ical.js';
import { composeCancel } from './invitation-message.js';
import { exdateLine, instanceId, moveSeries, storedRange, type SeriesMove } from './recurrence.js';
import {
  bad,
  context,
  locate,
  mergeParticipants,
  organizedBy,
  others,
  readConferencing,
  readRecurrence,
  sameLines,
  sameTime,
  type EventState,
  type StoredParticipant,
} from './event-state.js';
import { dispatch, sendRequest, senderOf } from './event-imip.js';
import { pushSeries } from './event-remote.js';

/**
 * Re-keys the overrides of a series whose start moved (`move`, from `from`): each takes the original start of its
 * occurrence in the moved series, so its instance id (`<master>_<original start>`) changes: the row is replaced
 * (event.deleted for the old id, event.created for the new). An override whose time is still the computed time
 * of its instance (only other fields, or its status, were changed) moves with the series, to the new time of
 * its occurrence; one given a time of its own keeps it. Two overrides landing on one occurrence: the first kept.
 */
async function moveOverrides(
  store: EventStore,
  tx: Tx,
  grant: GrantRow,
  master: EventRow,
  from: EventTime,
  to: EventTime,
  move: SeriesMove,
  sequence: number,
  at: number,
): Promise<void> {
  const plans = (await store.overridesOf(tx, grant, master.id)).flatMap((row) => {
    if (row.originalStartTime === null) return [];
    const originalStart = move.start(row.originalStartTime);
    const own = eventTimeOf(row);
    const when = sameTime(own, shiftTo(from, row.originalStartTime)) ? shiftTo(to, originalStart) : own;
    return [{ row, originalStart, when, id: instanceId(master.id, originalStart) }];
  });
  const taken = new Set(plans.filter((plan) => plan.id === plan.row.id).map((plan) => plan.id));
  for (const plan of plans) if (plan.id !== plan.row.id) await store.remove(tx, grant, plan.row, at);
  for (const plan of plans) {
    const time = {
      ...eventTimeColumns(plan.when),
      ...storedRange(plan.when, null),
      sequence: Math.max(plan.row.sequence, sequence),
      updatedAt: at,
    };
    if (plan.id === plan.row.id) {
      if (!sameTime(plan.when, eventTimeOf(plan.row))) await store.update(tx, grant, plan.row, time);
      continue;
    }
    if (taken.has(plan.id)) continue;
    taken.add(plan.id);
    await store.insert(tx, grant, { ...plan.row, ...time, id: plan.id, originalStartTime: plan.originalStart });
  }
}

/** Creates an event organized by the grant; participants get an iMIP REQUEST unless notify_participants is false. */
export async function createEvent(state: EventState, principal: Principal, input: CreateEventInput): Promise<Event> {
  const { db, store, now, newId } = state;
  const { grant, calendar } = await context(state, principal, input);
  const when = readWhen(input.when, calendar.timezone);
  const recurrence = input.recurrence && input.recurrence.length > 0 ? readRecurrence(input.recurrence, when) : null;
  const conferencing = readConferencing(input.conferencing);
  const at = now();
  const id = newId();
  const domain = grant.email.slice(grant.email.lastIndexOf('@') + 1);
  const organizer = grant.name ? { email: grant.email, name: grant.name } : { email: grant.email };
  const row = await db.write((tx) =>
    store.insert(tx, grant, {
      id,
      grantId: grant.id,
      calendarId: calendar.id,
      icalUid: `${id}@${domain}`,
      sequence: 0,
      title: input.title ?? null,
      description: input.description ?? null,
      location: input.location ?? null,
      ...eventTimeColumns(when),
      ...storedRange(when, recurrence),
      recurrence: recurrence ? input.recurrence!.map((line) => line.trim()) : null,
      busy: input.busy ?? true,
      status: input.status ?? 'confirmed',
      visibility: input.visibility ?? 'default',
      readOnly: input.read_only ?? false,
      hideParticipants: input.hide_participants ?? false,
      capacity: input.capacity ?? null,
      organizer,
      creator: organizer,
      participants: mergeParticipants(input.participants ?? [], []),
      resources: input.resources ?? null,
      conferencing: conferencing ?? null,
      reminders: input.reminders
        ? { use_default: input.reminders.use_default, overrides: input.reminders.overrides ?? [] }
        : null,
      metadata: input.metadata ?? null,
      createdAt: at,
      updatedAt: at,
    }),
  );
  await pushSeries(state, grant, calendar.id, row.icalUid, row.id);
  if (input.notify_participants !== false && row.participants.length > 0) await sendRequest(state, grant, row);
  return toEvent(row);
}

/**
 * Changes an event (top-level fields replace; participants keep their answers). An instance id changes
 * that one instance (stored as an override). Invitations from others accept only local fields.
 */
export async function updateEvent(state: EventState, principal: Principal, input: UpdateEventInput): Promise<Event> {
  const { db, store, now, clock } = state;
  const { grant, calendar } = await context(state, principal, input);
  const located = await locate(state, grant, calendar, input.event_id);
  const base = located.row;
  if (!organizedBy(grant, base)) {
    const shared = (
      [
        'when',
        'title',
        'description',
        'location',
        'participants',
        'resources',
        'conferencing',
        'recurrence',
        'status',
        'capacity',
      ] as const
    ).filter((field) => input[field] !== undefined);
    if (shared.length > 0) {
      throw bad(
        shared[0]!,
        `this is an invitation organized by ${base.organizer!.email}; only the organizer can change ${shared.join(', ')}. Answer it with send_rsvp, or change busy, reminders, visibility or metadata on your copy.`,
      );
    }
  }
  if ((located.instance || base.masterEventId !== null) && input.recurrence !== undefined) {
    throw bad(
      'recurrence',
      'this is one instance of a recurring event; change the recurrence on the series (its master_event_id).',
    );
  }
  const currentWhen = located.instance?.when ?? eventTimeOf(base);
  const when = input.when ? readWhen(input.when, calendar.timezone) : currentWhen;
  const givenLines = input.recurrence?.map((line) => line.trim());
  const series =
    !located.instance && base.masterEventId === null && base.recurrence !== null && base.recurrence.length > 0;
  const linesChanged = givenLines !== undefined && !sameLines(givenLines, base.recurrence);
  // A series moved with its lines as they are (not given, or given back unchanged) takes its EXDATEs and
  // overrides along (recurrence.ts, moveSeries); lines given anew are taken as they are.
  const move =
    series && input.when !== undefined && !linesChanged
      ? moveSeries(eventTimeOf(base), when, base.recurrence!)
      : undefined;
  const recurrenceLines = move
    ? move.lines
    : givenLines !== undefined
      ? givenLines
      : located.instance
        ? null
        : base.recurrence;
  const recurrence =
    recurrenceLines && recurrenceLines.length > 0 && !located.instance && base.masterEventId === null
      ? readRecurrence(recurrenceLines, when)
      : null;
  const conferencing = readConferencing(input.conferencing);
  const significant = (
    ['when', 'title', 'description', 'location', 'participants', 'conferencing', 'recurrence', 'status'] as const
  ).some((field) => input[field] !== undefined);
  const at = now();
  const fields: Partial<EventInsert> = {
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.location !== undefined ? { location: input.location } : {}),
    ...(input.busy !== undefined ? { busy: input.busy } : {}),
    ...(input.participants !== undefined
      ? { participants: mergeParticipants(input.participants, base.participants) }
      : {}),
    ...(input.resources !== undefined ? { resources: input.resources } : {}),
    ...(conferencing !== undefined ? { conferencing } : {}),
    ...(input.reminders !== undefined
      ? { reminders: { use_default: input.reminders.use_default, overrides: input.reminders.overrides ?? [] } }
      : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.read_only !== undefined ? { readOnly: input.read_only } : {}),
    ...(input.capacity !== undefined ? { capacity: input.capacity } : {}),
    ...(input.hide_participants !== undefined ? { hideParticipants: input.hide_participants } : {}),
  };
  const removed =
    input.participants !== undefined
      ? others(grant, base.participants).filter(
          (old) =>
            !input.participants!.some(
              (participant) => participant.email.trim().toLowerCase() === old.email.toLowerCase(),
            ),
        )
      : [];

  const { row, master } = await db.write(async (tx) => {
    if (located.instance) {
      // The first change to one instance stores it as an override (its id stays the instance id).
      const { id: _id, createdAt: _created, ...copy } = base;
      const override = await store.insert(tx, grant, {
        ...copy,
        ...fields,
        id: located.instance.id,
        masterEventId: base.id,
        originalStartTime: located.instance.originalStart,
        recurrence: null,
        ...eventTimeColumns(when),
        ...storedRange(when, null),
        sequence: base.sequence + (significant ? 1 : 0),
        createdAt: at,
        updatedAt: at,
      });
      return { row: override, master: base };
    }
    const timing = input.when !== undefined || input.recurrence !== undefined;
    if (move) {
      await moveOverrides(store, tx, grant, base, eventTimeOf(base), when, move, base.sequence + 1, at);
    } else if (linesChanged && base.masterEventId === null && base.recurrence) {
      // A series given a new rule drops its changed instances, as calendar apps do.
      for (const override of await store.overridesOf(tx, grant, base.id)) await store.remove(tx, grant, override, at);
    }
    const updated = await store.update(tx, grant, base, {
      ...fields,
      ...(timing
        ? {
            ...eventTimeColumns(when),
            ...storedRange(when, recurrence),
            ...(base.masterEventId === null ? { recurrence: recurrence ? recurrenceLines : null } : {}),
          }
        : {}),
      sequence: base.sequence + (significant ? 1 : 0),
      updatedAt: at,
    });
    const seriesMaster =
      updated.masterEventId === null
        ? updated
        : await tx.query.events.findFirst({
            where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, updated.masterEventId)),
          });
    return { row: updated, master: seriesMaster ?? updated };
  });
  await pushSeries(state, grant, calendar.id, row.icalUid, input.event_id);

  if (input.notify_participants !== false && organizedBy(grant, row) && significant) {
    if (others(grant, master.participants).length > 0 || others(grant, row.participants).length > 0)
      await sendRequest(state, grant, master);
    if (removed.length > 0)
      await dispatch(
        state,
        composeCancel(
          senderOf(grant),
          row.id,
          { ...toCalendarEventData(row), sequence: row.sequence },
          removed,
          clock.now(),
        ),
      );
  }
  return toEvent(row);
}

/**
 * Deletes an event (a series with its changed instances). An instance id removes that one instance
 * (an EXDATE on the series). Participants of an event the grant organizes get an iMIP CANCEL.
 */
export async function destroyEvent(state: EventState, principal: Principal, input: DeleteEventInput): Promise<void> {
  const { db, store, now, clock } = state;
  const { grant, calendar } = await context(state, principal, input);
  const located = await locate(state, grant, calendar, input.event_id);
  const at = now();
  const organizer = organizedBy(grant, located.row);
  let cancelled: { event: CalendarEventData; participants: StoredParticipant[] } | undefined;
  await db.write(async (tx) => {
    const row = located.row;
    const addExdate = (master: EventRow, originalStart: number) =>
      store.update(tx, grant, master, {
        recurrence: [...(master.recurrence ?? []), exdateLine(eventTimeOf(master), originalStart)],
        sequence: master.sequence + 1,
        updatedAt: at,
      });
    if (located.instance) {
      // One computed instance: the series gets an EXDATE.
      const master = await addExdate(row, located.instance.originalStart);
      cancelled = {
        event: {
          ...toCalendarEventData(master),
          recurrence: null,
          recurrenceId: located.instance.originalStart,
          when: located.instance.when,
        },
        participants: master.participants,
      };
      return;
    }
    await store.remove(tx, grant, row, at);
    if (row.masterEventId !== null && row.originalStartTime !== null) {
      // A changed instance: gone, and excluded from its series.
      const master = await tx.query.events.findFirst({
        where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.masterEventId)),
      });
      const updated = master?.recurrence ? await addExdate(master, row.originalStartTime) : undefined;
      cancelled = {
        event: { ...toCalendarEventData(row), sequence: Math.max(row.sequence, updated?.sequence ?? 0) },
        participants: row.participants,
      };
      return;
    }
    cancelled = {
      event: { ...toCalendarEventData(row), sequence: row.sequence + 1 },
      participants: row.participants,
    };
  });
  await pushSeries(state, grant, calendar.id, located.row.icalUid, input.event_id);
  if (input.notify_participants !== false && organizer && cancelled) {
    await dispatch(
      state,
      composeCancel(
        senderOf(grant),
        input.event_id,
        cancelled.event,
        others(grant, cancelled.participants),
        clock.now(),
      ),
    );
  }
}
