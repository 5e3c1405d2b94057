/**
 * Calendar events and contacts. Calendars themselves live in grants.ts (every grant is born with one).
 */
import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { calendars, grants } from './grants.js';

/**
 * `range_end` of a recurring series with no end (no COUNT, no UNTIL): 9999-12-31T23:59:59Z, so window
 * queries stay plain comparisons (`range_start < :end AND range_end > :start`) on an index.
 */
export const OPEN_ENDED_RANGE_END = 253_402_300_799;

/** The four shapes of a Nylas `when`. */
export const WHEN_TYPES = ['time', 'timespan', 'date', 'datespan'] as const;
export type WhenType = (typeof WHEN_TYPES)[number];

/** Participant answer, as on the wire. */
export type ParticipantStatus = 'yes' | 'no' | 'maybe' | 'noreply';

/** Stored JSON shapes (wire field names, since they are returned as they are). */
export interface StoredParticipant {
  email: string;
  name?: string;
  status: ParticipantStatus;
  comment?: string;
  phone_number?: string;
}
export interface StoredEmailName {
  email: string;
  name?: string | undefined;
}
export interface StoredConferencing {
  provider: string;
  details: {
    url?: string | undefined;
    meeting_code?: string | undefined;
    password?: string | undefined;
    pin?: string | undefined;
    phone?: string[] | undefined;
  };
}
export interface StoredReminders {
  use_default: boolean;
  overrides: { reminder_minutes: number; reminder_method: 'email' | 'popup' | 'sound' | 'display' }[];
}

export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    calendarId: text('calendar_id')
      .notNull()
      .references(() => calendars.id, { onDelete: 'cascade' }),
    /** iCalendar UID, shared by a series and its overridden instances. */
    icalUid: text('ical_uid').notNull(),
    /** iCalendar SEQUENCE: the organizer's revision number (RFC 5546). */
    sequence: integer('sequence').notNull().default(0),
    /** Set on a stored override of one instance of a recurring series (a RECURRENCE-ID component). */
    masterEventId: text('master_event_id'),
    /** Unix seconds of the instance an override replaces (its RECURRENCE-ID). */
    originalStartTime: integer('original_start_time'),
    title: text('title'),
    description: text('description'),
    location: text('location'),
    whenType: text('when_type', { enum: WHEN_TYPES }).notNull(),
    /** Unix seconds (`time`: both equal; `timespan`). */
    startTime: integer('start_time'),
    endTime: integer('end_time'),
    startTimezone: text('start_timezone'),
    endTimezone: text('end_timezone'),
    /** `YYYY-MM-DD` (`date`: both equal; `datespan`: end inclusive, as on the wire). */
    startDate: text('start_date'),
    endDate: text('end_date'),
    /**
     * UTC range the event (or the whole series) covers, unix seconds, for window queries and free/busy.
     * All-day dates count from 00:00 UTC. An open-ended series has {@link OPEN_ENDED_RANGE_END}.
     */
    rangeStart: integer('range_start').notNull(),
    rangeEnd: integer('range_end').notNull(),
    /** RRULE / EXDATE / RDATE lines of a series master, or null. */
    recurrence: text('recurrence', { mode: 'json' }).$type<string[]>(),
    busy: integer('busy', { mode: 'boolean' }).notNull().default(true),
    status: text('status', { enum: ['confirmed', 'maybe', 'cancelled'] })
      .notNull()
      .default('confirmed'),
    visibility: text('visibility', { enum: ['default', 'public', 'private'] })
      .notNull()
      .default('default'),
    readOnly: integer('read_only', { mode: 'boolean' }).notNull().default(false),
    hideParticipants: integer('hide_participants', { mode: 'boolean' }).notNull().default(false),
    capacity: integer('capacity'),
    organizer: text('organizer', { mode: 'json' }).$type<StoredEmailName>(),
    creator: text('creator', { mode: 'json' }).$type<StoredEmailName>(),
    participants: text('participants', { mode: 'json' })
      .$type<StoredParticipant[]>()
      .notNull()
      .default(sql`'[]'`),
    resources: text('resources', { mode: 'json' }).$type<StoredEmailName[]>(),
    conferencing: text('conferencing', { mode: 'json' }).$type<StoredConferencing>(),
    reminders: text('reminders', { mode: 'json' }).$type<StoredReminders>(),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, string>>(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('events_calendar_range_idx').on(table.calendarId, table.rangeStart, table.id),
    /**
     * Window reads for free/busy and availability: past events end before the window, so scanning by end
     * skips a calendar's history (which only grows), and range_start is checked in the index.
     */
    index('events_calendar_range_end_idx').on(table.calendarId, table.rangeEnd, table.rangeStart),
    /** Series masters only (a few percent of rows), for expanding a calendar's series in a window. */
    index('events_series_range_idx')
      .on(table.calendarId, table.rangeEnd)
      .where(sql`${table.recurrence} is not null`),
    /**
     * Busy time of single events (all rows but series masters) without reading the rows: every column free/busy
     * and availability need, and whether the participants mention a "no" at all (only those rows are read).
     */
    index('events_single_busy_idx')
      .on(
        table.calendarId,
        table.rangeEnd,
        table.rangeStart,
        table.busy,
        table.status,
        table.whenType,
        table.startTime,
        table.endTime,
        table.startDate,
        table.endDate,
        // No commas in here: drizzle-kit splits index expressions at them.
        sql`(${table.participants} glob '*"no"*')`,
      )
      .where(sql`${table.recurrence} is null`),
    index('events_grant_range_idx').on(table.grantId, table.rangeStart, table.rangeEnd),
    index('events_grant_uid_idx').on(table.grantId, table.icalUid),
    index('events_master_idx').on(table.masterEventId, table.originalStartTime),
    /** Calendar timers (event-timers.ts): timed single events by start and by end, and series by their range. */
    index('events_timer_start_idx')
      .on(table.startTime)
      .where(sql`${table.recurrence} is null and ${table.whenType} in ('time', 'timespan')`),
    index('events_timer_end_idx')
      .on(table.endTime)
      .where(sql`${table.recurrence} is null and ${table.whenType} in ('time', 'timespan')`),
    index('events_timer_series_idx')
      .on(table.rangeEnd, table.rangeStart)
      .where(sql`${table.recurrence} is not null and ${table.whenType} in ('time', 'timespan')`),
  ],
);

export const CONTACT_SOURCES = ['address_book', 'inbox', 'domain'] as const;

export const contacts = sqliteTable(
  'contacts',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    displayName: text('display_name'),
    givenName: text('given_name'),
    middleName: text('middle_name'),
    surname: text('surname'),
    suffix: text('suffix'),
    nickname: text('nickname'),
    birthday: text('birthday'),
    companyName: text('company_name'),
    jobTitle: text('job_title'),
    managerName: text('manager_name'),
    officeLocation: text('office_location'),
    notes: text('notes'),
    pictureUrl: text('picture_url'),
    /** Base64 picture, returned only with `profile_picture=true`. */
    picture: text('picture'),
    source: text('source', { enum: CONTACT_SOURCES }).notNull().default('address_book'),
    /** Lower-cased first address, so mail collection can find a contact by address on an index. */
    primaryEmail: text('primary_email'),
    emails: text('emails', { mode: 'json' })
      .$type<{ email: string; type?: string }[]>()
      .notNull()
      .default(sql`'[]'`),
    phoneNumbers: text('phone_numbers', { mode: 'json' })
      .$type<{ number: string; type?: string }[]>()
      .notNull()
      .default(sql`'[]'`),
    physicalAddresses: text('physical_addresses', { mode: 'json' })
      .$type<Record<string, string>[]>()
      .notNull()
      .default(sql`'[]'`),
    webPages: text('web_pages', { mode: 'json' })
      .$type<{ url: string; type?: string }[]>()
      .notNull()
      .default(sql`'[]'`),
    imAddresses: text('im_addresses', { mode: 'json' })
      .$type<{ im_address: string; type?: string }[]>()
      .notNull()
      .default(sql`'[]'`),
    groups: text('groups', { mode: 'json' })
      .$type<{ id: string }[]>()
      .notNull()
      .default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('contacts_grant_order_idx').on(table.grantId, table.createdAt, table.id),
    index('contacts_grant_email_idx').on(table.grantId, table.primaryEmail),
  ],
);

/** What became of the iCalendar parts of a received message, for its mailbox. */
export type InvitationStatus = 'applied' | 'ignored' | 'unreadable';

/**
 * One row per received message (one copy, so one mailbox) that carried iCalendar parts: what applying them to the
 * mailbox's calendar did. Written by the `mail.invitations` job after the message was acknowledged; a message whose
 * invitation could not be read within the limits is kept, and this row says `unreadable` and why.
 */
export const invitationOutcomes = sqliteTable(
  'invitation_outcomes',
  {
    messageId: text('message_id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    status: text('status').$type<InvitationStatus>().notNull(),
    /** The outcome of each event of each part (`created`, `updated`, `cancelled`, `reply_recorded`, `ignored`), or why it was unreadable. */
    detail: text('detail', { mode: 'json' }).$type<{ action: string; eventId?: string; reason?: string }[]>().notNull(),
    /** Unix seconds. */
    createdAt: integer('created_at').notNull(),
  },
  (table) => [index('invitation_outcomes_grant_idx').on(table.grantId)],
);
