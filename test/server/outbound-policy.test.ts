/**
 * The outbound stage over HTTP with the nylas SDK: `outbound_send` rules (block 403 naming the rule; compose versus
 * reply), the daily send quota (the (N+1)th send of the UTC day is a 429 with Retry-After; the next day sends again,
 * with the injected clock), the size limit (413), a failed evaluation (503), scheduled sends (checked when scheduled
 * and when they fire), the dry run (200 with the verdicts; nothing stored, queued or sent), and the rule-evaluation
 * row of each case. Rules and policies are written straight into their tables (the admin API is built elsewhere).
 */
import { and, eq } from 'drizzle-orm';
import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  tables,
  type StoredPolicyLimits,
  type StoredRuleAction,
  type StoredRuleCondition,
} from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'outpolicy.agentpost.localhost';
const SENDER = `sender@${DOMAIN}`;
const FRIEND = `friend@${DOMAIN}`;
const T0 = '2026-03-30T22:00:00Z';

interface RuleSpec {
  id: string;
  name: string;
  conditions: StoredRuleCondition[];
  actions?: StoredRuleAction[];
  matchOperator?: 'all' | 'any';
}

describe('outbound stage: rules, daily quota, size, dry run', () => {
  const clock = fixedClock(T0);
  let service: TestService;
  let sink: SmtpSink;
  let sender: string;
  let friend: string;
  let applicationId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
      deps: { clock },
    });
    sender = await createMailbox(service, SENDER);
    friend = await createMailbox(service, FRIEND);
    applicationId = await service.core.accounts.applications.defaultApplicationId();
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });
  beforeEach(async () => {
    await administer({ rules: [] });
    clock.set(T0);
    // Each test starts with a fresh day's count, and with the relaying of earlier tests finished.
    await db().client.execute('delete from grant_daily_usage');
    await relayed();
  });

  /** Waits until every queued recipient was relayed (the sink accepts them all). */
  async function relayed(): Promise<void> {
    await eventually(async () =>
      (await count("select count(*) as n from outbound_recipients where status = 'queued'")) === 0 ? true : undefined,
    );
  }

  const db = () => service.core.deps.db;

  /** Puts rules and (optionally) a policy on the default workspace, replacing what was there. */
  async function administer({ rules, limits }: { rules: RuleSpec[]; limits?: StoredPolicyLimits }): Promise<void> {
    const at = Math.floor(clock.now().getTime() / 1000);
    await db().write(async (tx) => {
      await tx
        .update(tables.workspaces)
        .set({ policyId: null, ruleIds: [] })
        .where(eq(tables.workspaces.applicationId, applicationId));
      await tx.delete(tables.rules).where(eq(tables.rules.applicationId, applicationId));
      await tx.delete(tables.policies).where(eq(tables.policies.applicationId, applicationId));
      for (const rule of rules) {
        await tx.insert(tables.rules).values({
          id: rule.id,
          applicationId,
          name: rule.name,
          trigger: 'outbound',
          matchOperator: rule.matchOperator ?? 'all',
          conditions: rule.conditions,
          actions: rule.actions ?? [{ type: 'block' }],
          createdAt: at,
          updatedAt: at,
        });
      }
      if (limits)
        await tx
          .insert(tables.policies)
          .values({ id: 'policy_out', applicationId, name: 'Outbound limits', limits, createdAt: at, updatedAt: at });
      await tx
        .update(tables.workspaces)
        .set({ policyId: limits ? 'policy_out' : null, ruleIds: rules.map((rule) => rule.id) })
        .where(and(eq(tables.workspaces.applicationId, applicationId), eq(tables.workspaces.isDefault, true)));
    });
    service.core.admin.enforcement.invalidate();
  }

  async function count(sql: string): Promise<number> {
    return Number((await db().client.execute(sql)).rows[0]!.n);
  }
  /** What a refused send must not have changed: stored messages, queued outbound records, the relay. */
  async function footprint() {
    await relayed();
    return {
      messages: await count('select count(*) as n from messages'),
      outbound: await count('select count(*) as n from outbound_messages'),
      jobs: await count("select count(*) as n from jobs where kind like 'mail.%'"),
      relayed: sink.messages.length,
      usage: await count('select coalesce(sum(sent), 0) as n from grant_daily_usage'),
    };
  }
  async function evaluations() {
    return db()
      .orm.select()
      .from(tables.ruleEvaluations)
      .where(eq(tables.ruleEvaluations.grantId, sender))
      .orderBy(tables.ruleEvaluations.createdAt);
  }
  async function latestEvaluation() {
    const rows = await db().client.execute({
      sql: 'select id from rule_evaluations where grant_id = ? order by rowid desc limit 1',
      args: [sender],
    });
    const id = rows.rows[0]!.id as string;
    const [row] = await db().orm.select().from(tables.ruleEvaluations).where(eq(tables.ruleEvaluations.id, id));
    return row!;
  }
  const send = (body: Record<string, unknown>, query = '') =>
    request(service.url, 'POST', `/v3/grants/${sender}/messages/send${query}`, { key: service.apiKey, body });
  const statusOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 200;
    } catch (error) {
      if (error instanceof NylasApiError) return error.statusCode;
      throw error;
    }
  };

  it('a block rule refuses the send with 403 naming the rule; nothing is stored, queued or relayed; both sends are audited', async () => {
    await administer({
      rules: [
        {
          id: 'rule_block_blocked',
          name: 'No mail to blocked.example',
          conditions: [{ field: 'recipient.domain', operator: 'is', value: 'blocked.example' }],
        },
      ],
    });
    const before = await footprint();
    const refused = await send({
      to: [{ email: 'ok@fine.example' }],
      cc: [{ email: 'someone@Blocked.example' }],
      subject: 'nope',
      body: 'x',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe('forbidden');
    expect(refused.body.error.message).toContain('rule_block_blocked');
    expect(refused.body.error.message).toContain('No mail to blocked.example');
    expect(await footprint()).toEqual(before);
    const blocked = await latestEvaluation();
    expect(blocked).toMatchObject({
      stage: 'outbound_send',
      messageId: null,
      matchedRuleIds: ['rule_block_blocked'],
      appliedActions: { blocked: true },
    });
    expect(blocked.input).toMatchObject({
      from_address: SENDER,
      recipient_domains: ['fine.example', 'blocked.example'],
      outbound_type: 'compose',
    });

    // The SDK sees the same 403.
    expect(
      await statusOf(
        service.nylas.messages.send({
          identifier: sender,
          requestBody: { to: [{ email: 'a@blocked.example' }], subject: 's', body: 'b' },
        }),
      ),
    ).toBe(403);

    // Another recipient goes out, and its evaluation names the sent copy.
    const sent = await service.nylas.messages.send({
      identifier: sender,
      requestBody: { to: [{ email: 'ok@fine.example' }], subject: 'allowed', body: 'hello' },
    });
    await sink.waitFor(before.relayed + 1);
    const allowed = await latestEvaluation();
    expect(allowed).toMatchObject({
      stage: 'outbound_send',
      messageId: sent.data.id,
      matchedRuleIds: [],
      appliedActions: {},
    });
    expect(allowed.verdicts).toMatchObject({ phase: 'send', size: { ok: true, limit: null } });
  });

  it('outbound.type tells a reply from a new message', async () => {
    // A message from the friend, to answer.
    await service.nylas.messages.send({
      identifier: friend,
      requestBody: { to: [{ email: SENDER }], subject: 'Question', body: 'Can you reply?' },
    });
    const received = await eventually(
      async () =>
        (await service.nylas.messages.list({ identifier: sender, queryParams: { subject: 'Question' } })).data[0],
    );
    await administer({
      rules: [
        {
          id: 'rule_no_replies',
          name: 'Agents do not reply',
          conditions: [{ field: 'outbound.type', operator: 'is', value: 'reply' }],
        },
      ],
    });

    const reply = await send({ to: [{ email: FRIEND }], body: 'Answer', reply_to_message_id: received.id });
    expect(reply.status).toBe(403);
    expect(reply.body.error.message).toContain('rule_no_replies');
    expect((await latestEvaluation()).input.outbound_type).toBe('reply');

    // A reply saved as a draft and sent is a reply too.
    const draft = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: { to: [{ email: FRIEND }], body: 'Draft answer', replyToMessageId: received.id },
    });
    expect(await statusOf(service.nylas.drafts.send({ identifier: sender, draftId: draft.data.id }))).toBe(403);
    expect((await service.nylas.drafts.find({ identifier: sender, draftId: draft.data.id })).data.id).toBe(
      draft.data.id,
    );

    const compose = await send({ to: [{ email: FRIEND }], subject: 'New topic', body: 'Fresh' });
    expect(compose.status).toBe(200);
    expect((await latestEvaluation()).input.outbound_type).toBe('compose');

    // The opposite rule: only replies may go.
    await administer({
      rules: [
        {
          id: 'rule_only_replies',
          name: 'Replies only',
          conditions: [{ field: 'outbound.type', operator: 'is_not', value: 'reply' }],
        },
      ],
    });
    expect((await send({ to: [{ email: FRIEND }], subject: 'Another', body: 'x' })).status).toBe(403);
    expect((await send({ to: [{ email: FRIEND }], body: 'Answer', reply_to_message_id: received.id })).status).toBe(
      200,
    );
  });

  it('the daily quota: the (N+1)th send of the UTC day is a 429 with Retry-After until midnight; the next day sends again', async () => {
    await administer({ rules: [], limits: { limit_count_daily_email_sent: 2 } });
    for (const index of [1, 2])
      expect(
        (await send({ to: [{ email: `q${index}@fine.example` }], subject: `quota ${index}`, body: 'x' })).status,
      ).toBe(200);
    const before = await footprint();
    const third = await send({ to: [{ email: 'q3@fine.example' }], subject: 'quota 3', body: 'x' });
    expect(third.status).toBe(429);
    expect(third.body.error.type).toBe('rate_limit_error');
    // 22:00 UTC: two hours to the reset.
    expect(third.headers.get('retry-after')).toBe('7200');
    expect(third.body.error.message).toContain('2026-03-31T00:00:00.000Z');
    expect(third.body.error.message).toContain('limit_count_daily_email_sent');
    expect(await footprint()).toEqual(before);
    expect(await latestEvaluation()).toMatchObject({ messageId: null, appliedActions: { blocked: true } });
    expect((await latestEvaluation()).verdicts).toMatchObject({
      refusal: 'quota',
      quota: { sent_today: 2, limit: 2, ok: false },
    });

    // A draft sent counts against the same quota.
    const draft = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: { to: [{ email: 'q4@fine.example' }], subject: 'draft quota', body: 'x' },
    });
    expect(await statusOf(service.nylas.drafts.send({ identifier: sender, draftId: draft.data.id }))).toBe(429);

    clock.set('2026-03-31T00:00:01Z');
    expect((await send({ to: [{ email: 'q5@fine.example' }], subject: 'next day', body: 'x' })).status).toBe(200);
    expect((await latestEvaluation()).verdicts).toMatchObject({
      quota: { sent_today: 0, limit: 2, left_today: 2, ok: true },
    });
  });

  it('concurrent sends never pass the quota together', async () => {
    await administer({ rules: [], limits: { limit_count_daily_email_sent: 3 } });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        send({ to: [{ email: `c${index}@fine.example` }], subject: `concurrent ${index}`, body: 'x' }),
      ),
    );
    expect(results.filter((result) => result.status === 200)).toHaveLength(3);
    expect(results.filter((result) => result.status === 429)).toHaveLength(5);
  });

  it('the size limit refuses a composed message over limit_size_total_mime with 413 naming the limit', async () => {
    await administer({ rules: [], limits: { limit_size_total_mime: 4000 } });
    const before = await footprint();
    const big = await send({
      to: [{ email: 'big@fine.example' }],
      subject: 'big',
      body: 'x',
      attachments: [
        {
          filename: 'a.bin',
          content_type: 'application/octet-stream',
          content: Buffer.alloc(6000, 1).toString('base64'),
        },
      ],
    });
    expect(big.status).toBe(413);
    expect(big.body.error.message).toContain('4000 bytes');
    expect(big.body.error.message).toContain('limit_size_total_mime');
    expect(await footprint()).toEqual(before);
    expect((await latestEvaluation()).verdicts).toMatchObject({ refusal: 'size', size: { limit: 4000, ok: false } });
    expect((await send({ to: [{ email: 'small@fine.example' }], subject: 'small', body: 'x' })).status).toBe(200);
  });

  it('an evaluation that cannot complete fails closed with 503, and says so in the audit', async () => {
    await administer({
      rules: [
        {
          id: 'rule_broken',
          name: 'Broken',
          conditions: [{ field: 'recipient.domain', operator: 'is', value: 'x.example' }],
        },
      ],
    });
    // A rule row the loader cannot read (its conditions are not JSON).
    await db().client.execute("update rules set conditions = '{not json' where id = 'rule_broken'");
    service.core.admin.enforcement.invalidate();
    const before = await footprint();
    const response = await send({ to: [{ email: 'any@fine.example' }], subject: 'closed', body: 'x' });
    expect(response.status).toBe(503);
    expect(response.body.error.message).toContain('nothing was sent');
    expect(await footprint()).toEqual(before);
    expect(await latestEvaluation()).toMatchObject({
      messageId: null,
      appliedActions: { blocked_by_evaluation_error: true },
    });
    // The dry run cannot answer either.
    expect((await send({ to: [{ email: 'any@fine.example' }], body: 'x' }, '?dry_run=true')).status).toBe(503);
  });

  it('a scheduled send is checked when scheduled and again when it fires; a refusal then marks the schedule failed', async () => {
    await administer({
      rules: [
        {
          id: 'rule_sched',
          name: 'No mail to late.example',
          conditions: [{ field: 'recipient.domain', operator: 'is', value: 'late.example' }],
        },
      ],
    });
    const now = Math.floor(clock.now().getTime() / 1000);
    const refused = await send({
      to: [{ email: 'x@late.example' }],
      subject: 'later refused',
      body: 'x',
      send_at: now + 600,
    });
    expect(refused.status).toBe(403);
    expect((await latestEvaluation()).verdicts).toMatchObject({ phase: 'schedule', refusal: 'rule' });

    const scheduled = await send({
      to: [{ email: 'x@ontime.example' }],
      subject: 'later',
      body: 'x',
      send_at: now + 600,
    });
    expect(scheduled.status).toBe(202);
    const scheduleId = scheduled.body.schedule_id as string;
    expect((await latestEvaluation()).verdicts).toMatchObject({ phase: 'schedule' });
    // Meanwhile the domain is blocked too.
    await administer({
      rules: [
        {
          id: 'rule_sched_2',
          name: 'No mail to ontime.example',
          conditions: [{ field: 'recipient.domain', operator: 'is', value: 'ontime.example' }],
        },
      ],
    });
    const relayed = sink.messages.length;
    clock.advance(601_000);
    service.background.wake();
    const failed = await eventually(async () => {
      const found = await service.nylas.messages.findScheduledMessage({ identifier: sender, scheduleId });
      return found.data.status.code === 'failed' ? found.data : undefined;
    });
    expect(failed.status.description).toContain('rule_sched_2');
    expect(sink.messages.length).toBe(relayed);
    expect(await latestEvaluation()).toMatchObject({
      matchedRuleIds: ['rule_sched_2'],
      appliedActions: { blocked: true },
    });
  });

  it('dry run answers the verdicts with 200 and stores, queues and sends nothing', async () => {
    await administer({
      rules: [
        {
          id: 'rule_dry',
          name: 'No mail to blocked.example',
          conditions: [{ field: 'recipient.domain', operator: 'is', value: 'blocked.example' }],
        },
      ],
      limits: {
        limit_count_daily_email_sent: 5,
        limit_size_total_mime: 100_000,
        limit_attachment_allowed_types: ['image/*'],
      },
    });
    expect((await send({ to: [{ email: 'first@fine.example' }], subject: 'counted', body: 'x' })).status).toBe(200);
    const before = { ...(await footprint()), evaluations: (await evaluations()).length };
    const body = {
      to: [{ email: 'ok@fine.example' }, { email: 'no@blocked.example' }],
      cc: [{ email: `nobody@${DOMAIN}` }],
      subject: 'check me',
      body: 'x',
      attachments: [
        { filename: 'notes.txt', content_type: 'text/plain', content: Buffer.from('hello').toString('base64') },
      ],
    };
    const dry = await send(body, '?dry_run=true');
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({
      dry_run: true,
      blocked: true,
      matched_rule_ids: ['rule_dry'],
      verdicts: {
        size: { limit: 100_000, ok: true },
        attachments: { count: 1, total_bytes: 5, outside_limits: [{ filename: 'notes.txt' }] },
        quota: { sent_today: 1, limit: 5, left_today: 4, ok: true },
      },
    });
    expect(dry.body.data.reason).toContain('rule_dry');
    const refused = Object.fromEntries(
      (dry.body.data.refused_recipients as { email: string; reason: string }[]).map((entry) => [
        entry.email,
        entry.reason,
      ]),
    );
    expect(Object.keys(refused).sort()).toEqual(['no@blocked.example', `nobody@${DOMAIN}`]);
    expect(refused['no@blocked.example']).toContain('rule_dry');
    expect(refused[`nobody@${DOMAIN}`]).toContain('5.1.1');

    // In the body as well, and allowed when nothing refuses it.
    const clean = await send({ to: [{ email: 'ok@fine.example' }], subject: 'fine', body: 'x', dry_run: true });
    expect(clean.status).toBe(200);
    expect(clean.body.data).toMatchObject({
      dry_run: true,
      blocked: false,
      matched_rule_ids: [],
      refused_recipients: [],
    });
    expect(clean.body.data.reason).toBeUndefined();

    // Nothing stored, queued, relayed, counted or audited.
    expect({ ...(await footprint()), evaluations: (await evaluations()).length }).toEqual(before);
  });

  it('a grant under no rules and no policy is not evaluated: no audit row, no count', async () => {
    const before = await footprint();
    const rows = (await evaluations()).length;
    expect((await send({ to: [{ email: 'plain@fine.example' }], subject: 'plain', body: 'x' })).status).toBe(200);
    expect((await evaluations()).length).toBe(rows);
    expect((await footprint()).usage).toBe(before.usage);
  });
});
