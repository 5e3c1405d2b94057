/**
 * @module calendar/event-mapper
 * Event rows ↔ the core's shapes, done once: row → `EventTime`, row → wire `Event`, row → the codec's
 * `CalendarEventData`, and `EventTime` → row columns.
 */
import type { EventInsert, EventRow } from './contracts.js';
import { toWireWhen, type EventTime } from './event-time.js';
import type { CalendarEventData } from './ical.js';
import type { Event } from '../schemas/events.js';

export type { EventInsert, EventRow } from './contracts.js';

/** The event time stored in a row. */
export function eventTimeOf(
  row: Pick<EventRow, 'whenType' | 'startTime' | 'endTime' | 'startTimezone' | 'endTimezone' | 'startDate' | 'endDate'>,
): EventTime {
  switch (row.whenType) {
    case 'time':
      return { kind: 'time', time: row.startTime ?? 0, timezone: row.startTimezone ?? 'UTC' };
    case 'timespan':
      return {
        kind: 'timespan',
        startTime: row.startTime ?? 0,
        endTime: row.endTime ?? 0,
        startTimezone: row.startTimezone ?? 'UTC',
        endTimezone: row.endTimezone ?? row.startTimezone ?? 'UTC',
      };
    case 'date':
      return { kind: 'date', date: row.startDate ?? '1970-01-01' };
    case 'datespan':
      return {
        kind: 'datespan',
        startDate: row.startDate ?? '1970-01-01',
        endDate: row.endDate ?? row.startDate ?? '1970-01-01',
      };
  }
}

/** The row columns of an event time. */
export function eventTimeColumns(
  time: EventTime,
): Pick<EventInsert, 'whenType' | 'startTime' | 'endTime' | 'startTimezone' | 'endTimezone' | 'startDate' | 'endDate'> {
  switch (time.kind) {
    case 'time':
      return {
        whenType: 'time',
        startTime: time.time,
        endTime: time.time,
        startTimezone: time.timezone,
        endTimezone: time.timezone,
        startDate: null,
        endDate: null,
      };
    case 'timespan':
      return {
        whenType: 'timespan',
        startTime: time.startTime,
        endTime: time.endTime,
        startTimezone: time.startTimezone,
        endTimezone: time.endTimezone,
        startDate: null,
        endDate: null,
      };
    case 'date':
      return {
        whenType: 'date',
        startTime: null,
        endTime: null,
        startTimezone: null,
        endTimezone: null,
        startDate: time.date,
        endDate: time.date,
      };
    case 'datespan':
      return {
        whenType: 'datespan',
        startTime: null,
        endTime: null,
        startTimezone: null,
        endTimezone: null,
        startDate: time.startDate,
        endDate: time.endDate,
      };
  }
}

/**
 * The wire form of a stored event. For a computed instance of a series pass `instance` (its id, original
 * start and time); the series fields are then those of the master.
 */
export function toEvent(row: EventRow, instance?: { id: string; originalStart: number; when: EventTime }): Event {
  const isInstance = instance !== undefined;
  const masterId = isInstance ? row.id : row.masterEventId;
  const originalStart = isInstance ? instance.originalStart : row.originalStartTime;
  return {
    id: isInstance ? instance.id : row.id,
    grant_id: row.grantId,
    calendar_id: row.calendarId,
    object: 'event',
    title: row.title,
    description: row.description,
    location: row.location,
    when: toWireWhen(isInstance ? instance.when : eventTimeOf(row)),
    participants: row.participants.map((participant) => ({ ...participant })),
    ...(row.resources && row.resources.length > 0 ? { resources: row.resources } : {}),
    organizer: row.organizer ?? null,
    creator: row.creator ?? null,
    status: row.status,
    busy: row.busy,
    read_only: row.readOnly,
    visibility: row.visibility,
    ...(!isInstance && row.recurrence && row.recurrence.length > 0 ? { recurrence: row.recurrence } : {}),
    ...(masterId !== null ? { master_event_id: masterId } : {}),
    ...(masterId !== null && originalStart !== null ? { original_start_time: originalStart } : {}),
    ical_uid: row.icalUid,
    hide_participants: row.hideParticipants,
    ...(row.capacity !== null ? { capacity: row.capacity } : {}),
    ...(row.conferencing ? { conferencing: row.conferencing } : {}),
    reminders: row.reminders ?? { use_default: true, overrides: [] },
    ...(row.metadata && Object.keys(row.metadata).length > 0 ? { metadata: row.metadata } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** What the iCalendar codec needs of a stored event (an override carries its RECURRENCE-ID). */
export function toCalendarEventData(row: EventRow): CalendarEventData {
  return {
    uid: row.icalUid,
    sequence: row.sequence,
    when: eventTimeOf(row),
    ...(row.masterEventId !== null && row.originalStartTime !== null ? { recurrenceId: row.originalStartTime } : {}),
    title: row.title,
    description: row.description,
    location: row.location,
    status: row.status,
    busy: row.busy,
    visibility: row.visibility,
    organizer: row.organizer ?? null,
    participants: row.participants.map(({ email, name, status, comment }) => ({
      email,
      status,
      ...(name ? { name } : {}),
      ...(comment ? { comment } : {}),
    })),
    recurrence: row.masterEventId === null ? row.recurrence : null,
    conferencing: row.conferencing ?? null,
    reminders: row.reminders ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
