/**
 * `GET /v3/grants/{grant_id}/calendars/{calendar_id}/ics`: the calendar as an iCalendar feed
 * (`text/calendar`, METHOD:PUBLISH), so any calendar app can subscribe with the API key. Written by hand
 * because the body is not JSON; the work is `core.events.exportCalendar`.
 */
import type { Hono } from 'hono';
import { CalendarRefInputSchema } from '../../src/schemas/calendars.js';
import type { AppEnv } from '../types.js';

/** A file name safe in a Content-Disposition header. */
function feedFileName(name: string): string {
  const base = name.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
  return `${base || 'calendar'}.ics`;
}

/** Mounts the feed route on the authenticated `/v3` app. */
export function mountCalendarIcs(v3: Hono<AppEnv>): void {
  v3.get('/grants/:grant_id/calendars/:calendar_id/ics', async (c) => {
    const input = CalendarRefInputSchema.parse(c.req.param());
    const { calendar, ics } = await c.get('core').events.exportCalendar(c.get('principal'), input);
    return c.body(ics, 200, {
      'content-type': 'text/calendar; charset=utf-8',
      'content-disposition': `inline; filename="${feedFileName(calendar.name)}"`,
      'cache-control': 'no-store',
    });
  });
}
