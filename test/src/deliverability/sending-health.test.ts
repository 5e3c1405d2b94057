/**
 * Sending health on a real database: the pause decision (a table of windows), the report listener adding reports to
 * the grant's days and pausing in the report's own transaction (state, reason, state change, grant.updated), the
 * gate refusing sends and scheduled sends while paused, and the resume (columns cleared, recorded with the request
 * id, the window's counters reset).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import { AppError, type Core, type Principal } from '../../../src/index.js';
import type { RecordedReport } from '../../../src/deliverability/contracts.js';
import { pauseReasonOf, SENDING_PAUSED } from '../../../src/deliverability/sending-health.js';
import { unixDayOfMs } from '../../../src/deliverability/send-gates.js';
import { SCHEDULED_SEND_JOB } from '../../../src/outbound/scheduled-sends.js';
import { fixedClock } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';

const DOMAIN = 'health.agentpost.localhost';
const THRESHOLDS = { pauseBounceRate: 0.05, pauseComplaintRate: 0.001, pauseMinSent: 50, pauseWindowDays: 7 };

describe('pauseReasonOf', () => {
  it.each([
    ['below the minimum volume, whatever the rates', { sent: 49, hardBounces: 49, complaints: 49 }, undefined],
    ['nothing sent', { sent: 0, hardBounces: 3, complaints: 0 }, undefined],
    ['bounce rate under the threshold', { sent: 100, hardBounces: 4, complaints: 0 }, undefined],
    [
      'bounce rate at the threshold',
      { sent: 100, hardBounces: 5, complaints: 0 },
      'hard-bounce rate 5% (5 of 100 recipients) reached the threshold of 5% over the last 7 days (UTC)',
    ],
    [
      'bounce rate over it',
      { sent: 60, hardBounces: 4, complaints: 0 },
      'hard-bounce rate 6.67% (4 of 60 recipients) reached the threshold of 5% over the last 7 days (UTC)',
    ],
    ['complaint rate under the threshold', { sent: 2000, hardBounces: 0, complaints: 1 }, undefined],
    [
      'complaint rate at the threshold',
      { sent: 1000, hardBounces: 0, complaints: 1 },
      'complaint rate 0.1% (1 of 1000 recipients) reached the threshold of 0.1% over the last 7 days (UTC)',
    ],
    [
      'bounces named first when both cross',
      { sent: 50, hardBounces: 10, complaints: 5 },
      'hard-bounce rate 20% (10 of 50 recipients) reached the threshold of 5% over the last 7 days (UTC)',
    ],
  ] as const)('%s', (_name, totals, expected) => {
    expect(pauseReasonOf(totals, THRESHOLDS)).toBe(expected);
  });

  it('says "day" for a one-day window', () => {
    expect(pauseReasonOf({ sent: 50, hardBounces: 50, complaints: 0 }, { ...THRESHOLDS, pauseWindowDays: 1 })).toMatch(
      /over the last 1 day \(UTC\)$/,
    );
  });
});

describe('sending health: the report listener, the gate and the resume', () => {
  const clock = fixedClock('2026-03-30T12:00:00Z');
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let principal: Principal;
  let next = 0;

  beforeAll(async () => {
    env = await createTestCore({ clock });
    core = env.core;
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    await core.accounts.domains.create(principal, { name: DOMAIN, domain_address: DOMAIN });
  });
  afterAll(async () => {
    await core.mail.inbound.close();
    env.close();
  });

  const today = () => unixDayOfMs(clock.now().getTime());
  const newGrant = async () =>
    (
      await core.accounts.grants.create(principal, {
        provider: 'nylas',
        settings: { email: `agent${++next}@${DOMAIN}` },
      })
    ).grant.id;
  /** Sets a day's counters as sends and earlier reports would have left them. */
  async function seed(
    grantId: string,
    day: number,
    counts: { sent: number; hardBounces?: number; complaints?: number },
  ) {
    await env.db.write((tx) => tx.insert(tables.grantSendingDays).values({ grantId, day, ...counts }));
  }
  /** Records a report as the report intake will: the listener runs in the report's transaction. */
  async function report(
    grantId: string,
    kind: RecordedReport['kind'],
    bounceType?: RecordedReport['bounceType'],
    at = clock.now().getTime(),
  ) {
    await env.db.write((tx) =>
      core.deliverability.sendingHealth.listener.reported(tx, {
        applicationId: principal.applicationId,
        grantId,
        kind,
        bounceType,
        recipient: `r${++next}@example.com`,
        from: `sender@${DOMAIN}`,
        at,
      }),
    );
  }
  const grantRow = async (grantId: string) =>
    (await env.db.orm.select().from(tables.grants).where(eq(tables.grants.id, grantId)))[0]!;
  const changes = (grantId: string) =>
    env.db.orm.select().from(tables.sendingStateChanges).where(eq(tables.sendingStateChanges.grantId, grantId));
  const updatedEvents = (grantId: string) =>
    env.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, 'grant.updated'), eq(tables.outboxEvents.grantId, grantId)));
  const day = async (grantId: string, unixDay: number) =>
    (
      await env.db.orm
        .select()
        .from(tables.grantSendingDays)
        .where(and(eq(tables.grantSendingDays.grantId, grantId), eq(tables.grantSendingDays.day, unixDay)))
    )[0];
  const send = (grantId: string, extra: Record<string, unknown> = {}) =>
    core.sending.outbound.send(principal, {
      grant_id: grantId,
      to: [{ email: 'someone@example.com' }],
      subject: 'Hi',
      body: 'Hello',
      ...extra,
    });

  it("pauses on the hard-bounce rate once the minimum volume is reached, in the report's transaction", async () => {
    const grantId = await newGrant();
    await seed(grantId, today() - 1, { sent: 60 });
    await seed(grantId, today(), { sent: 40 });
    for (let index = 0; index < 4; index++) await report(grantId, 'bounce', 'hard');
    // Soft bounces are counted but never pause.
    for (let index = 0; index < 10; index++) await report(grantId, 'bounce', 'soft');
    expect(await day(grantId, today())).toMatchObject({ sent: 40, hardBounces: 4, softBounces: 10, complaints: 0 });
    expect((await grantRow(grantId)).sendingPausedAt).toBeNull();

    await report(grantId, 'bounce', 'hard');
    const paused = await grantRow(grantId);
    const reason = 'hard-bounce rate 5% (5 of 100 recipients) reached the threshold of 5% over the last 7 days (UTC)';
    expect(paused).toMatchObject({
      sendingPausedAt: Math.floor(clock.now().getTime() / 1000),
      sendingPausedReason: reason,
    });
    expect(await changes(grantId)).toEqual([expect.objectContaining({ state: 'paused', reason, actor: 'service' })]);
    const events = await updatedEvents(grantId);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      id: grantId,
      sending: { status: 'paused', reason, paused_at: paused.sendingPausedAt },
    });
    expect((await core.accounts.grants.find(principal, grantId)).sending).toEqual({
      status: 'paused',
      reason,
      paused_at: paused.sendingPausedAt,
    });

    // More bounces while paused are counted, and change nothing else.
    await report(grantId, 'bounce', 'hard');
    expect(await changes(grantId)).toHaveLength(1);
    expect(await updatedEvents(grantId)).toHaveLength(1);
    expect((await day(grantId, today()))!.hardBounces).toBe(6);
  });

  it('pauses on the complaint rate, and not below the minimum volume', async () => {
    const small = await newGrant();
    await seed(small, today(), { sent: 49 });
    for (let index = 0; index < 5; index++) await report(small, 'complaint');
    for (let index = 0; index < 5; index++) await report(small, 'bounce', 'hard');
    expect((await grantRow(small)).sendingPausedAt).toBeNull();
    expect(await changes(small)).toEqual([]);

    const grantId = await newGrant();
    await seed(grantId, today() - 3, { sent: 1000 });
    await report(grantId, 'complaint');
    expect((await grantRow(grantId)).sendingPausedReason).toBe(
      'complaint rate 0.1% (1 of 1000 recipients) reached the threshold of 0.1% over the last 7 days (UTC)',
    );
  });

  it('judges only the rolling window: days before it do not count, and a report is added to its own day', async () => {
    const grantId = await newGrant();
    // Eight days ago: outside a 7-day window ending today.
    await seed(grantId, today() - 7, { sent: 100, hardBounces: 90 });
    await seed(grantId, today(), { sent: 100 });
    await report(grantId, 'bounce', 'hard');
    expect((await grantRow(grantId)).sendingPausedAt).toBeNull();
    // A late report about a send of two days ago goes to that day.
    await report(grantId, 'bounce', 'hard', clock.now().getTime() - 2 * 86_400_000);
    expect(await day(grantId, today() - 2)).toMatchObject({ sent: 0, hardBounces: 1 });
  });

  it('ignores reports of sends without a grant', async () => {
    await env.db.write((tx) =>
      core.deliverability.sendingHealth.listener.reported(tx, {
        applicationId: principal.applicationId,
        grantId: null,
        kind: 'complaint',
        bounceType: undefined,
        recipient: 'x@example.com',
        from: `sender@${DOMAIN}`,
        at: clock.now().getTime(),
      }),
    );
  });

  it('refuses sends while paused (403 sending_paused), fails scheduled sends that fire, and resumes through update', async () => {
    const grantId = await newGrant();
    await send(grantId);
    expect((await day(grantId, today()))!.sent).toBe(1);
    // A send scheduled before the pause.
    const scheduled = await send(grantId, {
      send_at: Math.floor(clock.now().getTime() / 1000) + 3600,
      subject: 'Later',
    });
    const scheduleId = (scheduled.data as { schedule_id: string }).schedule_id;
    await seed(grantId, today() - 1, { sent: 99 });
    for (let index = 0; index < 5; index++) await report(grantId, 'bounce', 'hard');
    const { sendingPausedReason: reason } = await grantRow(grantId);
    expect(reason).toMatch(/^hard-bounce rate 5% \(5 of 100 recipients\)/);

    const refused = await send(grantId).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'forbidden', type: SENDING_PAUSED });
    expect((refused as AppError).message).toContain(reason!);
    expect((refused as AppError).message).toContain(
      'PATCH /v3/grants/{grant_id} with {"sending": {"status": "active"}}',
    );
    // Nothing of the refused send was kept: still one recipient counted today.
    expect((await day(grantId, today()))!.sent).toBe(1);

    clock.advance(3600_000);
    const [job] = await env.db.orm
      .select()
      .from(tables.jobs)
      .where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${scheduleId}`));
    await core.jobs.handlers[SCHEDULED_SEND_JOB]!(
      { ...job!, attempts: 1 },
      { owner: 'test', extendLease: async () => true },
    );
    const [schedule] = await env.db.orm
      .select()
      .from(tables.scheduledMessages)
      .where(eq(tables.scheduledMessages.id, scheduleId));
    expect(schedule).toMatchObject({ status: 'failed' });
    expect(schedule!.error).toContain(reason!);

    const resumed = await core.accounts.grants.update(
      principal,
      { grant_id: grantId, sending: { status: 'active' } },
      { requestId: 'req_resume_1' },
    );
    expect(resumed.sending).toEqual({ status: 'active' });
    expect(await grantRow(grantId)).toMatchObject({ sendingPausedAt: null, sendingPausedReason: null });
    expect((await changes(grantId)).map(({ state, actor }) => [state, actor])).toEqual([
      ['paused', 'service'],
      ['active', 'req_resume_1'],
    ]);
    const events = await updatedEvents(grantId);
    expect(events.at(-1)!.payload).toMatchObject({ sending: { status: 'active' } });
    // The window starts afresh: its counters were reset, so one more bounce does not pause again.
    expect(await day(grantId, today())).toMatchObject({ sent: 0, hardBounces: 0 });
    await report(grantId, 'bounce', 'hard');
    expect((await grantRow(grantId)).sendingPausedAt).toBeNull();
    await send(grantId);
    expect((await day(grantId, today()))!.sent).toBe(1);

    // Resuming a grant that is not paused changes nothing and records nothing.
    await core.accounts.grants.update(
      principal,
      { grant_id: grantId, sending: { status: 'active' } },
      { requestId: 'req_resume_2' },
    );
    expect(await changes(grantId)).toHaveLength(2);
  });
});
