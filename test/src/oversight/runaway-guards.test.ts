/**
 * The runaway and loop guards (issue 37, item 4; src/oversight/runaway-guards.ts): the pure loop finder over tables of
 * traffic, then each guard against what real sends and deliveries wrote in the running service (two Agent Accounts
 * trading mail through /v3 with an agent's key and a person's, an Exchange out-of-office received over SMTP), checked
 * with attempts as the send gate makes them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import {
  episodeStart,
  findLoop,
  OVERSIGHT_DEFAULTS,
  runawayGuards,
  type ResolvedOversight,
  type SendAttempt,
  type SendGuard,
} from '../../../src/oversight/index.js';
import { tables, type GrantRow } from '../../../storage/index.js';
import { fixedClock } from '../../helpers/clock.js';
import { request } from '../../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../../helpers/mail.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const A = 'alpha@loops.agentpost.localhost';
const B = 'beta@loops.agentpost.localhost';

describe('findLoop', () => {
  const bound = { limit: 4, windowSeconds: 600 };
  /** `count` messages alternating between a and b, `gap` seconds apart from `start`. */
  const trade = (count: number, gap: number, start = 1000) =>
    Array.from({ length: count }, (_, index) => ({
      date: start + index * gap,
      from: [index % 2 === 0 ? 'a@x' : 'b@x'],
      to: [index % 2 === 0 ? 'b@x' : 'a@x'],
    }));

  it('finds more than the limit traded both ways within the window, and says when it ends', () => {
    expect(findLoop(trade(4, 60), 'a@x', bound, 1300)).toBeUndefined();
    // Five messages at 1000, 1060, …, 1240: the fifth took the pair over; the window has room again once the
    // oldest (1000) left it, at 1600.
    expect(findLoop(trade(5, 60), 'A@x', bound, 1300)).toEqual({
      counterpart: 'b@x',
      messages: 5,
      since: 1240,
      until: 1600,
    });
    expect(findLoop(trade(7, 60), 'a@x', bound, 1400)).toMatchObject({ messages: 7, since: 1240, until: 1720 });
    // Spread over more than the window: never more than four at once.
    expect(findLoop(trade(12, 160), 'a@x', bound, 3000)).toBeUndefined();
    // Past its end.
    expect(findLoop(trade(5, 60), 'a@x', bound, 1600)).toBeUndefined();
  });

  it('needs both directions, and names the busiest of several mailboxes', () => {
    const oneWay = Array.from({ length: 9 }, (_, index) => ({ date: 1000 + index, from: ['a@x'], to: ['b@x'] }));
    expect(findLoop(oneWay, 'a@x', bound, 1100)).toBeUndefined();
    const withC = [
      ...trade(5, 10),
      ...Array.from({ length: 6 }, (_, index) => ({
        date: 1001 + index * 10,
        from: [index % 2 === 0 ? 'a@x' : 'c@x'],
        to: [index % 2 === 0 ? 'c@x' : 'a@x'],
      })),
    ].sort((x, y) => x.date - y.date);
    expect(findLoop(withC, 'a@x', bound, 1100)?.counterpart).toBe('c@x');
  });

  it('dates an episode from the message that took the pair over, across a window that slid', () => {
    // Steady traffic every 100 s with a window of 600 s: six in the window from the sixth message on, all along.
    const dates = Array.from({ length: 30 }, (_, index) => 1000 + index * 100);
    expect(episodeStart(dates, bound, 3900)).toBe(1400);
    // A pause longer than the window ends the episode; the next one starts afresh.
    const twoBursts = [1000, 1010, 1020, 1030, 1040, 5000, 5010, 5020, 5030, 5040];
    expect(episodeStart(twoBursts, bound, 1050)).toBe(1040);
    expect(episodeStart(twoBursts, bound, 2000)).toBeUndefined();
    expect(episodeStart(twoBursts, bound, 5050)).toBe(5040);
    // A message that leaves as another arrives is no gap: 1000 leaves at 1600, when 1600 enters.
    expect(episodeStart([1000, 1100, 1200, 1300, 1400, 1600], bound, 1600)).toBe(1400);
    expect(episodeStart([1000, 1100, 1200, 1300, 1400, 1600], { ...bound, limit: 5 }, 1600)).toBeUndefined();
  });
});

describe('the runaway guards, on what real sends wrote', () => {
  let service: TestService;
  const clock = fixedClock('2026-11-29T12:00:00Z');
  let grantA: GrantRow;
  let grantB: GrantRow;
  let agentKey: string;
  let guards: SendGuard[];

  const oversight = (overrides: Partial<ResolvedOversight> = {}): ResolvedOversight => ({
    mode: 'autonomous',
    modeFrom: 'default',
    untrustedReadGate: 'off',
    untrustedReadWindowMs: 3_600_000,
    injectionThreshold: 0.7,
    allowedRecipients: [],
    reviewers: [],
    agentHeaders: true,
    threadAgentSendsPerHour: OVERSIGHT_DEFAULTS.threadAgentSendsPerHour,
    loopMessages: OVERSIGHT_DEFAULTS.loopMessages,
    loopMinutes: OVERSIGHT_DEFAULTS.loopMinutes,
    sendsPerHour: null,
    sendsPerDay: null,
    newRecipientsPerDay: null,
    sendRatePerMinute: null,
    burstQueueMax: 1000,
    policy: {},
    ...overrides,
  });
  const attempt = (fields: Partial<SendAttempt> & Pick<SendAttempt, 'grant'>): SendAttempt => ({
    principal: { applicationId: fields.grant.applicationId, via: 'api_key' },
    context: { face: 'ai-sdk' },
    oversight: oversight(),
    recipients: [],
    replyToMessageId: undefined,
    threadId: undefined,
    agent: true,
    kind: 'send',
    intent: {},
    at: clock.now().getTime(),
    ...fields,
  });
  /** Every guard's verdict, by name. */
  const verdicts = async (of: SendAttempt) =>
    Object.fromEntries(await Promise.all(guards.map(async (guard) => [guard.name, await guard.check(of)] as const)));

  const grantRow = async (id: string) =>
    (await service.core.deps.db.orm.select().from(tables.grants).where(eq(tables.grants.id, id)))[0]!;
  /** Sends from `grant` with `key`; answers the sent message. */
  async function send(grant: GrantRow, key: string, body: Record<string, unknown>) {
    const sent = await request(service.url, 'POST', `/v3/grants/${grant.id}/messages/send`, { key, body });
    expect(sent.status, sent.text).toBe(200);
    return sent.body.data as { id: string; thread_id: string; subject: string };
  }
  /** The copy `grant` received of a message whose text starts with `text`, once delivered. */
  async function received(grant: GrantRow, text: string, folder = 'inbox') {
    return eventually(async () => {
      const listed = await service.nylas.messages.list({ identifier: grant.id, queryParams: { limit: 50 } });
      return listed.data.find(
        (message) => message.folders.includes(folder) && (message.snippet ?? '').startsWith(text),
      );
    }, 15_000);
  }

  beforeAll(async () => {
    service = await startTestService({ deps: { clock }, env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    // The workspace of the domain files automated mail away from the inbox (an inbound rule on message.automated).
    const rule = await request(service.url, 'POST', '/v3/rules', {
      key: service.apiKey,
      body: {
        name: 'Automated mail aside',
        match: { conditions: [{ field: 'message.automated', operator: 'is', value: 'true' }] },
        actions: [{ type: 'assign_to_folder', value: 'Automated' }],
      },
    });
    expect(rule.status, rule.text).toBe(201);
    const workspace = await request(service.url, 'POST', '/v3/workspaces', {
      key: service.apiKey,
      body: { name: 'Loops', domain: 'loops.agentpost.localhost', rule_ids: [(rule.body.data as { id: string }).id] },
    });
    expect(workspace.status, workspace.text).toBe(200);
    grantA = await grantRow(await createMailbox(service, A));
    grantB = await grantRow(await createMailbox(service, B));
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'agent', agent: true },
    });
    expect(made.status, made.text).toBe(201);
    agentKey = (made.body.data as { key: string }).key;
    guards = runawayGuards(service.core.deps.db);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  it('runs in this order: automated_reply, loop, thread_budget', () => {
    expect(guards.map((guard) => guard.name)).toEqual(['automated_reply', 'loop', 'thread_budget']);
  });

  it("refuses an agent's reply to an Exchange out-of-office, unless it says it means to; a person's reply goes", async () => {
    const oof = readFileSync(join(import.meta.dirname, '../../fixtures/automated/exchange-oof.eml'), 'latin1')
      .replaceAll('agent@agents.example.com', A)
      .replace('Automatic reply: Quarterly numbers', 'Automatic reply: guard test');
    expect((await sendRaw(service.smtpPort, 'max.mustermann@contoso.com', [A], oof)).code).toBe(250);
    const folders = await service.nylas.folders.list({ identifier: grantA.id });
    const aside = folders.data.find((folder) => folder.name === 'Automated')!.id;
    // Marked at ingest, filed by the rule, and shown on the message.
    const message = await received(grantA, 'I am out of the office', aside);
    const got = await request(service.url, 'GET', `/v3/grants/${grantA.id}/messages/${message.id}`, {
      key: service.apiKey,
    });
    expect(got.body.data.automated).toEqual({
      kind: 'auto_reply',
      reasons: ['X-Auto-Response-Suppress: All', 'X-MS-Exchange-Inbox-Rules-Loop (an Exchange inbox rule sent it)'],
    });

    const reply = attempt({ grant: grantA, replyToMessageId: message.id, threadId: message.threadId });
    const refused = (await verdicts(reply)).automated_reply;
    expect(refused?.outcome).toBe('refuse');
    const error = (refused as { error: AppError }).error;
    expect(error).toMatchObject({ code: 'forbidden', type: 'automated_reply' });
    expect(error.message).toMatch(/written by a machine \(auto reply: X-Auto-Response-Suppress: All/);
    expect(error.message).toMatch(/allow_automated_reply: true/);
    expect((await verdicts({ ...reply, intent: { allowAutomatedReply: true } })).automated_reply).toBeUndefined();
    expect((await verdicts({ ...reply, agent: false })).automated_reply).toBeUndefined();
  });

  it("marks mail synced from a connected account too, and leaves a person's mail in the inbox unmarked", async () => {
    const raw = readFileSync(join(import.meta.dirname, '../../fixtures/automated/gmail-vacation.eml'));
    const delivery = await service.core.mail.inbound.storeFetched({
      raw,
      applicationId: grantA.applicationId,
      grantId: grantA.id,
      grant: { email: A, provider: 'nylas' },
      folders: ['inbox'],
      unread: true,
      starred: false,
      date: Math.floor(clock.now().getTime() / 1000),
      links: () => [],
    });
    const synced = await service.nylas.messages.find({ identifier: grantA.id, messageId: delivery.messageId });
    expect((synced.data as unknown as { automated?: { kind: string } }).automated?.kind).toBe('auto_reply');
    const person = readFileSync(join(import.meta.dirname, '../../fixtures/automated/person-reply.eml'), 'latin1');
    expect((await sendRaw(service.smtpPort, 'jane.doe@gmail.com', [A], person)).code).toBe(250);
    const kept = await received(grantA, 'Looks good, thanks!');
    const got = await request(service.url, 'GET', `/v3/grants/${grantA.id}/messages/${kept.id}`, {
      key: service.apiKey,
    });
    expect(got.body.data).not.toHaveProperty('automated');
  });

  it("counts only agents' sends in a thread against its hourly budget: 429 past it, approval when gated", async () => {
    const first = await send(grantA, agentKey, { to: [{ email: B }], subject: 'Budget', body: 'one' });
    // A person's sends in the thread do not count.
    for (let index = 0; index < 3; index++)
      await send(grantA, service.apiKey, { to: [{ email: B }], body: 'by hand', reply_to_message_id: first.id });
    const of = attempt({ grant: grantA, threadId: first.thread_id });
    for (let index = 2; index <= 5; index++) {
      expect((await verdicts(of)).thread_budget).toBeUndefined();
      await send(grantA, agentKey, { to: [{ email: B }], body: `agent ${index}`, reply_to_message_id: first.id });
    }
    const past = (await verdicts(of)).thread_budget as { outcome: 'refuse'; error: AppError };
    expect(past.outcome).toBe('refuse');
    expect(past.error).toMatchObject({ code: 'rate_limited', type: 'thread_budget_exceeded' });
    expect(past.error.details).toMatchObject({ retryAfterSeconds: 3600, sent: 5, limit: 5 });
    expect(past.error.message).toMatch(/budget is 5 an hour/);
    expect((await verdicts({ ...of, agent: false })).thread_budget).toBeUndefined();
    expect((await verdicts({ ...of, oversight: oversight({ mode: 'gated_send' }) })).thread_budget).toMatchObject({
      outcome: 'approve',
      request: { check: 'thread_budget' },
    });
    expect(
      (await verdicts({ ...of, oversight: oversight({ threadAgentSendsPerHour: 6 }) })).thread_budget,
    ).toBeUndefined();
    expect(
      (await verdicts({ ...of, oversight: oversight({ threadAgentSendsPerHour: null }) })).thread_budget,
    ).toBeUndefined();
    // An hour later the oldest have aged out.
    expect((await verdicts({ ...of, at: of.at + 3_600_000 })).thread_budget).toBeUndefined();
    expect(
      ((await verdicts({ ...of, at: of.at + 3_000_000 })).thread_budget as { error: AppError }).error.details,
    ).toMatchObject({ retryAfterSeconds: 600 });
  });

  it('pauses agent sends in a thread two mailboxes trade in a loop, whatever sent the messages, and reports it once', async () => {
    clock.advance(7_200_000);
    // A and B answer each other by hand (a person's key, /v3): six messages in A's thread.
    let last = await send(grantA, service.apiKey, { to: [{ email: B }], subject: 'Ping pong', body: 'ping 1' });
    const threadA = last.thread_id;
    for (let round = 1; round <= 5; round++) {
      const [from, to] = round % 2 === 1 ? [grantB, grantA] : [grantA, grantB];
      const copy = await received(from, round === 1 ? 'ping 1' : `pong ${round - 1}`);
      clock.advance(30_000);
      last = await send(from, service.apiKey, {
        to: [{ email: to.email }],
        body: `pong ${round}`,
        reply_to_message_id: copy.id,
      });
    }
    await received(grantA, 'pong 5');
    const bound = oversight({ loopMessages: 5, loopMinutes: 10, threadAgentSendsPerHour: null });
    const of = attempt({ grant: grantA, threadId: threadA, oversight: bound });
    const paused = (await verdicts(of)).loop as { outcome: 'refuse'; error: AppError };
    expect(paused.outcome).toBe('refuse');
    expect(paused.error).toMatchObject({ code: 'rate_limited', type: 'loop_detected' });
    expect(paused.error.message).toContain(`${A} and ${B} traded 6 messages in the last 10 minutes (more than 5)`);
    // The window has room again ten minutes after the first of them (150 s ago).
    expect(paused.error.details).toMatchObject({ retryAfterSeconds: 450, counterpart: B, messages: 6 });
    expect((await verdicts({ ...of, oversight: { ...bound, mode: 'gated_all' } })).loop).toMatchObject({
      outcome: 'approve',
      request: { check: 'loop' },
    });
    expect((await verdicts({ ...of, agent: false })).loop).toBeUndefined();
    expect((await verdicts({ ...of, oversight: { ...bound, loopMessages: 6 } })).loop).toBeUndefined();
    // One event for the episode, however many sends it paused.
    const events = await eventually(async () => {
      const rows = await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.type, 'thread.loop_detected'), eq(tables.outboxEvents.objectId, threadA)));
      return rows.length > 0 ? rows : undefined;
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ thread_id: threadA, grant_id: grantA.id, counterpart: B, messages: 6 });
    // Past the window, the pause is over.
    expect((await verdicts({ ...of, at: of.at + 450_000 })).loop).toBeUndefined();
  }, 60_000);
});
