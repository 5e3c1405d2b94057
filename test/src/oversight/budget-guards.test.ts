/**
 * Budgets and bursts (issue 37, item 5) on a real database: the guards read what real sends wrote (outbound rows,
 * pending scheduled sends). Per-hour and per-day budgets refuse with 429 until the next window, naming it (sends
 * queued for the window count); new recipients per day count only addresses the grant never wrote to; a send over the
 * per-minute rate is queued in the first minute with a slot, slots handed out in order and never twice, up to the
 * queue's bound, past which 429 until the first queued send leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrantRow } from '../../../storage/index.js';
import { tables } from '../../../storage/index.js';
import { AppError, type Core, type Principal } from '../../../src/index.js';
import {
  budgetGuards,
  OVERSIGHT_DEFAULTS,
  type GuardVerdict,
  type ResolvedOversight,
  type SendAttempt,
} from '../../../src/oversight/index.js';
import { eq } from 'drizzle-orm';
import { fixedClock } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';

const DOMAIN = 'budgets.agentpost.localhost';

function oversightOf(settings: Partial<ResolvedOversight>): ResolvedOversight {
  return {
    mode: 'autonomous',
    modeFrom: 'default',
    untrustedReadGate: 'off',
    untrustedReadWindowMs: 3_600_000,
    injectionThreshold: 0.7,
    allowedRecipients: [],
    reviewers: [],
    agentHeaders: true,
    threadAgentSendsPerHour: null,
    loopMessages: 10,
    loopMinutes: 10,
    sendsPerHour: null,
    sendsPerDay: null,
    newRecipientsPerDay: null,
    sendRatePerMinute: null,
    burstQueueMax: OVERSIGHT_DEFAULTS.burstQueueMax,
    policy: {},
    ...settings,
  };
}

describe('budget guards', () => {
  // 12:10:00 UTC: the hour is 12:00–13:00, the minute 12:10.
  const clock = fixedClock('2026-03-30T12:10:00Z');
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let principal: Principal;
  let next = 0;
  const [budget, rate] = [0, 1];

  beforeAll(async () => {
    env = await createTestCore({ clock });
    core = env.core;
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    await core.accounts.domains.create(principal, { name: DOMAIN, domain_address: DOMAIN });
    // The recipients are mailboxes of this service (an unknown local address would bounce and be suppressed).
    for (const name of ['peer', 'first', 'second'])
      await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: `${name}@${DOMAIN}` } });
  });
  afterAll(async () => {
    await core.mail.inbound.close();
    env.close();
  });

  const newGrant = async () =>
    (
      await core.accounts.grants.create(principal, {
        provider: 'nylas',
        settings: { email: `agent${++next}@${DOMAIN}` },
      })
    ).grant.id;
  const rowOf = async (grantId: string): Promise<GrantRow> =>
    (await env.db.orm.select().from(tables.grants).where(eq(tables.grants.id, grantId)))[0]!;
  const send = (grantId: string, to: string, extra: Record<string, unknown> = {}) =>
    core.sending.outbound.send(principal, {
      grant_id: grantId,
      to: [{ email: to }],
      subject: 'Hi',
      body: 'Hello',
      ...extra,
    });
  const attempt = async (
    grantId: string,
    settings: Partial<ResolvedOversight>,
    recipients: string[] = [`peer@${DOMAIN}`],
    kind: SendAttempt['kind'] = 'send',
  ): Promise<SendAttempt> => ({
    principal,
    context: {},
    grant: await rowOf(grantId),
    oversight: oversightOf(settings),
    recipients,
    replyToMessageId: undefined,
    threadId: undefined,
    agent: false,
    kind,
    intent: {},
    at: clock.now().getTime(),
  });
  const refusal = (verdict: GuardVerdict | undefined) => {
    expect(verdict?.outcome).toBe('refuse');
    const error = (verdict as Extract<GuardVerdict, { outcome: 'refuse' }>).error;
    expect(error).toBeInstanceOf(AppError);
    return error as AppError & { details: { retryAfterSeconds: number } };
  };

  it('sends_per_hour: 429 once the clock hour is spent, until the next hour, naming it; queued sends count', async () => {
    const guards = budgetGuards(env.db);
    const grantId = await newGrant();
    const settings = { sendsPerHour: 3 };
    await send(grantId, `peer@${DOMAIN}`);
    expect(await guards[budget]!.check(await attempt(grantId, settings))).toBeUndefined();
    await send(grantId, `peer@${DOMAIN}`);
    // A send scheduled for 12:30 counts against this hour.
    await send(grantId, `peer@${DOMAIN}`, { send_at: Math.floor(clock.now().getTime() / 1000) + 1200 });
    const error = refusal(await guards[budget]!.check(await attempt(grantId, settings)));
    expect(error.code).toBe('rate_limited');
    expect(error.type).toBe('send_budget_exceeded');
    expect(error.details.retryAfterSeconds).toBe(50 * 60);
    expect(error.message).toContain('the hour 12:00 UTC–13:00 UTC (sends_per_hour)');
    expect(error.message).toContain('1 of them queued');
    expect(error.message).toContain('until 2026-03-30 13:00 UTC');
    // The scheduled send itself, leaving, was counted when it was queued: it goes.
    expect(await guards[budget]!.check(await attempt(grantId, settings, undefined, 'scheduled'))).toBeUndefined();
    // Another grant has its own budget.
    expect(await guards[budget]!.check(await attempt(await newGrant(), settings))).toBeUndefined();
  });

  it('sends_per_day: 429 until the next UTC day, naming it', async () => {
    const guards = budgetGuards(env.db);
    const grantId = await newGrant();
    for (let index = 0; index < 2; index++) await send(grantId, `peer@${DOMAIN}`);
    const error = refusal(await guards[budget]!.check(await attempt(grantId, { sendsPerDay: 2 })));
    expect(error.type).toBe('send_budget_exceeded');
    expect(error.message).toContain('the UTC day 2026-03-30 (sends_per_day)');
    expect(error.details.retryAfterSeconds).toBe(11 * 3600 + 50 * 60);
    expect(await guards[budget]!.check(await attempt(grantId, { sendsPerDay: 3 }))).toBeUndefined();
  });

  it('new_recipients_per_day counts addresses the grant never wrote to; known ones still go', async () => {
    const guards = budgetGuards(env.db);
    const grantId = await newGrant();
    const settings = { newRecipientsPerDay: 2 };
    await send(grantId, `first@${DOMAIN}`);
    await send(grantId, `second@${DOMAIN}`);
    await send(grantId, `first@${DOMAIN}`);
    const error = refusal(await guards[budget]!.check(await attempt(grantId, settings, [`third@${DOMAIN}`])));
    expect(error.type).toBe('new_recipient_budget_exceeded');
    expect(error.message).toContain(`wrote to 2 already, and third@${DOMAIN} is new`);
    expect(error.message).toContain('new_recipients_per_day');
    expect(error.details.retryAfterSeconds).toBe(11 * 3600 + 50 * 60);
    expect(await guards[budget]!.check(await attempt(grantId, settings, [`second@${DOMAIN}`]))).toBeUndefined();
    // The next day, yesterday's addresses are known and two new ones are allowed again.
    clock.advance(24 * 3600_000);
    try {
      expect(await guards[budget]!.check(await attempt(grantId, settings, [`first@${DOMAIN}`, `x@${DOMAIN}`]))).toBe(
        undefined,
      );
    } finally {
      clock.advance(-24 * 3600_000);
    }
  });

  it('send_rate_per_minute: over the rate a send is queued in the next minute with a slot, in order, never twice; past burst_queue_max 429', async () => {
    const guards = budgetGuards(env.db);
    const grantId = await newGrant();
    const settings = { sendRatePerMinute: 2, burstQueueMax: 3 };
    const now = Math.floor(clock.now().getTime() / 1000);
    // Two checks before either send is written: both get this minute, a third is queued (slots kept per grant).
    expect(await guards[rate]!.check(await attempt(grantId, settings))).toBeUndefined();
    expect(await guards[rate]!.check(await attempt(grantId, settings))).toBeUndefined();
    await send(grantId, `peer@${DOMAIN}`);
    await send(grantId, `peer@${DOMAIN}`);
    const queued: number[] = [];
    for (let index = 0; index < 3; index++) {
      const verdict = await guards[rate]!.check(await attempt(grantId, settings));
      expect(verdict).toMatchObject({ outcome: 'queue', check: 'send_rate' });
      const sendAt = (verdict as Extract<GuardVerdict, { outcome: 'queue' }>).sendAt;
      queued.push(sendAt);
      // What the gate's caller does with the verdict: a scheduled send at that time.
      await send(grantId, `peer@${DOMAIN}`, { send_at: sendAt });
    }
    // 12:11 and 12:11 (two a minute), then 12:12.
    expect(queued).toEqual([now + 60, now + 60, now + 120]);
    const full = refusal(await guards[rate]!.check(await attempt(grantId, settings)));
    expect(full.type).toBe('send_queue_full');
    expect(full.message).toContain('burst_queue_max 3');
    expect(full.details.retryAfterSeconds).toBe(60);
    // A scheduled send leaving has its slot already.
    expect(await guards[rate]!.check(await attempt(grantId, settings, undefined, 'scheduled'))).toBeUndefined();
  });

  it('without settings, neither guard reads or decides anything', async () => {
    const guards = budgetGuards(env.db);
    const grantId = await newGrant();
    for (const guard of guards) expect(await guard.check(await attempt(grantId, {}))).toBeUndefined();
  });
});
