/**
 * @module server/dashboard/pages/calendars
 * Calendars and events: the mailboxes the key reaches, a mailbox's calendars (paged), and a calendar's events in a
 * range of days (recurring events expanded, paged by page_token). The range is given as UTC days (`from`, `to`,
 * inclusive) so the form works without script; the times themselves show in the viewer's zone.
 */
import { html } from 'hono/html';
import type { Calendar } from '../../../src/schemas/calendars.js';
import type { Event } from '../../../src/schemas/events.js';
import type { Grant } from '../../../src/schemas/grants.js';
import type { DashboardRequest } from '../contracts.js';
import { guarded, pager, pageToken, people, runOne, runPage, seg, table, timeOf, type MorePage } from './kit.js';

const PER_PAGE = 50;
const DAY_SECONDS = 86_400;
/** The widest range one page asks for (a year), and the default (the next 30 days). */
const MAX_RANGE_DAYS = 366;
const DEFAULT_RANGE_DAYS = 30;

const calendarsHref = (request: DashboardRequest) => `${request.base}/calendars`;
const grantHref = (request: DashboardRequest, grantId: string) => `${calendarsHref(request)}/${seg(grantId)}`;
const calendarHref = (request: DashboardRequest, grantId: string, calendarId: string) =>
  `${grantHref(request, grantId)}/${seg(calendarId)}`;

/** A `YYYY-MM-DD` query parameter as the unix seconds of that UTC midnight, or undefined. */
export function dayParam(value: string | null): number | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** Unix seconds as `YYYY-MM-DD` (UTC). */
const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** When an event happens, in the shape its `when` has. */
function whenOf(event: Event) {
  const when = event.when;
  switch (when.object) {
    case 'time':
      return timeOf(when.time);
    case 'timespan':
      return html`${timeOf(when.start_time)} – ${timeOf(when.end_time)}`;
    case 'date':
      return html`${when.date} (all day)`;
    case 'datespan':
      return html`${when.start_date} – ${when.end_date} (all day)`;
  }
}

/** `/calendars`: the mailboxes whose calendars the key may read. */
const mailboxes: MorePage = {
  path: '/calendars',
  nav: { label: 'Calendars', order: 40 },
  async get(request) {
    const grants = await runOne<{ data: Grant[] }>(request, 'list_grants', { limit: 200 });
    const rows = grants.data.map(
      (grant) =>
        html`<tr>
          <td><a href="${grantHref(request, grant.id)}">${grant.email}</a></td>
          <td>${grant.provider}</td>
        </tr>`,
    );
    return {
      title: 'Calendars',
      body: html`${table('Mailboxes', ['Mailbox', 'Provider'], rows, 'No mailbox this key can read.')}`,
    };
  },
};

/** `/calendars/:grant_id`: a mailbox's calendars. */
const calendars: MorePage = {
  path: '/calendars/:grant_id',
  async get(request) {
    const grantId = request.params.grant_id!;
    const page = await runPage<Calendar>(request, 'list_calendars', {
      grant_id: grantId,
      limit: PER_PAGE,
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = page.data.map(
      (calendar) =>
        html`<tr>
          <td><a href="${calendarHref(request, calendar.grant_id, calendar.id)}">${calendar.name}</a></td>
          <td>${calendar.timezone ?? ''}</td>
          <td>${calendar.is_primary ? 'yes' : ''}</td>
          <td>${calendar.read_only ? 'yes' : ''}</td>
        </tr>`,
    );
    return {
      title: 'Calendars',
      body: html`<p><a href="${calendarsHref(request)}">All mailboxes</a></p>
        ${table('Calendars', ['Name', 'Time zone', 'Primary', 'Read-only'], rows, 'No calendars.')}
        ${pager(request, grantHref(request, grantId), page.next_cursor)}`,
    };
  },
};

/** `/calendars/:grant_id/:calendar_id`: the events of a range of days, recurring events expanded. */
const events: MorePage = {
  path: '/calendars/:grant_id/:calendar_id',
  async get(request) {
    const grantId = request.params.grant_id!;
    const calendar = await runOne<Calendar>(request, 'get_calendar', {
      grant_id: grantId,
      calendar_id: request.params.calendar_id!,
    });
    const today = Math.floor(request.now() / DAY_SECONDS) * DAY_SECONDS;
    const start = dayParam(request.query.get('from')) ?? today;
    const lastDay = dayParam(request.query.get('to')) ?? start + (DEFAULT_RANGE_DAYS - 1) * DAY_SECONDS;
    const end = Math.min(Math.max(lastDay, start), start + (MAX_RANGE_DAYS - 1) * DAY_SECONDS) + DAY_SECONDS;
    const page = await runPage<Event>(request, 'list_events', {
      grant_id: grantId,
      calendar_id: calendar.id,
      start,
      end,
      expand_recurring: true,
      limit: PER_PAGE,
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = page.data.map(
      (event) =>
        html`<tr>
          <td>${event.title ?? '(no title)'}</td>
          <td>${whenOf(event)}</td>
          <td>${event.location ?? ''}</td>
          <td>${people(event.participants)}</td>
          <td>${event.status ?? ''}</td>
        </tr>`,
    );
    const here = calendarHref(request, grantId, calendar.id);
    return {
      title: `Events · ${calendar.name}`,
      body: html`<p><a href="${grantHref(request, grantId)}">All calendars of this mailbox</a></p>
        <form method="get" action="${here}" class="inline">
          <label for="events-from">From (UTC day)</label>
          <input id="events-from" name="from" type="date" value="${dayOf(start)}" />
          <label for="events-to">To</label>
          <input id="events-to" name="to" type="date" value="${dayOf(end - DAY_SECONDS)}" />
          <button type="submit">Show</button>
        </form>
        ${table('Events', ['Title', 'When', 'Location', 'Participants', 'Status'], rows, 'No events in this range.')}
        ${pager(request, here, page.next_cursor)}`,
    };
  },
};

/** Calendars and events. */
export const CALENDAR_PAGES: readonly MorePage[] = [mailboxes, calendars, events].map(guarded);
