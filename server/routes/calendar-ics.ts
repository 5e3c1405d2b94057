/**
 * `GET /v3/grants/{grant_id}/calendars/{calendar_id}/ics`: the calendar as an iCalendar feed
 * (`text/calendar`, METHOD:PUBLISH), so any calendar app can subscribe with the API key. Written by hand
 * because the body is not JSON; the work is `core.calendar.events.exportCalendar`.
 */
import type { Hono } from 'hono';
import { CalendarRefInputSchema } from '../../src/schemas/calendars.js';
import type { AppEnv } from '../types.js';
import { authorizeAs } from '../middleware/auth.js';
import { contentDisposition } from './attachments.js';

/** Mounts the feed route on the authenticated `/v3` app. */
export function mountCalendarIcs(v3: Hono<AppEnv>): void {
  v3.get('/grants/:grant_id/calendars/:calendar_id/ics', async (c) => {
    const input = CalendarRefInputSchema.parse(c.req.param());
    await authorizeAs(c, 'list_events', input.grant_id);
    const { calendar, ics } = await c.get('core').calendar.events.exportCalendar(c.get('principal'), input);
    return c.body(ics, 200, {
      'content-type': 'text/calendar; charset=utf-8',
      'content-disposition': contentDisposition('inline', `${calendar.name || 'calendar'}.ics`),
      'cache-control': 'no-store',
    });
  });
}
