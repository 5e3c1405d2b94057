/**
 * Reputation per sending domain on a real database: the wire `reputation` of window totals; the report listener
 * adding reports to the day of the registered domain a message was sent from (grant sends and transactional sends
 * alike, and never another application's domain); the pause on the domain's own thresholds; the gate refusing every
 * send from the paused domain and none from another; and the resume (counters of the rates reset, the warm-up count
 * kept, recorded with the actor).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import { AppError, type Core, type Principal } from '../../../src/index.js';
import type { RecordedReport } from '../../../src/deliverability/contracts.js';
import { reputationOf } from '../../../src/domains/domain-reputation.js';
import { unixDayOfMs } from '../../../src/deliverability/send-gates.js';
import { fixedClock } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';

describe('reputationOf', () => {
  it('gives the rates over recipients sent, and zero rates when nothing was sent', () => {
    expect(reputationOf({ sent: 300, hardBounces: 3, softBounces: 4, complaints: 1 }, 7)).toEqual({
      sent: 300,
      hard_bounces: 3,
      soft_bounces: 4,
      complaints: 1,
      bounce_rate: 0.01,
      complaint_rate: 0.003333,
      window_days: 7,
    });
    expect(reputationOf({ sent: 0, hardBounces: 2, softBounces: 0, complaints: 0 }, 1)).toMatchObject({
      bounce_rate: 0,
      complaint_rate: 0,
    });
  });
});

describe('domain reputation: the listener, the pause, the gate and the resume', () => {
  const clock = fixedClock('2026-03-30T12:00:00Z');
  const MAIN = 'main.agentpost.localhost';
  const SIDE = 'side.agentpost.localhost';
  const FOREIGN = 'foreign.agentpost.localhost';
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let principal: Principal;
  let other: Principal;
  let mainId: string;
  let foreignId: string;
  let grant: string;

  beforeAll(async () => {
    // Domains pause at 10% over 20 recipients; grants only past a volume never reached here.
    env = await createTestCore(
      { clock },
      {
        AGENTPOST_PAUSE_MIN_SENT: '100000',
        AGENTPOST_DOMAIN_PAUSE_MIN_SENT: '20',
        AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: '0.1',
      },
    );
    core = env.core;
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    const created = await core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    other = { applicationId: created.application.id, via: 'local' };
    mainId = (await core.accounts.domains.create(principal, { name: MAIN, domain_address: MAIN })).id;
    await core.accounts.domains.create(principal, { name: SIDE, domain_address: SIDE });
    foreignId = (await core.accounts.domains.create(other, { name: FOREIGN, domain_address: FOREIGN })).id;
    grant = (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: `agent@${MAIN}` } }))
      .grant.id;
  });
  afterAll(async () => {
    await core.mail.inbound.close();
    env.close();
  });

  const today = () => unixDayOfMs(clock.now().getTime());
  let next = 0;
  const report = (
    from: string,
    grantId: string | null,
    kind: RecordedReport['kind'] = 'bounce',
    bounceType: RecordedReport['bounceType'] = 'hard',
  ) =>
    env.db.write((tx) =>
      core.deliverability.sendingHealth.listener.reported(tx, {
        applicationId: principal.applicationId,
        grantId,
        kind,
        bounceType,
        recipient: `r${++next}@example.com`,
        from,
        at: clock.now().getTime(),
      }),
    );
  const dayOf = async (domainId: string) =>
    (
      await env.db.orm
        .select()
        .from(tables.domainDailySends)
        .where(and(eq(tables.domainDailySends.domainId, domainId), eq(tables.domainDailySends.day, today())))
    )[0];
  const gate = (from: string, withGrant: boolean) =>
    env.db.write(async (tx) => {
      const grantRow = withGrant
        ? (await tx.select().from(tables.grants).where(eq(tables.grants.id, grant)))[0]
        : undefined;
      await core.deliverability.sendingHealth.gate.check(tx, {
        applicationId: principal.applicationId,
        grant: grantRow,
        from,
        recipients: ['x@example.com'],
        at: clock.now().getTime(),
      });
    });

  it("counts a report against the registered domain of the From, for grant and transactional sends, never another application's", async () => {
    await env.db.write((tx) =>
      tx.insert(tables.domainDailySends).values({ domainId: mainId, day: today(), sent: 20, ratedSent: 20 }),
    );
    await report(`agent@${MAIN}`, grant, 'bounce', 'soft');
    await report(`noreply@${MAIN}`, null);
    await report(`someone@${FOREIGN}`, null);
    await report('me@gmail.com', null);
    expect(await dayOf(mainId)).toMatchObject({
      sent: 20,
      ratedSent: 20,
      hardBounces: 1,
      softBounces: 1,
      complaints: 0,
    });
    expect(await dayOf(foreignId)).toBeUndefined();
    expect((await core.accounts.domains.find(principal, mainId)).reputation).toMatchObject({
      sent: 20,
      hard_bounces: 1,
      bounce_rate: 0.05,
    });
    expect((await core.accounts.domains.find(principal, mainId)).sending).toEqual({ status: 'active' });
  });

  it("pauses the domain at its threshold in the report's transaction, with domain.updated, and the gate refuses every sender on it", async () => {
    await report(`other@${MAIN}`, null);
    const domain = await core.accounts.domains.find(principal, mainId);
    expect(domain.sending).toEqual({
      status: 'paused',
      reason: 'hard-bounce rate 10% (2 of 20 recipients) reached the threshold of 10% over the last 7 days (UTC)',
      paused_at: Math.floor(clock.now().getTime() / 1000),
    });
    const events = await env.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'domain.updated'));
    expect(events).toHaveLength(1);
    // A further report changes nothing more: one pause, one event.
    await report(`other@${MAIN}`, null);
    expect(
      await env.db.orm.select().from(tables.outboxEvents).where(eq(tables.outboxEvents.type, 'domain.updated')),
    ).toHaveLength(1);
    expect(
      (await env.db.orm.select().from(tables.grants).where(eq(tables.grants.id, grant)))[0]!.sendingPausedAt,
    ).toBeNull();

    for (const [from, withGrant] of [
      [`agent@${MAIN}`, true],
      [`noreply@${MAIN}`, false],
      [`alias@${SIDE}`, true],
    ] as const) {
      const refused = await gate(from, withGrant).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, from).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: 'forbidden', type: 'sending_paused' });
      expect((refused as AppError).message).toContain(`Sending from the domain ${MAIN} is paused`);
    }
    // Another domain of the application, without the paused grant, sends.
    await expect(gate(`noreply@${SIDE}`, false)).resolves.toBeUndefined();
  });

  it('resumes through the domain service: counters of the rates reset, the warm-up count kept, the change recorded', async () => {
    await core.accounts.domains.update(
      principal,
      { domain_id: mainId, sending: { status: 'active' } },
      { requestId: 'req-resume' },
    );
    expect(await dayOf(mainId)).toMatchObject({
      sent: 20,
      ratedSent: 0,
      hardBounces: 0,
      softBounces: 0,
      complaints: 0,
    });
    const domain = await core.accounts.domains.find(principal, mainId);
    expect(domain.sending).toEqual({ status: 'active' });
    expect(domain.reputation).toMatchObject({ sent: 0, hard_bounces: 0 });
    const changes = await env.db.orm
      .select()
      .from(tables.domainSendingStateChanges)
      .where(eq(tables.domainSendingStateChanges.domainId, mainId));
    expect(changes.map(({ state, actor }) => ({ state, actor }))).toEqual([
      { state: 'paused', actor: 'service' },
      { state: 'active', actor: 'req-resume' },
    ]);
    expect(
      await env.db.orm.select().from(tables.outboxEvents).where(eq(tables.outboxEvents.type, 'domain.updated')),
    ).toHaveLength(2);
    await expect(gate(`agent@${MAIN}`, true)).resolves.toBeUndefined();
    // Resuming an active domain changes nothing; another application's domain is not found.
    await core.accounts.domains.update(
      principal,
      { domain_id: mainId, sending: { status: 'active' } },
      { requestId: 'again' },
    );
    expect(
      await env.db.orm
        .select()
        .from(tables.domainSendingStateChanges)
        .where(eq(tables.domainSendingStateChanges.domainId, mainId)),
    ).toHaveLength(2);
    await expect(
      core.accounts.domains.update(principal, { domain_id: foreignId, sending: { status: 'active' } }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
