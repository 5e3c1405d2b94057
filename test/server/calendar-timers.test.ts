/**
 * Calendar timers (issue 40, item 7) end to end, with a clock the test moves: a webhook receiver on loopback gets
 * `event.starting` the calendar's lead before an event starts (10 minutes by default) and `event.ending` at its end,
 * once each across runs of the due-runner (the background loop's and the test's own, on one clock); a per-calendar
 * setting changes the lead or turns timers off; a moved event fires for its new time; a cancelled or deleted one
 * fires nothing; the instances of a series each fire; a second runner on the same database (another process, or the
 * same after a restart) fires nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventTimerService } from '../../src/calendar/index.js';
import { runDueTimers } from '../../src/index.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const T0 = Date.parse('2026-06-01T09:00:00Z');
const seconds = (ms: number) => Math.floor(ms / 1000);
const MINUTE = 60_000;

type Json = Record<string, any>;

describe('calendar timers: event.starting and event.ending', () => {
  const clock = fixedClock(new Date(T0).toISOString());
  let service: TestService;
  let hook: WebhookReceiver;
  let grantId: string;

  /**
   * The timer notifications the receiver got, as `type event-id`, one per notification id: delivery is at least once
   * (a delivery in flight while the test moves the clock past its lease is delivered again), receivers dedupe by id.
   */
  const received = () => [
    ...new Map(
      hook.deliveries
        .map((delivery) => delivery.json as Json)
        .filter((body) => /^event\.(starting|ending)$/.test(body.type))
        .map((body) => [body.id as string, `${body.type} ${body.data.object.id}`]),
    ).values(),
  ];

  /** Moves the clock to `T0 + minutes` and runs the due-runner there. */
  async function at(minutes: number): Promise<number> {
    clock.set(new Date(T0 + minutes * MINUTE).toISOString());
    return runDueTimers(service.core, clock.now());
  }

  /** The timer notifications once the receiver holds `count` (the runs' counts show none fired twice). */
  async function settle(count: number): Promise<string[]> {
    await eventually(async () => (received().length >= count ? true : undefined));
    return received();
  }

  async function createEvent(body: Json, calendarId = 'primary'): Promise<Json> {
    const created = await request(service.url, 'POST', `/v3/grants/${grantId}/events?calendar_id=${calendarId}`, {
      key: service.apiKey,
      body,
    });
    expect(created.status).toBe(200);
    return created.body.data as Json;
  }

  beforeAll(async () => {
    service = await startTestService({
      deps: { clock },
      // The background loop runs the timers at start and then once a minute of real time: the test's own runs, on
      // the same clock, are the ones that fire, so their counts are exact.
      env: {
        AGENTPOST_RATE_LIMIT_APPLICATION: '0',
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_WORKER_POLL_MS: '60000',
      },
    });
    hook = await startReceiver();
    grantId = await createMailbox(service, 'planner@timers.agentpost.localhost');
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: ['event.starting', 'event.ending'] as never, webhookUrl: hook.url },
    });
  });

  afterAll(async () => {
    await service?.close();
    await hook?.close();
  });

  it('fires event.starting 10 minutes before and event.ending at the end, once each, with the event', async () => {
    await at(0);
    const event = await createEvent({
      title: 'Stand-up',
      when: { start_time: seconds(T0) + 30 * 60, end_time: seconds(T0) + 45 * 60 },
    });
    expect(await at(19)).toBe(0);
    expect(await at(20)).toBe(1);
    // A second run at the same time (the background loop's, woken) and later ones fire nothing more.
    service.background.wake();
    expect(await runDueTimers(service.core, clock.now())).toBe(0);
    expect(await at(25)).toBe(0);
    expect(await at(44)).toBe(0);
    expect(await at(46)).toBe(1);
    expect(await at(50)).toBe(0);
    expect(await settle(2)).toEqual([`event.starting ${event.id}`, `event.ending ${event.id}`]);
    const starting = hook.deliveries
      .map((delivery) => delivery.json as Json)
      .find((body) => body.type === 'event.starting')!;
    // The same payload shape as every event.* webhook: the event object.
    expect(starting.data.object).toMatchObject({ id: event.id, object: 'event', title: 'Stand-up', grant_id: grantId });
    expect(starting.data.object.when).toMatchObject({ start_time: seconds(T0) + 30 * 60 });
  });

  it('fires nothing twice for a second runner on the same database (another process, or after a restart)', async () => {
    const other = createEventTimerService({ db: service.core.deps.db, newId: service.core.deps.newId, clock });
    // Looking back over the whole morning: everything in it already fired.
    expect(await other.runDue(clock.now(), { since: new Date(T0 - 60 * MINUTE) })).toBe(0);
  });

  it('takes the lead from the calendar, and a calendar can turn its timers off', async () => {
    hook.deliveries.length = 0;
    const early = await request(service.url, 'POST', `/v3/grants/${grantId}/calendars`, {
      key: service.apiKey,
      body: { name: 'Early', notify_before_start_minutes: 60 },
    });
    expect(early.status).toBe(200);
    const earlyCalendar = early.body.data as Json;
    expect(earlyCalendar.notify_before_start_minutes).toBe(60);
    const quiet = await request(service.url, 'POST', `/v3/grants/${grantId}/calendars`, {
      key: service.apiKey,
      body: { name: 'Quiet', event_timers: false },
    });
    const quietCalendar = quiet.body.data as Json;
    expect(quietCalendar.event_timers).toBe(false);

    const base = seconds(T0) + 180 * 60; // 12:00
    const lead = await createEvent(
      { title: 'Board', when: { start_time: base, end_time: base + 600 } },
      earlyCalendar.id,
    );
    await createEvent({ title: 'Silent', when: { start_time: base, end_time: base + 600 } }, quietCalendar.id);
    expect(await at(119)).toBe(0);
    expect(await at(120)).toBe(1); // 11:00, an hour before
    // Back to the default: null.
    const reset = await request(service.url, 'PUT', `/v3/grants/${grantId}/calendars/${earlyCalendar.id}`, {
      key: service.apiKey,
      body: { notify_before_start_minutes: null },
    });
    expect(reset.body.data.notify_before_start_minutes).toBeUndefined();
    expect(await at(200)).toBe(1); // the end of Board; Silent fires nothing
    expect(await settle(2)).toEqual([`event.starting ${lead.id}`, `event.ending ${lead.id}`]);
  });

  it('fires a moved event for its new time, and nothing for a cancelled or deleted one', async () => {
    hook.deliveries.length = 0;
    const base = seconds(T0) + 300 * 60; // 14:00
    const moved = await createEvent({ title: 'Review', when: { start_time: base, end_time: base + 1800 } });
    const cancelled = await createEvent({ title: 'Lunch', when: { start_time: base, end_time: base + 1800 } });
    const deleted = await createEvent({ title: 'Coffee', when: { start_time: base, end_time: base + 1800 } });
    const put = (id: string, body: Json) =>
      request(service.url, 'PUT', `/v3/grants/${grantId}/events/${id}?calendar_id=primary`, {
        key: service.apiKey,
        body,
      });
    expect((await put(cancelled.id, { status: 'cancelled' })).status).toBe(200);
    expect(
      (
        await request(service.url, 'DELETE', `/v3/grants/${grantId}/events/${deleted.id}?calendar_id=primary`, {
          key: service.apiKey,
        })
      ).status,
    ).toBe(200);
    expect(await at(290)).toBe(1); // 13:50: Review's starting
    // Moved after its timer fired: an hour later, it fires for its new time.
    expect((await put(moved.id, { when: { start_time: base + 3600, end_time: base + 5400 } })).status).toBe(200);
    expect(await at(330)).toBe(0); // 14:30, its old end: nothing
    expect(await at(350)).toBe(1); // 14:50: starting for 15:00
    expect(await at(390)).toBe(1); // 15:30: ending
    expect(await settle(3)).toEqual([
      `event.starting ${moved.id}`,
      `event.starting ${moved.id}`,
      `event.ending ${moved.id}`,
    ]);
    const bodies = [
      ...new Map(hook.deliveries.map((delivery) => [(delivery.json as Json).id, delivery.json as Json])).values(),
    ];
    expect(bodies.map((body) => body.data.object.when.start_time)).toEqual([base, base + 3600, base + 3600]);
  });

  it('fires each instance of a series in the window, and an event created inside its lead at once', async () => {
    hook.deliveries.length = 0;
    const base = seconds(T0) + 24 * 3600; // tomorrow 09:00
    const series = await createEvent({
      title: 'Daily',
      when: { start_time: base, end_time: base + 900 },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=2'],
    });
    // Two days at once (a test clock moving far): both days' instances, in order.
    clock.set(new Date(T0 + 24 * 3600_000 - 20 * MINUTE).toISOString());
    await runDueTimers(service.core, clock.now());
    const fired = await runDueTimers(service.core, new Date((base + 86_400 + 1000) * 1000), {
      since: clock.now(),
    });
    expect(fired).toBe(4);
    const ids = (await settle(4)).map((line) => line.split(' '));
    expect(ids.map(([type]) => type)).toEqual(['event.starting', 'event.ending', 'event.starting', 'event.ending']);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(2);
    for (const [, id] of ids) expect(id!.startsWith(series.id as string)).toBe(true);

    hook.deliveries.length = 0;
    clock.set(new Date((base + 3 * 86_400) * 1000).toISOString());
    await runDueTimers(service.core, clock.now());
    const soon = await createEvent({
      title: 'Right away',
      when: { start_time: seconds(clock.now().getTime()) + 300, end_time: seconds(clock.now().getTime()) + 900 },
    });
    clock.advance(1000);
    expect(await runDueTimers(service.core, clock.now())).toBe(1);
    expect(await settle(1)).toEqual([`event.starting ${soon.id}`]);
  });
  it('fires a series moved after it was expanded at its new time (the expansion is kept only while the series is unchanged)', async () => {
    hook.deliveries.length = 0;
    const base = seconds(T0) + 10 * 86_400 + 3600; // day 10, 10:00
    clock.set(new Date((base - 40 * 60) * 1000).toISOString());
    await runDueTimers(service.core, clock.now());
    const series = await createEvent({
      title: 'Weekly',
      when: { start_time: base, end_time: base + 900 },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=2'],
    });
    clock.advance(60_000);
    expect(await runDueTimers(service.core, clock.now())).toBe(0); // expanded: 10:00 is not due yet
    const moved = await request(service.url, 'PUT', `/v3/grants/${grantId}/events/${series.id}?calendar_id=primary`, {
      key: service.apiKey,
      body: { when: { start_time: base + 1200, end_time: base + 2100 }, recurrence: ['RRULE:FREQ=WEEKLY;COUNT=2'] },
    });
    expect(moved.status).toBe(200);
    clock.set(new Date((base - 10 * 60) * 1000).toISOString());
    expect(await runDueTimers(service.core, clock.now())).toBe(0); // its old time: nothing
    // 10:10, inside the hour the series were expanded for: the moved series fires for 10:20.
    clock.set(new Date((base + 10 * 60) * 1000).toISOString());
    expect(await runDueTimers(service.core, clock.now())).toBe(1);
    // (Earlier events' timers, fired by the first run of this day, may arrive too: only the series' are looked at.)
    const ofSeries = await eventually(async () => {
      const lines = received().filter((line) => line.includes(` ${series.id as string}`));
      return lines.length > 0 ? lines : undefined;
    });
    expect(ofSeries).toHaveLength(1);
    expect(ofSeries[0]!.startsWith(`event.starting ${series.id as string}`)).toBe(true);
  });
});
