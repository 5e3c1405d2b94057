/**
 * @module calendar/event-remote
 * Events of calendars kept on the account's CalDAV server (src/providers `RemoteCollections`, src/dav/): a change
 * made through the API is written to the server after its commit, as the whole calendar object of its UID (the
 * series with its changed instances, RFC 4791 §4.1); and the objects the account's sync finds changed on the server
 * replace what is stored under their UID, with `event.created`, `event.updated` and `event.deleted` as for changes
 * made here.
 */
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { EventInsert, EventRow, RemoteEventSink } from './contracts.js';
import { toCalendarEventData } from './event-mapper.js';
import type { EventState } from './event-state.js';
import type { CalendarParser } from './ical-bounded.js';
import { buildCalendarObject, type ParsedEvent } from './ical.js';
import { valuesOf } from './itip-inbound-state.js';
import { instanceId } from './recurrence.js';

/**
 * After the commit of a change to the events of `uid` in `calendarId`: writes their calendar object to the server
 * (or deletes it when none is left). Nothing for a grant whose calendars are ours. A 409 when the server's copy
 * changed since it was read (the next sync brings it).
 */
export async function pushSeries(
  state: EventState,
  grant: GrantRow,
  calendarId: string,
  uid: string,
  eventId: string,
): Promise<void> {
  const remote = state.remote;
  if (!remote || (await remote.calendarsOf(grant)) !== 'remote') return;
  const rows = await state.db.orm
    .select()
    .from(tables.events)
    .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.icalUid, uid)))
    .orderBy(asc(tables.events.originalStartTime));
  const ordered = [
    ...rows.filter((row) => row.masterEventId === null),
    ...rows.filter((row) => row.masterEventId !== null),
  ];
  if (ordered.length === 0) {
    await remote.deleteEvent(grant, { calendarId, uid, eventId });
    return;
  }
  const ics = buildCalendarObject(ordered.map(toCalendarEventData), state.clock.now());
  await remote.putEvent(grant, { calendarId, uid, eventId, ics });
}

/** Rows of a first sync's events written per INSERT statement (35 columns each, well under SQLite's bound). */
const INSERT_ROWS = 200;

type Timed = ParsedEvent & { when: NonNullable<ParsedEvent['when']> };

/** Creates the sink the account's sync writes server objects through. */
export function createRemoteEventSink(state: EventState, parser: CalendarParser): RemoteEventSink {
  const { db, store, newId } = state;
  return {
    async apply(grant, calendarId, objects, within, options = {}) {
      // Parsed off the event loop (the bounded parser's thread), then written in one transaction.
      const parsed = await Promise.all(objects.map((ics) => parser.parse(ics)));
      const at = state.now();
      const organizerOf = (event: Timed) => event.organizer ?? { email: grant.email };
      // Events the grant organizes (or that name no organizer) can be changed here, as hosted ones.
      const local = (event: Timed) => ({ ...valuesOf(event, organizerOf(event)), readOnly: false, calendarId });
      const uids = parsed.flatMap((result) => (result.ok ? result.value.events.map((event) => event.uid) : []));
      return db.write(async (tx) => {
        // The series and single events already stored under these UIDs, read at once (none on a first sync).
        const storedByUid = new Map<string, EventRow>();
        for (let from = 0; from < uids.length; from += 500) {
          const rows = await tx
            .select()
            .from(tables.events)
            .where(
              and(
                eq(tables.events.grantId, grant.id),
                inArray(tables.events.icalUid, uids.slice(from, from + 500)),
                isNull(tables.events.masterEventId),
              ),
            );
          for (const row of rows) storedByUid.set(row.icalUid, row);
        }
        // The calendar's past, brought by its first sync, records no event.created (as an IMAP account's first sync):
        // its new events (and their changed instances) are written a few hundred rows per statement after the loop.
        const pastEvents: EventInsert[] = [];
        const pastInstances: EventInsert[] = [];
        const results: ({ ok: true; uid: string } | { ok: false; error: string })[] = [];
        const applied: { index: number; uid: string }[] = [];
        for (const [index, result] of parsed.entries()) {
          if (!result.ok) {
            results.push({ ok: false, error: result.error });
            continue;
          }
          const events = result.value.events.filter((event): event is Timed => event.when !== null);
          const master = events.find((event) => event.recurrenceId === undefined);
          const first = master ?? events[0];
          if (!first) {
            results.push({ ok: false, error: 'the object has no event with a start' });
            continue;
          }
          const stored = storedByUid.get(first.uid);
          if (stored) {
            for (const override of await store.overridesOf(tx, grant, stored.id))
              await tx.delete(tables.events).where(eq(tables.events.id, override.id));
          }
          const base = master ?? { ...first, recurrence: null, recurrenceId: undefined };
          let series: Pick<EventRow, 'id' | 'recurrence' | 'metadata'>;
          if (stored) series = await store.update(tx, grant, stored, { ...local(base), updatedAt: at });
          else {
            const values: EventInsert = {
              ...local(base),
              id: newId(),
              grantId: grant.id,
              metadata: null,
              createdAt: at,
              updatedAt: at,
            };
            if (options.history) pastEvents.push(values);
            else await store.insert(tx, grant, values);
            series = { id: values.id, recurrence: values.recurrence ?? null, metadata: null };
          }
          applied.push({ index, uid: first.uid });
          results.push({ ok: true, uid: first.uid });
          if (!master || !series.recurrence) continue;
          for (const override of events.filter((event) => event.recurrenceId !== undefined)) {
            const values: EventInsert = {
              ...local({ ...override, recurrence: null }),
              id: instanceId(series.id, override.recurrenceId!),
              grantId: grant.id,
              masterEventId: series.id,
              originalStartTime: override.recurrenceId!,
              metadata: series.metadata,
              createdAt: at,
              updatedAt: at,
            };
            if (options.history && !stored) pastInstances.push(values);
            else await tx.insert(tables.events).values(values);
          }
        }
        for (const rows of [pastEvents, pastInstances])
          for (let from = 0; from < rows.length; from += INSERT_ROWS)
            await tx.insert(tables.events).values(rows.slice(from, from + INSERT_ROWS));
        if (applied.length > 0) await within?.(tx, applied);
        return results;
      });
    },

    async remove(grant, uid) {
      await db.write(async (tx) => {
        const existing = await tx.query.events.findFirst({
          where: and(
            eq(tables.events.grantId, grant.id),
            eq(tables.events.icalUid, uid),
            isNull(tables.events.masterEventId),
          ),
        });
        if (existing) await store.remove(tx, grant, existing, state.now());
      });
    },
  };
}
