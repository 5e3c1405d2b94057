/**
 * Budgets and bursts (issue 37, item 5) end to end through the nylas SDK: a burst of 100 sends over the grant's
 * per-minute rate is answered at once, the sends over the rate queued (202 with the minute each leaves), and all 100
 * reach another Agent Account of this service, each once, as the clock moves minute by minute; past the queue's bound
 * the next send is refused with 429 and Retry-After. Past the daily budget, 429 until the next UTC day, naming it.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'budgets.agentpost.localhost';
const RECEIVER = `receiver@${DOMAIN}`;

describe('budgets and bursts', () => {
  // 09:00:00 UTC: a fresh minute, so the first minute's slots are all free.
  const clock = fixedClock('2026-05-04T09:00:00Z');
  let service: TestService;
  let receiver: string;
  let next = 0;

  beforeAll(async () => {
    service = await startTestService({
      deps: { clock },
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_RATE_LIMIT_GRANT: '0' },
    });
    receiver = await createMailbox(service, RECEIVER);
    // Every grant of the application's default workspace follows this policy.
    const policy = await service.nylas.policies.create({ requestBody: { name: 'Budgets' } });
    await service.core.deps.db.write((tx) =>
      tx.update(tables.workspaces).set({ policyId: policy.data.id }).where(eq(tables.workspaces.isDefault, true)),
    );
    policyId = policy.data.id;
  });
  afterAll(async () => {
    await service?.close();
  });
  let policyId = '';

  /** Sets the policy's oversight settings (its extension object `oversight`). */
  async function oversight(settings: Record<string, number>) {
    const updated = await request(service.url, 'PUT', `/v3/policies/${policyId}`, {
      key: service.apiKey,
      body: { oversight: settings },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data.oversight).toEqual(settings);
  }
  const sendRaw = (grantId: string, subject: string) =>
    request(service.url, 'POST', `/v3/grants/${grantId}/messages/send`, {
      key: service.apiKey,
      body: { to: [{ email: RECEIVER }], subject, body: `Body of ${subject}` },
    });
  const received = async (prefix: string) => {
    const subjects: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await service.nylas.messages.list({
        identifier: receiver,
        queryParams: { limit: 200, ...(pageToken ? { pageToken } : {}) },
      });
      subjects.push(
        ...page.data.map((message) => message.subject ?? '').filter((subject) => subject.startsWith(prefix)),
      );
      pageToken = page.nextCursor;
    } while (pageToken);
    return subjects;
  };

  it('queues a burst of 100 over the rate, delivers each once as the minutes pass, and refuses past the bound', async () => {
    await oversight({ send_rate_per_minute: 10, burst_queue_max: 90 });
    const sender = await createMailbox(service, `burst${++next}@${DOMAIN}`);
    const start = Math.floor(clock.now().getTime() / 1000);
    const sendAts: number[] = [];
    for (let index = 0; index < 99; index++) {
      const sent = await service.nylas.messages.send({
        identifier: sender,
        requestBody: { to: [{ email: RECEIVER }], subject: `burst ${index}`, body: `Body of burst ${index}` },
      });
      const sendAt = (sent.data as unknown as { sendAt?: number }).sendAt;
      sendAts.push(sendAt ?? start);
    }
    // On the wire a queued send is a 202 with the time it leaves, like any scheduled send.
    const last = await sendRaw(sender, 'burst 99');
    expect(last.status, last.text).toBe(202);
    expect(last.body.data).toMatchObject({ send_at: start + 540, schedule_id: expect.any(String) });
    sendAts.push(last.body.data.send_at as number);
    // Ten a minute: the first ten now, then ten in each of the nine minutes after, in the order sent.
    expect(sendAts).toEqual(Array.from({ length: 100 }, (_, index) => start + Math.floor(index / 10) * 60));

    const full = await sendRaw(sender, 'burst 100');
    expect(full.status, full.text).toBe(429);
    expect(full.body.error.type).toBe('send_queue_full');
    expect(full.body.error.message).toContain('burst_queue_max 90');
    expect(Number(full.headers.get('retry-after'))).toBe(60);

    for (let minute = 0; minute <= 9; minute++) {
      if (minute > 0) clock.advance(60_000);
      service.background.wake();
      await eventually(async () => ((await received('burst ')).length >= (minute + 1) * 10 ? true : undefined), 20_000);
    }
    const subjects = await received('burst ');
    expect(subjects).toHaveLength(100);
    expect(new Set(subjects)).toEqual(new Set(Array.from({ length: 100 }, (_, index) => `burst ${index}`)));
    const schedules = await request(service.url, 'GET', `/v3/grants/${sender}/messages/schedules`, {
      key: service.apiKey,
    });
    const codes = (schedules.body.data as { status: { code: string } }[]).map((schedule) => schedule.status.code);
    expect(codes).toHaveLength(90);
    expect(codes.every((code) => code === 'success')).toBe(true);
  });

  it('refuses past the daily budget with 429 until the next UTC day, naming it', async () => {
    await oversight({ sends_per_day: 2 });
    const sender = await createMailbox(service, `daily${++next}@${DOMAIN}`);
    for (const subject of ['daily 1', 'daily 2']) expect((await sendRaw(sender, subject)).status).toBe(200);
    const refused = await sendRaw(sender, 'daily 3');
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.error.type).toBe('send_budget_exceeded');
    expect(refused.body.error.message).toContain('the UTC day 2026-05-04 (sends_per_day)');
    const now = Math.floor(clock.now().getTime() / 1000);
    const midnight = Math.floor(now / 86_400 + 1) * 86_400;
    expect(Number(refused.headers.get('retry-after'))).toBe(midnight - now);
    clock.advance((midnight - now) * 1000);
    expect((await sendRaw(sender, 'daily 4')).status).toBe(200);
  });
});
