/**
 * Thread claims (issue 40, item 4): two AI SDK agents (scripted models, `ai/test`) on one mailbox both try to answer
 * a new message: only the claim's holder replies, the other is told who holds it until when (409); the claim through
 * raw /v3 and the nylas SDK (reads show it, never its token; sends and drafts without the token are refused; the
 * holder's reply, a release or the lease's end frees it, the last by moving the injected clock).
 */
import { generateText, stepCountIs, type Tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'claims.agentpost.localhost';
const DESK = `desk@${DOMAIN}`;
const CUSTOMER = `customer@${DOMAIN}`;

type Json = Record<string, unknown>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const stop = {
  content: [{ type: 'text' as const, text: 'Done.' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
};
const call = (toolName: string, input: Json) => ({
  content: [{ type: 'tool-call' as const, toolCallId: `call-${toolName}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});

/** What one agent's turn did. */
interface Turn {
  claimError?: string;
  sent?: Json;
  sendError?: string;
}

/**
 * An agent that answers the newest message of the inbox: it lists the inbox, claims the message's thread, and replies
 * (with the claim's token when it got one; without, when its claim was refused: an agent that ignores the refusal).
 * `between` runs after the claim and before the reply.
 */
async function answerNewest(tools: Record<string, Tool>, between?: () => Promise<unknown>): Promise<Turn> {
  const turn: Turn = {};
  let message: { id: string; thread_id: string; from: string } | undefined;
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1)!;
      if (last.role !== 'tool') return call('list_messages', { in: ['inbox'], limit: 1 });
      const result = last.content.find((part) => part.type === 'tool-result');
      if (!result) return stop;
      const output = result.output as { type: string; value: unknown };
      if (result.toolName === 'list_messages') {
        message = (output.value as { data: { id: string; thread_id: string; from: string }[] }).data[0];
        return message ? call('claim_thread', { thread_id: message.thread_id, ttl_seconds: 120 }) : stop;
      }
      if (result.toolName === 'claim_thread') {
        await between?.();
        const token = /clm_[\w-]+/.exec(JSON.stringify(output.value))?.[0];
        return call('send_message', {
          to: [{ email: CUSTOMER }],
          reply_to_message_id: message!.id,
          body: 'We are on it.',
          ...(token ? { claim_token: token } : {}),
        });
      }
      return stop;
    },
  });
  const result = await generateText({ model, tools, prompt: 'Answer the newest message.', stopWhen: stepCountIs(5) });
  for (const part of result.steps.flatMap((step) => step.content)) {
    if (part.type === 'tool-error' && part.toolName === 'claim_thread') turn.claimError = String(part.error);
    if (part.type === 'tool-result' && part.toolName === 'send_message') turn.sent = part.output as Json;
    if (part.type === 'tool-error' && part.toolName === 'send_message') turn.sendError = String(part.error);
  }
  return turn;
}

describe('thread claims', () => {
  let service: TestService;
  let desk: string;
  let principal: Principal;
  /** The injected clock runs this many milliseconds ahead of the real one. */
  let ahead = 0;
  let other: { key: string; id: string };

  const deliver = async (subject: string) => {
    const mail = [
      `From: ${CUSTOMER}`,
      `To: ${DESK}`,
      `Subject: ${subject}`,
      `Message-ID: <${subject.replace(/\W/g, '')}-${Date.now()}@outside.example>`,
      `Date: ${new Date().toUTCString()}`,
      '',
      `${subject}: please help.`,
      '',
    ].join('\r\n');
    expect((await sendRaw(service.smtpPort, CUSTOMER, [DESK], mail)).code).toBe(250);
    return eventually(async () => {
      const listed = await service.nylas.messages.list({ identifier: desk, queryParams: { in: ['inbox'], limit: 5 } });
      return listed.data.find((item) => item.subject === subject);
    }, 15_000);
  };

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' },
      deps: { clock: { now: () => new Date(Date.now() + ahead) } },
    });
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    desk = await createMailbox(service, DESK);
    // The customer is a mailbox here too: replies stay on this service.
    await createMailbox(service, CUSTOMER);
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'night shift' },
    });
    expect(made.status, made.text).toBe(201);
    other = { key: (made.body.data as { key: string }).key, id: (made.body.data as { id: string }).id };
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  it('two agents on one mailbox: only the claim holder replies, the other is told who holds it', async () => {
    const message = await deliver('Order 1001 is late');
    const agent = (id: string, name: string) =>
      createAgentpostTools({
        core: service.core,
        principal: { ...principal, via: 'api_key', key: { id, name } },
        grantId: desk,
      });
    const alpha = agent('key_alpha', 'agent alpha');
    const beta = agent('key_beta', 'agent beta');
    let betaTurn: Turn | undefined;
    const alphaTurn = await answerNewest(alpha, async () => {
      betaTurn = await answerNewest(beta);
    });
    expect(alphaTurn.claimError).toBeUndefined();
    expect(alphaTurn.sendError).toBeUndefined();
    expect(JSON.stringify(alphaTurn.sent)).toContain(message.threadId!);
    // Beta's claim and its reply without the token are both refused, naming alpha's claim and until when.
    expect(betaTurn!.claimError).toMatch(
      new RegExp(
        `Thread ${message.threadId} is claimed by key "agent alpha" \\(key_alpha\\) until \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
    expect(betaTurn!.sent).toBeUndefined();
    expect(betaTurn!.sendError).toMatch(/is claimed by key "agent alpha" \(key_alpha\)/);
    const thread = await service.nylas.messages.list({
      identifier: desk,
      queryParams: { threadId: message.threadId!, limit: 10 },
    });
    expect(thread.data.filter((item) => item.from?.[0]?.email === DESK)).toHaveLength(1);
    // Alpha's reply released the claim: the thread is free again.
    const read = await service.nylas.threads.find({ identifier: desk, threadId: message.threadId! });
    expect((read.data as unknown as Json).claim).toBeUndefined();
  }, 120_000);

  it('over raw /v3 and the nylas SDK: 409 naming the claim, reads show it without the token, release and expiry free it', async () => {
    const message = await deliver('Refund for 1002');
    const threadId = message.threadId!;
    const path = `/v3/grants/${desk}/threads/${threadId}`;
    const claimed = await request(service.url, 'POST', `${path}/claim`, { key: other.key, body: { ttl_seconds: 60 } });
    expect(claimed.status, claimed.text).toBe(200);
    const claim = claimed.body.data as { claim_token: string; expires_at: number; claimed_by: Json };
    expect(claim.claim_token).toMatch(/^clm_/);
    expect(claim.claimed_by).toEqual({ api_key_id: other.id, name: 'night shift' });
    expect(claim.expires_at - Math.floor((Date.now() + ahead) / 1000)).toBeGreaterThanOrEqual(59);
    // Out of bounds: a lease of 5 s or 2 hours.
    for (const ttl of [5, 7200])
      expect(
        (await request(service.url, 'POST', `${path}/claim`, { key: service.apiKey, body: { ttl_seconds: ttl } }))
          .status,
      ).toBe(400);
    // Another caller's claim: 409 naming the holder and until when.
    const taken = await request(service.url, 'POST', `${path}/claim`, { key: service.apiKey, body: {} });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain(
      `is claimed by key "night shift" (${other.id}) until ${new Date(claim.expires_at * 1000).toISOString().slice(0, 16)}`,
    );
    // Reads show the claim to other callers, never its token.
    const found = await service.nylas.threads.find({ identifier: desk, threadId });
    expect((found.data as unknown as Json).claim).toEqual({
      claimedBy: { apiKeyId: other.id, name: 'night shift' },
      expiresAt: claim.expires_at,
    });
    const listed = await request(service.url, 'GET', `/v3/grants/${desk}/threads?limit=5`, { key: service.apiKey });
    const item = (listed.body.data as Json[]).find((entry) => entry.id === threadId)!;
    expect(item.claim).toMatchObject({ claimed_by: { name: 'night shift' } });
    expect(listed.text).not.toContain(claim.claim_token);
    // A send and a draft into the thread without the token: 409 naming the claim (the SDK and raw /v3).
    const refused = await sdkError(
      service.nylas.messages.send({
        identifier: desk,
        requestBody: { to: [{ email: CUSTOMER }], body: 'Refund sent.', replyToMessageId: message.id },
      }),
    );
    expect(refused.statusCode).toBe(409);
    expect(refused.message).toContain('is claimed by key "night shift"');
    const draft = await request(service.url, 'POST', `/v3/grants/${desk}/drafts`, {
      key: service.apiKey,
      body: { to: [{ email: CUSTOMER }], body: 'Draft.', reply_to_message_id: message.id },
    });
    expect(draft.status).toBe(409);
    expect(
      (
        await request(service.url, 'POST', `/v3/grants/${desk}/drafts`, {
          key: service.apiKey,
          body: {
            to: [{ email: CUSTOMER }],
            body: 'Draft.',
            reply_to_message_id: message.id,
            claim_token: claim.claim_token,
          },
        })
      ).status,
    ).toBe(200);
    // Renewing with the token; releasing with a wrong one is refused, with the right one frees it.
    const renewed = await request(service.url, 'POST', `${path}/claim`, {
      key: other.key,
      body: { ttl_seconds: 600, claim_token: claim.claim_token },
    });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.body.data.claim_token).toBe(claim.claim_token);
    expect(renewed.body.data.expires_at).toBeGreaterThan(claim.expires_at);
    const wrong = await request(service.url, 'POST', `${path}/release`, {
      key: service.apiKey,
      body: { claim_token: 'clm_wrong' },
    });
    expect(wrong.status).toBe(409);
    const released = await request(service.url, 'POST', `${path}/release`, {
      key: other.key,
      body: { claim_token: claim.claim_token },
    });
    expect(released.status, released.text).toBe(200);
    expect(released.body.data).toEqual({ thread_id: threadId, released: true });
    // Free: the SDK's send goes. Then a short claim lapses when the clock passes it.
    const sent = await service.nylas.messages.send({
      identifier: desk,
      requestBody: { to: [{ email: CUSTOMER }], body: 'Refund sent.', replyToMessageId: message.id },
    });
    expect(sent.data.threadId).toBe(threadId);
    const short = await request(service.url, 'POST', `${path}/claim`, { key: other.key, body: { ttl_seconds: 10 } });
    expect(short.status, short.text).toBe(200);
    expect((await request(service.url, 'POST', `${path}/claim`, { key: service.apiKey, body: {} })).status).toBe(409);
    ahead += 11_000;
    const after = await request(service.url, 'POST', `${path}/claim`, {
      key: service.apiKey,
      body: { ttl_seconds: 30 },
    });
    expect(after.status, after.text).toBe(200);
    // The lapsed claim of the night shift is replaced by the caller's own.
    expect(after.body.data.claimed_by).toMatchObject({ name: 'AGENTPOST_API_KEY' });
    expect(after.body.data.claim_token).not.toBe(short.body.data.claim_token);
  }, 120_000);
});
