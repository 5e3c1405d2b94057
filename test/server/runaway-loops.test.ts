/**
 * Runaway and loop guards end to end (issue 37, item 4): two Agent Accounts on this service, each run by the AI SDK
 * tools with a scripted model (`ai/test`) that answers every new message in its inbox, talk to each other until the
 * loop guard pauses them (within the configured bound, with `thread.loop_detected` once); an Exchange out-of-office
 * that reaches an agent is not answered; and the per-thread budget of an agent's key through the nylas SDK and raw /v3.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateText, stepCountIs, type Tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/index.js';
import { tables } from '../../storage/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'loops.agentpost.localhost';
const ALPHA = `alpha@${DOMAIN}`;
const BETA = `beta@${DOMAIN}`;
const GAMMA = 'gamma@budget.agentpost.localhost';
/** The loop bound of the test's policy: more than 6 messages within 10 minutes. */
const LOOP_MESSAGES = 6;

type Json = Record<string, unknown>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** What one turn of an auto-responding agent did: the message it answered, and the send's result or refusal. */
interface Turn {
  answered?: string;
  sent?: Json;
  error?: string;
}

/**
 * An agent that answers every new message of its inbox (a scripted model over the AI SDK tools): it lists its inbox,
 * replies to the newest message it has not answered yet (saying it means to answer automated mail when told to),
 * then stops.
 */
function autoResponder(tools: Record<string, Tool>, options: { allowAutomatedReply: boolean }) {
  const answered = new Set<string>();
  let replies = 0;
  return async function turn(): Promise<Turn> {
    const outcome: Turn = {};
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        const last = prompt.at(-1)!;
        const stop = {
          content: [{ type: 'text' as const, text: 'Done.' }],
          finishReason: { unified: 'stop' as const, raw: 'stop' },
          usage,
          warnings: [],
        };
        const call = (toolName: string, input: Json) => ({
          content: [
            { type: 'tool-call' as const, toolCallId: `call-${toolName}`, toolName, input: JSON.stringify(input) },
          ],
          finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
          usage,
          warnings: [],
        });
        if (last.role !== 'tool') return call('list_messages', { in: ['inbox'], limit: 10 });
        const result = last.content.find((part) => part.type === 'tool-result');
        if (!result || result.toolName !== 'list_messages') return stop;
        const listed = (result.output as unknown as { value: { data: { id: string; from?: string }[] } }).value.data;
        const next = listed.find((message) => !answered.has(message.id));
        if (!next) return stop;
        answered.add(next.id);
        outcome.answered = next.id;
        replies += 1;
        // The sender, as the list item names it (fenced as text from outside).
        const sender = /[\w.+-]+@[\w.-]+\w/.exec(String(next.from))?.[0];
        return call('send_message', {
          to: [{ email: sender }],
          reply_to_message_id: next.id,
          body: `Thanks, noted (auto-reply ${replies}).`,
          ...(options.allowAutomatedReply ? { allow_automated_reply: true } : {}),
        });
      },
    });
    const result = await generateText({ model, tools, prompt: 'Answer every new message.', stopWhen: stepCountIs(4) });
    for (const part of result.steps.flatMap((step) => step.content)) {
      if (part.type === 'tool-result' && part.toolName === 'send_message') outcome.sent = part.output as Json;
      if (part.type === 'tool-error' && part.toolName === 'send_message') outcome.error = String(part.error);
    }
    return outcome;
  };
}

describe('runaway and loop guards, end to end', () => {
  let service: TestService;
  let alpha: string;
  let beta: string;
  let gamma: string;
  let principal: Principal;
  let hook: WebhookReceiver;

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    // The domain's policy: a loop is more than 6 messages within 10 minutes; the thread budget is out of the way.
    const policy = await request(service.url, 'POST', '/v3/policies', {
      key: service.apiKey,
      body: {
        name: 'Loops',
        oversight: { loop_messages: LOOP_MESSAGES, loop_minutes: 10, thread_agent_sends_per_hour: 100 },
      },
    });
    expect(policy.status, policy.text).toBe(200);
    const workspace = await request(service.url, 'POST', '/v3/workspaces', {
      key: service.apiKey,
      body: { name: 'Loops', domain: DOMAIN, policy_id: (policy.body.data as { id: string }).id },
    });
    expect(workspace.status, workspace.text).toBe(200);
    hook = await startReceiver();
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: ['thread.loop_detected' as never], webhookUrl: hook.url },
    });
    alpha = await createMailbox(service, ALPHA);
    beta = await createMailbox(service, BETA);
    // Under the default settings (5 agent sends a thread an hour).
    gamma = await createMailbox(service, GAMMA);
    await createMailbox(service, 'delta@budget.agentpost.localhost');
  }, 60_000);
  afterAll(async () => {
    await hook?.close();
    await service?.close();
  });

  /** Messages of a grant's inbox whose text starts with `text`, once there. */
  const inboxHas = (grantId: string, text: string) =>
    eventually(async () => {
      const listed = await service.nylas.messages.list({
        identifier: grantId,
        queryParams: { in: ['inbox'], limit: 50 },
      });
      return listed.data.find((message) => (message.snippet ?? '').startsWith(text));
    }, 15_000);

  it('pauses two agents answering each other within the loop bound, and reports the loop once', async () => {
    const alphaTools = createAgentpostTools({ core: service.core, principal, grantId: alpha });
    const betaTools = createAgentpostTools({ core: service.core, principal, grantId: beta });
    const first = (await alphaTools.send_message!.execute!(
      { to: [{ email: BETA }], subject: 'Shall we meet?', body: 'Hello from alpha.' },
      { toolCallId: 'start', messages: [] },
    )) as { data: { thread_id: string } };
    const thread = first.data.thread_id;
    await inboxHas(beta, 'Hello from alpha.');
    const agents = [
      { grantId: beta, turn: autoResponder(betaTools, { allowAutomatedReply: true }) },
      { grantId: alpha, turn: autoResponder(alphaTools, { allowAutomatedReply: true }) },
    ];
    let refused: string | undefined;
    let turns = 0;
    for (; turns < 40 && !refused; turns++) {
      const agent = agents[turns % 2]!;
      const other = agents[(turns + 1) % 2]!;
      const outcome = await agent.turn();
      expect(outcome.answered, `turn ${turns}`).toBeDefined();
      if (outcome.error) refused = outcome.error;
      else await inboxHas(other.grantId, `Thanks, noted (auto-reply ${Math.floor(turns / 2) + 1})`);
    }
    // Beta's seventh reply is refused: the thread holds the first message and six replies, one over the bound of 6.
    expect(turns).toBe(LOOP_MESSAGES + 1);
    expect(refused).toContain(
      `This thread is in a mail loop: ${BETA} and ${ALPHA} traded ${LOOP_MESSAGES + 1} messages in the last 10 minutes (more than ${LOOP_MESSAGES}), so agent sends in it are paused. They may resume in 10 minutes`,
    );
    const held = await service.nylas.messages.list({ identifier: alpha, queryParams: { threadId: thread, limit: 50 } });
    expect(held.data.length).toBe(LOOP_MESSAGES + 1);
    // Beta's agent run again is still paused; the loop is reported once, to the webhook.
    const again = await autoResponder(betaTools, { allowAutomatedReply: true })();
    expect(again.error).toMatch(/mail loop/);
    const [delivery] = await hook.waitForDeliveries(1);
    const notification = delivery!.json as { type: string; data: { object: Json } };
    expect(notification.type).toBe('thread.loop_detected');
    expect(notification.data.object).toMatchObject({
      object: 'thread_loop',
      grant_id: beta,
      counterpart: ALPHA,
      messages: LOOP_MESSAGES + 1,
      window_minutes: 10,
    });
    const betaThread = notification.data.object.thread_id as string;
    const betaHeld = await service.nylas.messages.list({ identifier: beta, queryParams: { threadId: betaThread } });
    expect(betaHeld.data.length).toBe(LOOP_MESSAGES + 1);
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'thread.loop_detected'));
    expect(events).toHaveLength(1);
  }, 120_000);

  it('in a gated mode the loop asks a person instead: the send waits for approval, naming the loop', async () => {
    const epsilon = await createMailbox(service, `epsilon@${DOMAIN}`);
    const zeta = await createMailbox(service, `zeta@${DOMAIN}`);
    const mode = await request(service.url, 'PATCH', `/v3/grants/${zeta}`, {
      key: service.apiKey,
      body: { oversight_mode: 'gated_send' },
    });
    expect(mode.status, mode.text).toBe(200);
    const epsilonTools = createAgentpostTools({ core: service.core, principal, grantId: epsilon });
    const zetaTools = createAgentpostTools({ core: service.core, principal, grantId: zeta });
    await epsilonTools.send_message!.execute!(
      { to: [{ email: `zeta@${DOMAIN}` }], subject: 'Gated loop', body: 'Hello from epsilon.' },
      { toolCallId: 'gated', messages: [] },
    );
    await inboxHas(zeta, 'Hello from epsilon.');
    const agents = [
      { grantId: zeta, turn: autoResponder(zetaTools, { allowAutomatedReply: true }) },
      { grantId: epsilon, turn: autoResponder(epsilonTools, { allowAutomatedReply: true }) },
    ];
    let held: Json | undefined;
    let turns = 0;
    for (; turns < 40 && !held; turns++) {
      const agent = agents[turns % 2]!;
      const other = agents[(turns + 1) % 2]!;
      const outcome = await agent.turn();
      expect(outcome.error, `turn ${turns}`).toBeUndefined();
      // Zeta's replies within the thread go out under gated_send until the loop; then its send waits.
      if (outcome.sent && 'approval_id' in outcome.sent) held = outcome.sent;
      else await inboxHas(other.grantId, `Thanks, noted (auto-reply ${Math.floor(turns / 2) + 1})`);
    }
    // The same bound as in autonomous mode: zeta's seventh message would be one over it.
    expect(turns).toBe(LOOP_MESSAGES + 1);
    expect(held).toMatchObject({ status: 'pending' });
    const approval = await request(service.url, 'GET', `/v3/approvals/${held!.approval_id as string}`, {
      key: service.apiKey,
    });
    expect(approval.status, approval.text).toBe(200);
    expect(approval.body.data.checks).toEqual([
      expect.objectContaining({ check: 'loop', reason: expect.stringMatching(/mail loop.*a person decides this one/) }),
    ]);
    // Nothing left: epsilon's inbox has no seventh message until a person approves it.
    const before = await service.nylas.messages.list({
      identifier: epsilon,
      queryParams: { in: ['inbox'], limit: 50 },
    });
    const approved = await request(service.url, 'POST', `/v3/approvals/${held!.approval_id as string}/approve`, {
      key: service.apiKey,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.data.status).toBe('sent');
    await eventually(async () => {
      const after = await service.nylas.messages.list({
        identifier: epsilon,
        queryParams: { in: ['inbox'], limit: 50 },
      });
      return after.data.length === before.data.length + 1 ? after : undefined;
    });
  }, 120_000);

  it('in a gated mode the thread budget asks a person past its bound instead of answering 429', async () => {
    const eta = await createMailbox(service, 'eta@budget.agentpost.localhost');
    const mode = await request(service.url, 'PATCH', `/v3/grants/${eta}`, {
      key: service.apiKey,
      body: { oversight_mode: 'gated_send' },
    });
    expect(mode.status, mode.text).toBe(200);
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'gated agent', agent: true },
    });
    const agentKey = (made.body.data as { key: string }).key;
    const send = (body: Json) =>
      request(service.url, 'POST', `/v3/grants/${eta}/messages/send`, {
        key: agentKey,
        body: { to: [{ email: 'delta@budget.agentpost.localhost' }], ...body },
      });
    // The first send starts a thread with someone new: gated_send holds it; a person approves it.
    const opening = await send({ subject: 'Gated budget', body: 'one' });
    expect(opening.status, opening.text).toBe(202);
    const opened = await request(service.url, 'POST', `/v3/approvals/${opening.body.approval_id as string}/approve`, {
      key: service.apiKey,
      body: {},
    });
    expect(opened.body.data.status, opened.text).toBe('sent');
    const firstId = opened.body.data.sent_message_id as string;
    expect(firstId).toBeTruthy();
    // Replies within the thread go, up to the budget (5 agent sends an hour, the held first one included).
    for (let index = 2; index <= 5; index++) {
      const reply = await send({ body: `send ${index}`, reply_to_message_id: firstId });
      expect(reply.status, `send ${index}: ${reply.text}`).toBe(200);
    }
    const sixth = await send({ body: 'six', reply_to_message_id: firstId });
    expect(sixth.status, sixth.text).toBe(202);
    const approval = await request(service.url, 'GET', `/v3/approvals/${sixth.body.approval_id as string}`, {
      key: service.apiKey,
    });
    expect(approval.body.data.checks).toEqual([expect.objectContaining({ check: 'thread_budget' })]);
  });

  it("stops at once when agents' own headers are honoured: a reply to an agent's send is refused without allow_automated_reply", async () => {
    const alphaTools = createAgentpostTools({ core: service.core, principal, grantId: alpha });
    await alphaTools.send_message!.execute!(
      { to: [{ email: BETA }], subject: 'Status?', body: 'Status please, from alpha.' },
      { toolCallId: 'status', messages: [] },
    );
    const received = await inboxHas(beta, 'Status please, from alpha.');
    const got = await request(service.url, 'GET', `/v3/grants/${beta}/messages/${received.id}`, {
      key: service.apiKey,
    });
    expect(got.body.data.automated).toMatchObject({ kind: 'auto_reply' });
    expect(got.body.data.automated.reasons).toEqual(
      expect.arrayContaining(['Auto-Submitted: auto-generated', 'X-Auto-Response-Suppress: All']),
    );
    const betaTools = createAgentpostTools({ core: service.core, principal, grantId: beta });
    const outcome = await autoResponder(betaTools, { allowAutomatedReply: false })();
    expect(outcome.answered).toBe(received.id);
    expect(outcome.error).toMatch(/was written by a machine .*allow_automated_reply: true/s);
  });

  it('does not answer an out-of-office', async () => {
    const oof = readFileSync(join(import.meta.dirname, '../fixtures/automated/exchange-oof.eml'), 'latin1')
      .replaceAll('agent@agents.example.com', BETA)
      .replace('Quarterly numbers', 'Your order');
    expect((await sendRaw(service.smtpPort, 'max.mustermann@contoso.com', [BETA], oof)).code).toBe(250);
    await inboxHas(beta, 'I am out of the office');
    const tools = createAgentpostTools({ core: service.core, principal, grantId: beta });
    const outcome = await autoResponder(tools, { allowAutomatedReply: false })();
    expect(outcome.sent).toBeUndefined();
    expect(outcome.error).toMatch(/written by a machine \(auto reply/);
    expect(outcome.error).toMatch(/allow_automated_reply: true/);
    const sent = await service.nylas.messages.list({ identifier: beta, queryParams: { in: ['sent'], limit: 50 } });
    expect(sent.data.some((message) => message.to.some((to) => to.email === 'max.mustermann@contoso.com'))).toBe(false);
  });

  it('holds an agent key to the thread budget through the nylas SDK and raw /v3', async () => {
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'agent', agent: true },
    });
    expect(made.status, made.text).toBe(201);
    const agentKey = (made.body.data as { key: string }).key;
    const nylas = service.client(agentKey);
    const first = await nylas.messages.send({
      identifier: gamma,
      requestBody: { to: [{ email: 'delta@budget.agentpost.localhost' }], subject: 'Budget', body: 'one' },
    });
    for (let index = 2; index <= 5; index++)
      await nylas.messages.send({
        identifier: gamma,
        requestBody: {
          to: [{ email: 'delta@budget.agentpost.localhost' }],
          body: `send ${index}`,
          replyToMessageId: first.data.id,
        },
      });
    // The sixth agent send in the thread within the hour: 429 with Retry-After, over the SDK and raw /v3 alike.
    const error = await sdkError(
      nylas.messages.send({
        identifier: gamma,
        requestBody: {
          to: [{ email: 'delta@budget.agentpost.localhost' }],
          body: 'six',
          replyToMessageId: first.data.id,
        },
      }),
    );
    expect(error).toMatchObject({ statusCode: 429, type: 'thread_budget_exceeded' });
    const raw = await request(service.url, 'POST', `/v3/grants/${gamma}/messages/send`, {
      key: agentKey,
      headers: { 'x-agentpost-face': 'http' },
      body: { to: [{ email: 'delta@budget.agentpost.localhost' }], body: 'six', reply_to_message_id: first.data.id },
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(raw.body.error.message).toMatch(/budget is 5 an hour/);
    // A person's key is not held to it.
    const person = await request(service.url, 'POST', `/v3/grants/${gamma}/messages/send`, {
      key: service.apiKey,
      body: {
        to: [{ email: 'delta@budget.agentpost.localhost' }],
        body: 'by hand',
        reply_to_message_id: first.data.id,
      },
    });
    expect(person.status, person.text).toBe(200);
  });
});
