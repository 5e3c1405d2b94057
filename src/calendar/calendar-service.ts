/**
 * @module calendar/calendar-service
 * A grant's calendars: the primary one every grant is created with, and additional ones up to
 * `config.maxCalendars` of its application's plan (trial or production). The primary cannot be deleted while other calendars exist.
 */
import { and, asc, count, desc, eq, gt, lt, or, type AnyColumn, type SQL } from 'drizzle-orm';
import { tables, type Executor, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { deletedEvent, eventRecorder } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import type { RemoteCollections } from '../ports/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type {
  Calendar,
  CalendarRefInput,
  CreateCalendarInput,
  ListCalendarsInput,
  UpdateCalendarInput,
} from '../schemas/calendars.js';
import { normalizeTimeZone } from '../time-zones.js';
import { metadataHasPairs } from './calendar-store.js';

import type { CalendarRow, CalendarService } from './contracts.js';

export type { CalendarRow } from './contracts.js';

/** The wire form of a calendar row. */
export function toCalendar(row: CalendarRow): Calendar {
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'calendar',
    name: row.name,
    description: row.description,
    location: row.location,
    timezone: row.timezone,
    read_only: false,
    is_owned_by_user: true,
    is_primary: row.isPrimary,
    ...(row.hexColor !== null ? { hex_color: row.hexColor } : {}),
    ...(row.metadata && Object.keys(row.metadata).length > 0 ? { metadata: row.metadata } : {}),
    ...(row.notifyBeforeStartMinutes !== null ? { notify_before_start_minutes: row.notifyBeforeStartMinutes } : {}),
    ...(row.eventTimers ? {} : { event_timers: false }),
  };
}

/** `key:value,key2:value2` → pairs. */
export function parseMetadataPairs(text: string): [string, string][] {
  return text.split(',').map((pair) => {
    const colon = pair.indexOf(':');
    return [pair.slice(0, colon).trim(), pair.slice(colon + 1).trim()];
  });
}

/** A SQL condition: the JSON metadata column has every pair. */
export function metadataMatches(column: AnyColumn, text: string): SQL {
  return metadataHasPairs(column, parseMetadataPairs(text));
}

/**
 * The 400 of a grant whose account has no calendars we can reach: a connected account given no CalDAV server (and,
 * until Microsoft Graph is built, Microsoft 365 accounts), rather than an empty list that would look like no events.
 */
export function noCalendarsError(grant: Pick<GrantRow, 'id' | 'email'>): AppError {
  return new AppError(
    'invalid_request',
    `Grant ${grant.id} (${grant.email}) has no calendar server: its account was connected without CalDAV. Connect it again with settings.caldav_url (and caldav_username, caldav_password when not the IMAP login) to use calendars, events, free/busy and availability. Microsoft 365 calendars (Microsoft Graph) are not supported yet.`,
    { grant_id: grant.id },
  );
}

/** The grant's calendars' home (ours without `remote`); a 400 when it has none. */
async function requireHome(remote: RemoteCollections | undefined, grant: GrantRow): Promise<'local' | 'remote'> {
  const home = remote ? await remote.calendarsOf(grant) : 'local';
  if (home === 'none') throw noCalendarsError(grant);
  return home;
}

/**
 * The 400 of a grant at its calendar limit: its primary plus at most `config.maxCalendars[plan]` others, `plan` being
 * its application's. Returns whether the grant has a primary.
 */
async function checkCalendarLimit(
  executor: Pick<Executor, 'select'>,
  grant: GrantRow,
  config: CoreDeps['config'],
): Promise<boolean> {
  const [application] = await executor
    .select({ plan: tables.applications.plan })
    .from(tables.applications)
    .where(eq(tables.applications.id, grant.applicationId));
  const plan = application?.plan ?? 'trial';
  const cap = config.maxCalendars[plan];
  const rows = await executor
    .select({ isPrimary: tables.calendars.isPrimary, total: count() })
    .from(tables.calendars)
    .where(eq(tables.calendars.grantId, grant.id))
    .groupBy(tables.calendars.isPrimary);
  const additional = rows.find((row) => !row.isPrimary)?.total ?? 0;
  const hasPrimary = rows.some((row) => row.isPrimary && row.total > 0);
  if (hasPrimary && additional >= cap) {
    throw new AppError(
      'invalid_request',
      `calendar limit reached: this grant already has ${additional} calendars besides its primary, the most its application's ${plan} plan allows (AGENTPOST_MAX_CALENDARS_${plan.toUpperCase()}=${cap}). Delete one first.`,
      { field: 'name' },
    );
  }
  return hasPrimary;
}

/** The 400 of deleting a primary calendar while the grant has others. */
async function checkDeletable(
  executor: Pick<Executor, 'select'>,
  grant: GrantRow,
  current: CalendarRow,
): Promise<void> {
  if (current.isPrimary) {
    const [others] = await executor
      .select({ total: count() })
      .from(tables.calendars)
      .where(and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.isPrimary, false)));
    if ((others?.total ?? 0) > 0) {
      throw new AppError(
        'invalid_request',
        `calendar_id: ${current.id} is the primary calendar; it cannot be deleted while the grant has ${others!.total} other calendar(s). Delete those first.`,
        { field: 'calendar_id' },
      );
    }
  }
}

/**
 * Creates the calendar service. `remote` says where each grant's calendars are (src/providers: ours, a CalDAV
 * server's copy, or none, a 400); a calendar of a CalDAV server is made, changed and deleted there first (MKCALENDAR,
 * PROPPATCH, DELETE), then here: a server that refuses leaves the copy here as it was.
 */
export function createCalendarService(
  { db, clock, newId, config }: CoreDeps,
  grants: GrantService,
  remote?: RemoteCollections,
): CalendarService {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

  /** A calendar of the grant by id or `primary`, or 404. */
  async function resolve(grant: GrantRow, calendarId: string): Promise<CalendarRow> {
    await requireHome(remote, grant);
    const where =
      calendarId === 'primary'
        ? and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.isPrimary, true))
        : and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.id, calendarId));
    const row = await db.orm.query.calendars.findFirst({ where });
    if (!row) throw notFound('Calendar', calendarId);
    return row;
  }

  return {
    resolve,

    /** The grant's primary calendar (where invitations land), or undefined if it was deleted. */
    async primaryOf(grantId: string): Promise<CalendarRow | undefined> {
      return db.orm.query.calendars.findFirst({
        where: and(eq(tables.calendars.grantId, grantId), eq(tables.calendars.isPrimary, true)),
      });
    },

    /** A page of the grant's calendars: the primary first, then the others oldest first. */
    async list(principal: Principal, input: ListCalendarsInput): Promise<{ data: Calendar[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      await requireHome(remote, grant);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 3);
      const conditions: (SQL | undefined)[] = [eq(tables.calendars.grantId, grant.id)];
      if (input.metadata_pair) conditions.push(metadataMatches(tables.calendars.metadata, input.metadata_pair));
      if (after) {
        const [primary, created, id] = after as [number, number, string];
        conditions.push(
          or(
            lt(tables.calendars.isPrimary, primary === 1),
            and(
              eq(tables.calendars.isPrimary, primary === 1),
              or(
                gt(tables.calendars.createdAt, created),
                and(eq(tables.calendars.createdAt, created), gt(tables.calendars.id, id)),
              ),
            ),
          ),
        );
      }
      const rows = await db.orm
        .select()
        .from(tables.calendars)
        .where(and(...conditions))
        .orderBy(desc(tables.calendars.isPrimary), asc(tables.calendars.createdAt), asc(tables.calendars.id))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.isPrimary ? 1 : 0, row.createdAt, row.id], toCalendar);
    },

    /** One calendar (`primary` accepted). */
    async find(principal: Principal, input: CalendarRefInput): Promise<Calendar> {
      const grant = await grants.require(principal, input.grant_id);
      return toCalendar(await resolve(grant, input.calendar_id));
    },

    /**
     * Adds a calendar. A grant has its primary plus at most `config.maxCalendars[plan]` others, `plan` being its
     * application's (trial or production).
     */
    async create(principal: Principal, input: CreateCalendarInput): Promise<Calendar> {
      const grant = await grants.require(principal, input.grant_id);
      const home = await requireHome(remote, grant);
      const at = now();
      const id = newId();
      if (home === 'remote') {
        // The limit is checked before the server is asked too (and again below, with the write).
        await checkCalendarLimit(db.orm, grant, config);
        await remote!.createCalendar(grant, {
          calendarId: id,
          name: input.name,
          description: input.description ?? null,
          hexColor: null,
        });
      }
      return db.write(async (tx) => {
        const hasPrimary = await checkCalendarLimit(tx, grant, config);
        const [row] = await tx
          .insert(tables.calendars)
          .values({
            id,
            grantId: grant.id,
            name: input.name,
            description: input.description ?? null,
            location: input.location ?? null,
            timezone: input.timezone ? (normalizeTimeZone(input.timezone) ?? 'UTC') : 'UTC',
            // A grant whose primary was deleted gets its next calendar as the new primary.
            isPrimary: !hasPrimary,
            metadata: input.metadata ?? null,
            notifyBeforeStartMinutes: input.notify_before_start_minutes ?? null,
            eventTimers: input.event_timers ?? true,
            createdAt: at,
            updatedAt: at,
          })
          .returning();
        const calendar = toCalendar(row!);
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: grant.id,
          type: 'calendar.created',
          objectId: row!.id,
          object: calendar,
          createdAt: at,
        });
        return calendar;
      });
    },

    /** Changes a calendar's name, description, location, time zone, colour or metadata. */
    async update(principal: Principal, input: UpdateCalendarInput): Promise<Calendar> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await resolve(grant, input.calendar_id);
      if (remote && (await remote.calendarsOf(grant)) === 'remote') {
        await remote.updateCalendar(grant, {
          calendarId: current.id,
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.hex_color !== undefined ? { hexColor: input.hex_color } : {}),
        });
      }
      return db.write(async (tx) => {
        const [row] = await tx
          .update(tables.calendars)
          .set({
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            ...(input.location !== undefined ? { location: input.location } : {}),
            ...(input.timezone !== undefined ? { timezone: normalizeTimeZone(input.timezone) ?? 'UTC' } : {}),
            ...(input.hex_color !== undefined ? { hexColor: input.hex_color } : {}),
            ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
            ...(input.notify_before_start_minutes !== undefined
              ? { notifyBeforeStartMinutes: input.notify_before_start_minutes }
              : {}),
            ...(input.event_timers !== undefined ? { eventTimers: input.event_timers } : {}),
            updatedAt: now(),
          })
          .where(and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.id, current.id)))
          .returning();
        if (!row) throw notFound('Calendar', input.calendar_id);
        const calendar = toCalendar(row);
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: grant.id,
          type: 'calendar.updated',
          objectId: row.id,
          object: calendar,
          createdAt: row.updatedAt,
        });
        return calendar;
      });
    },

    /** Deletes a calendar and its events. The primary can go only when it is the grant's last calendar. */
    async destroy(principal: Principal, input: CalendarRefInput): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await resolve(grant, input.calendar_id);
      if (remote && (await remote.calendarsOf(grant)) === 'remote') {
        // Checked before the server is asked too (and again below, with the write).
        await checkDeletable(db.orm, grant, current);
        await remote.deleteCalendar(grant, { calendarId: current.id });
      }
      await db.write(async (tx) => {
        await checkDeletable(tx, grant, current);
        await tx
          .delete(tables.events)
          .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.calendarId, current.id)));
        await tx
          .delete(tables.calendars)
          .where(and(eq(tables.calendars.grantId, grant.id), eq(tables.calendars.id, current.id)));
        await record(tx, deletedEvent(principal.applicationId, grant.id, 'calendar', current.id));
      });
    },
  };
}

export type { CalendarService } from './contracts.js';
