/**
 * Calendar timers (issue 40, item 7): `event.starting` a set time before an event's start and `event.ending` at its
 * end. The due-runner (src/calendar/event-timers.ts) finds what fell due since its last run by the events' times
 * (the partial indexes on `events`), and these two tables make each firing happen once:
 * - `calendar_timer_firings`: one row per fired timer, keyed by the event (a series' master for its instances), the
 *   kind and the time it fired for (the occurrence's start or end). An event moved to another time has another key,
 *   so it fires for its new time; two processes racing for one timer insert one row, and only that one records.
 * - `calendar_timer_marks`: how far each runner has run (`*` for the service's clock, an application id for a
 *   test-mode application's own clock), so a run looks only at what fell due since the last.
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { events } from './calendar.js';

export const TIMER_KINDS = ['starting', 'ending'] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

export const calendarTimerFirings = sqliteTable(
  'calendar_timer_firings',
  {
    eventId: text('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: TIMER_KINDS }).notNull(),
    /** Unix seconds of what the timer fired for: the occurrence's start (`starting`) or end (`ending`). */
    occursAt: integer('occurs_at').notNull(),
    firedAt: integer('fired_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.eventId, table.kind, table.occursAt] }),
    /** Old firings are pruned by time. */
    index('calendar_timer_firings_occurs_idx').on(table.occursAt),
  ],
);

export const calendarTimerMarks = sqliteTable('calendar_timer_marks', {
  /** `*` (the service's clock) or an application id (a test clock). */
  scope: text('scope').primaryKey(),
  /** Unix seconds up to which timers were fired. */
  ranUntil: integer('ran_until').notNull(),
});
