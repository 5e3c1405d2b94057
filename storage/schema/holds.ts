/**
 * Tentative holds (issue 40, item 5): candidate slots held for several participants while an agent negotiates.
 * A live hold's slots count as busy in free/busy and availability until it is confirmed (an event), released or
 * expired. `calendar_hold_slots` has one row per held address and slot, the only rows the busy reads look at, and is
 * emptied when the hold stops being live.
 */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';
import { applications } from './tenancy.js';

export const HOLD_STATUSES = ['held', 'confirmed', 'released', 'expired'] as const;
export type HoldStatus = (typeof HOLD_STATUSES)[number];

export const calendarHolds = sqliteTable(
  'calendar_holds',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** The holder: the organizer grant, told of the expiry, whose calendar gets the event on confirmation. */
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    status: text('status', { enum: HOLD_STATUSES }).notNull().default('held'),
    /** Lower-cased addresses held (the organizer's own first), as given. */
    participants: text('participants', { mode: 'json' }).$type<{ email: string }[]>().notNull(),
    slots: text('slots', { mode: 'json' }).$type<{ start_time: number; end_time: number }[]>().notNull(),
    title: text('title'),
    expiresAt: integer('expires_at').notNull(),
    /** The event a confirmation made. */
    eventId: text('event_id'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    /** Live holds by expiry, for the purge loop's expiry pass. */
    index('calendar_holds_status_expires_idx').on(table.status, table.expiresAt),
  ],
);

export const calendarHoldSlots = sqliteTable(
  'calendar_hold_slots',
  {
    holdId: text('hold_id')
      .notNull()
      .references(() => calendarHolds.id, { onDelete: 'cascade' }),
    applicationId: text('application_id').notNull(),
    email: text('email').notNull(),
    startTime: integer('start_time').notNull(),
    endTime: integer('end_time').notNull(),
    /** The hold's expiry, copied so the busy reads need no join. */
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('calendar_hold_slots_email_idx').on(table.applicationId, table.email, table.endTime)],
);
