/**
 * The overview (issue 39): `GET /v3/overview` through fetch and the dashboard's first page through a cookie-keeping
 * fetch client, on a running service with a controlled clock. Mail in and out today in a chosen time zone (two sends
 * either side of UTC midnight), the outbound queue (a recipient the relay defers), a scheduled send, background jobs
 * by state, more than 200 mailboxes counted exactly (the page used to count a listed page of 200), and scoped keys:
 * counts of their grants only, and null for what their permissions or scope do not cover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../helpers/clock.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually } from '../helpers/webhooks.js';

const DOMAIN = 'overview.agentpost.localhost';
/** More mailboxes than one page of list_grants (200), which the overview used to count. */
const MAILBOXES = 205;

describe('the overview', () => {
  const clock = fixedClock('2026-11-29T22:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let grantA: string;
  let grantB: string;

  const overview = async (key: string, query = '') => {
    const answer = await request(service.url, 'GET', `/v3/overview${query}`, { key });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as Record<string, any>;
  };
  const makeKey = async (body: Record<string, unknown>) => {
    const made = await request(service.url, 'POST', '/v3/api-keys', { key: service.apiKey, body });
    expect(made.status, made.text).toBe(201);
    return (made.body.data as { key: string }).key;
  };
  const send = async (to: string) => {
    const sent = await request(service.url, 'POST', `/v3/grants/${grantA}/messages/send`, {
      key: service.apiKey,
      body: { to: [{ email: to }], subject: `to ${to}`, body: 'Hello' },
    });
    expect(sent.status, sent.text).toBe(200);
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    // The relay defers one address: its recipient stays in the outbound queue (the clock does not move to its retry).
    sink.onRecipient = (address) =>
      address === 'slow@example.com' ? { code: 451, message: '4.2.1 try later' } : undefined;
    service = await startTestService({
      deps: { clock },
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
    });
    grantA = await createMailbox(service, `a@${DOMAIN}`);
    grantB = await createMailbox(service, `b@${DOMAIN}`);
    for (let batch = 2; batch < MAILBOXES; batch += 25) {
      const emails = Array.from({ length: Math.min(25, MAILBOXES - batch) }, (_, i) => `m${batch + i}@${DOMAIN}`);
      await Promise.all(emails.map((email) => createMailbox(service, email)));
    }
    // 22:00 UTC on the 29th: one to b (delivered here), one the relay defers.
    await send(`b@${DOMAIN}`);
    await send('slow@example.com');
    // 01:00 UTC on the 30th (20:00 on the 29th in New York): one more to b, and one scheduled for tomorrow.
    clock.set('2026-11-30T01:00:00Z');
    await send(`b@${DOMAIN}`);
    const scheduled = await request(service.url, 'POST', `/v3/grants/${grantA}/messages/send`, {
      key: service.apiKey,
      body: {
        to: [{ email: `b@${DOMAIN}` }],
        subject: 'later',
        body: 'Later',
        send_at: Date.parse('2026-12-01T01:00:00Z') / 1000,
      },
    });
    expect(scheduled.status, scheduled.text).toBe(202);
    await eventually(async () => (await overview(service.apiKey)).queues.outbound.deferred === 1, 10_000, 'deferral');
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  it('counts mail in and out of the day in the time zone asked for', async () => {
    const utc = await overview(service.apiKey);
    expect(utc.time_zone).toBe('UTC');
    expect(utc.day_start).toBe(Date.parse('2026-11-30T00:00:00Z') / 1000);
    expect(utc.day_end).toBe(Date.parse('2026-12-01T00:00:00Z') / 1000);
    expect(utc.mail_today).toEqual({ received: 1, sent: 1 });
    const newYork = await overview(service.apiKey, '?time_zone=America/New_York');
    expect(newYork.day_start).toBe(Date.parse('2026-11-29T05:00:00Z') / 1000);
    expect(newYork.mail_today).toEqual({ received: 2, sent: 3 });
    const refused = await request(service.url, 'GET', '/v3/overview?time_zone=Mars/Olympus', { key: service.apiKey });
    expect(refused.status).toBe(400);
  });

  it('counts every mailbox, the queues and the jobs behind them with COUNT queries', async () => {
    const whole = await overview(service.apiKey);
    expect(whole.scoped).toBe(false);
    expect(whole.grants).toEqual({ total: MAILBOXES, suspended: 0 });
    expect(whole.queues.outbound).toEqual({ queued: 0, deferred: 1 });
    expect(whole.queues.scheduled_sends).toBe(1);
    // The deferred delivery's retry and the scheduled send: both due later.
    expect(whole.queues.jobs).toEqual({ running: 0, due: 0, later: 2, dead: 0 });
    expect(whole.queues.webhook_deliveries).toEqual({ pending: 0, failed: 0 });
    expect(whole.webhooks).toEqual({ total: 0, active: 0, paused: 0, failing: 0, failed: 0 });
    expect(whole.domains).toEqual({ total: 1, paused: 0 });
    expect(whole.approvals).toEqual({ pending: 0 });
  });

  it('gives a scoped key the counts of its grants only, and null for what it may not read', async () => {
    const readerOfB = await makeKey({ name: 'b reader', scope: { grant_ids: [grantB] }, permissions: ['mail.read'] });
    const scoped = await overview(readerOfB);
    expect(scoped.scoped).toBe(true);
    expect(scoped.grants).toEqual({ total: 1, suspended: 0 });
    expect(scoped.mail_today).toEqual({ received: 1, sent: 0 });
    expect(scoped.queues).toEqual({
      outbound: { queued: 0, deferred: 0 },
      scheduled_sends: 0,
      webhook_deliveries: null,
      jobs: null,
    });
    expect([scoped.webhooks, scoped.domains, scoped.approvals]).toEqual([null, null, null]);
    // With admin, a scoped key counts the jobs of its grants: a's are the two above, b has none.
    const adminOfA = await makeKey({ name: 'a admin', scope: { grant_ids: [grantA] }, permissions: ['admin'] });
    const ofA = await overview(adminOfA);
    expect(ofA.queues.jobs).toEqual({ running: 0, due: 0, later: 2, dead: 0 });
    expect(ofA.mail_today).toBeNull();
    expect(ofA.domains).toBeNull();
    const adminOfB = await makeKey({ name: 'b admin', scope: { grant_ids: [grantB] }, permissions: ['admin'] });
    expect((await overview(adminOfB)).queues.jobs).toEqual({ running: 0, due: 0, later: 0, dead: 0 });
  });

  it("shows the counts on the dashboard's overview, in the viewer's time zone", async () => {
    const browser = new DashboardClient(service.url);
    expect((await browser.signIn(service.apiKey)).status).toBe(303);
    // What the dashboard's script writes: the browser's time zone.
    browser.cookies.set('agentpost_time_zone', 'America%2FNew_York');
    const page = await browser.get('/');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/Mailboxes<\/a>\s*<\/h2>\s*<div class="figure">\s*205 /);
    expect(page.text).toContain('2 in · 3 out');
    expect(page.text).toContain('the day in America/New_York');
    expect(page.text).toMatch(/Outbound queue[\s\S]*?1\s*<span class="muted">\(1 waiting for a retry\)/);
    expect(page.text).toMatch(/Scheduled sends[\s\S]*?<div class="figure">1<\/div>/);
    // The form's zone wins over the cookie; a name that is not a zone is said so, and the day is UTC's.
    expect((await browser.get('/?time_zone=UTC')).text).toContain('1 in · 1 out');
    const wrong = await browser.get('/?time_zone=Mars%2FOlympus');
    expect(wrong.text).toContain('Mars/Olympus is not a time zone');
    expect(wrong.text).toContain('1 in · 1 out');

    const scoped = new DashboardClient(service.url);
    const key = await makeKey({ name: 'page b', scope: { grant_ids: [grantB] }, permissions: ['mail.read'] });
    await scoped.signIn(key);
    const narrow = await scoped.get('/');
    expect(narrow.text).toContain('(its grants only)');
    expect(narrow.text).toMatch(/Webhooks<\/a>\s*<\/h2>\s*<p class="muted">Not for this key/);
    expect(narrow.text).toContain('1 in · 0 out');
  });
});
