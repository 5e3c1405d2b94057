/**
 * The test clock and follow-ups (issue 40, items 8 and 6), over our HTTP server with the official nylas SDK and fetch:
 * a test-mode application's clock moves only when told; advancing it runs what fell due (a scheduled send an hour
 * ahead, a hold's expiry, follow-ups) before it answers; mail still leaves through the relay by real time; a follow-up
 * goes out as a reply in its thread unless a reply delivered through our SMTP listener cancelled it; every outcome is
 * a webhook. A production application gets a clear 400, and a clock never goes backwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { operations, runOperation } from '../../src/index.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink, type SunkMessage } from '../helpers/smtp-sink.js';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'clock.agentpost.localhost';
const sendMessage = operations.find((operation) => operation.name === 'send_message')!;
const AGENT = `agent@${DOMAIN}`;
const HOUR = 3600;
type Json = Record<string, any>;

/** The Message-ID of a message the relay received. */
function messageIdOf(message: SunkMessage): string {
  const match = /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(message.raw.toString('latin1'));
  if (!match) throw new Error('no Message-ID in the relayed message');
  return match[1]!;
}

describe('the test clock of a test-mode application', () => {
  let service: TestService;
  let sink: SmtpSink;
  let hooks: WebhookReceiver;
  let testKey: string;
  let nylas: Nylas;
  let grant: string;
  const call = (method: string, path: string, body?: Json, key = testKey) =>
    request(service.url, method, path, { key, ...(body ? { body } : {}) });
  const clock = async () => {
    const answer = await call('GET', '/v3/test-clock');
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as Json;
  };
  const advance = async (body: Json) => {
    const answer = await call('POST', '/v3/test-clock/advance', body);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as Json;
  };
  /** The webhooks received of a trigger type, waiting for the first `count`. */
  const hooksOf = async (type: string, count = 1): Promise<ReceivedDelivery[]> => {
    for (let seen = hooks.deliveries.length; ; seen++) {
      const matching = hooks.deliveries.filter((delivery) => delivery.json?.type === type);
      if (matching.length >= count) return matching;
      await hooks.waitForDeliveries(seen + 1, 10_000);
    }
  };
  const relayedTo = async (address: string, count = 1) => {
    for (let seen = sink.messages.length; ; seen++) {
      const matching = sink.messages.filter((message) => message.rcptTo.includes(address));
      if (matching.length >= count) return matching;
      await sink.waitFor(seen + 1, 10_000);
    }
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    hooks = await startReceiver();
    service = await startTestService({
      env: {
        AGENTPOST_RATE_LIMIT_APPLICATION: '0',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_WORKER_POLL_MS: '100',
      },
    });
    const created = await service.core.accounts.applications.createApplication({
      name: 'Agent tests',
      plan: 'trial',
      testMode: true,
    });
    expect(created.application.test_mode).toBe(true);
    testKey = created.apiKey;
    nylas = service.client(testKey);
    grant = await createMailbox({ url: service.url, apiKey: testKey, nylas }, AGENT);
    await nylas.webhooks.create({
      requestBody: {
        triggerTypes: ['event.hold_expired', 'message.follow_up_sent', 'message.follow_up_cancelled'] as never,
        webhookUrl: hooks.url,
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
    await hooks?.close();
  });

  it('reads its virtual time; a production application gets a 400 in the Nylas shape', async () => {
    const read = await clock();
    expect(read).toMatchObject({ object: 'test_clock', test_mode: true });
    expect(Math.abs(read.now - Date.now() / 1000)).toBeLessThan(120);
    expect(new Date(read.now_iso as string).getTime()).toBe(Math.floor(Date.parse(read.now_iso as string)));

    for (const [method, path, body] of [
      ['GET', '/v3/test-clock'],
      ['POST', '/v3/test-clock/advance', { seconds: 60 }],
    ] as [string, string, Json?][]) {
      const answer = await call(method, path, body, service.apiKey);
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body).toMatchObject({
        request_id: expect.any(String),
        error: { type: 'invalid_request_error', message: expect.stringContaining('not in test mode') },
      });
    }
  });

  it('never goes backwards, and takes seconds or to', async () => {
    const { now } = await clock();
    const back = await call('POST', '/v3/test-clock/advance', { to: now - 10 });
    expect(back.status, back.text).toBe(400);
    expect(back.body.error.message).toMatch(/never goes backwards/);
    const both = await call('POST', '/v3/test-clock/advance', { seconds: 1, to: now + 1 });
    expect(both.status, both.text).toBe(400);
    const moved = await advance({ to: new Date((now + 5) * 1000).toISOString() });
    expect(moved).toMatchObject({ previous: now, now: now + 5 });
    expect((await clock()).now).toBe(now + 5);
  });

  it('sends a send scheduled an hour ahead only once the clock passes it, through the relay', async () => {
    const { now } = await clock();
    const scheduled = await nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'later@example.com' }], subject: 'In an hour', body: 'hello', sendAt: now + HOUR },
    });
    const scheduleId = (scheduled.data as unknown as { scheduleId: string }).scheduleId;
    const status = async () =>
      (await nylas.messages.findScheduledMessage({ identifier: grant, scheduleId })).data.status.code;

    const half = await advance({ seconds: HOUR / 2 });
    expect(half.ran).toMatchObject({ scheduled_sends: 0 });
    expect(await status()).toBe('pending');

    const past = await advance({ seconds: HOUR / 2 + 1 });
    expect(past.ran).toMatchObject({ scheduled_sends: 1 });
    expect(await status()).toBe('success');
    // The virtual clock is an hour ahead of real time; the relay still gets it now.
    const [relayed] = await relayedTo('later@example.com');
    expect(relayed!.raw.toString()).toContain('Subject: In an hour');
    // Its sent copy carries the virtual time.
    const sent = await nylas.messages.list({ identifier: grant, queryParams: { in: ['sent'] as never } });
    const copy = sent.data.find((message) => message.subject === 'In an hour')!;
    expect(copy.date).toBeGreaterThanOrEqual(now + HOUR);
  });

  it('expires a hold when the clock passes its ttl, with event.hold_expired', async () => {
    const { now } = await clock();
    const start = Math.ceil(now / HOUR) * HOUR + 24 * HOUR;
    const created = await call('POST', '/v3/calendars/holds', {
      grant_id: grant,
      participants: [{ email: 'guest@example.com' }],
      slots: [{ start_time: start, end_time: start + HOUR }],
      ttl_seconds: 600,
    });
    expect(created.status, created.text).toBe(200);
    const holdId = created.body.data.hold_id as string;
    expect(created.body.data.expires_at).toBe(now + 600);

    expect((await advance({ seconds: 599 })).ran).toMatchObject({ holds_expired: 0 });
    expect((await call('GET', `/v3/calendars/holds/${holdId}`)).body.data.status).toBe('held');
    expect((await advance({ seconds: 1 })).ran).toMatchObject({ holds_expired: 1 });
    expect((await call('GET', `/v3/calendars/holds/${holdId}`)).body.data.status).toBe('expired');
    const [expired] = await hooksOf('event.hold_expired');
    expect(expired!.json.data.object).toMatchObject({ hold_id: holdId, status: 'expired' });
  });

  it('sends a follow-up as a reply in its thread unless a reply came; both are webhooks', async () => {
    const { now } = await clock();
    const followUp = { afterSeconds: HOUR, body: 'Any news on this?' };
    // The SDK sends extension fields snake_cased, as it does its own.
    const quiet = await nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'quiet@example.com' }], subject: 'Proposal', body: 'Here it is', followUp } as never,
    });
    const answered = await nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'buyer@example.com' }], subject: 'Offer', body: 'Our offer', followUp } as never,
    });
    const listed = await call('GET', `/v3/grants/${grant}/follow-ups?status=pending`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.data.map((item: Json) => item.due_at)).toEqual([now + HOUR, now + HOUR]);

    // The buyer answers over SMTP, through our listener, in the thread of the offer.
    const [offer] = await relayedTo('buyer@example.com');
    const reply = [
      'From: Buyer <buyer@example.com>',
      `To: ${AGENT}`,
      'Subject: Re: Offer',
      'Message-ID: <answer-1@example.com>',
      `In-Reply-To: ${messageIdOf(offer!)}`,
      `References: ${messageIdOf(offer!)}`,
      '',
      'Looks good.',
      '',
    ].join('\r\n');
    expect((await sendRaw(service.smtpPort, 'buyer@example.com', [AGENT], reply)).code).toBe(250);

    const moved = await advance({ seconds: HOUR });
    expect(moved.ran).toMatchObject({ follow_ups: 2 });
    const all = (await call('GET', `/v3/grants/${grant}/follow-ups`)).body.data as Json[];
    const sent = all.find((item) => item.message_id === quiet.data.id)!;
    const cancelled = all.find((item) => item.message_id === answered.data.id)!;
    expect(sent).toMatchObject({ status: 'sent', thread_id: quiet.data.threadId });
    expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'a reply came' });
    expect(cancelled.reply_message_id).toEqual(expect.any(String));

    // The follow-up is a reply in the thread, and it leaves through the relay.
    const { data: followed } = await nylas.messages.find({ identifier: grant, messageId: sent.sent_message_id });
    expect(followed).toMatchObject({ threadId: quiet.data.threadId, subject: 'Re: Proposal' });
    const relayed = await relayedTo('quiet@example.com', 2);
    const raw = relayed[1]!.raw.toString();
    expect(raw).toContain('Any news on this?');
    expect(raw).toMatch(new RegExp(`In-Reply-To: ${messageIdOf(relayed[0]!).replace(/[.$]/g, '\\$&')}`, 'i'));

    const [sentHook] = await hooksOf('message.follow_up_sent');
    expect(sentHook!.json.data.object).toMatchObject({ id: sent.id, status: 'sent' });
    const [cancelledHook] = await hooksOf('message.follow_up_cancelled');
    expect(cancelledHook!.json.data.object).toMatchObject({ id: cancelled.id, status: 'cancelled' });
  });

  it('takes a follow-up on a sent message by a call of its own, and the agent cancels it', async () => {
    const { data: sentMessage } = await nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'later2@example.com' }], subject: 'Checking in', body: 'Hi' },
    });
    const made = await call('POST', `/v3/grants/${grant}/messages/${sentMessage.id}/follow-up`, {
      after_seconds: 600,
      body: 'Following up',
    });
    expect(made.status, made.text).toBe(200);
    const again = await call('POST', `/v3/grants/${grant}/messages/${sentMessage.id}/follow-up`, {
      after_seconds: 600,
      body: 'Twice',
    });
    expect(again.status, again.text).toBe(409);
    const id = made.body.data.id as string;
    const cancelled = await call('DELETE', `/v3/grants/${grant}/follow-ups/${id}`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', reason: 'cancelled by the agent' });
    expect((await advance({ seconds: 601 })).ran).toMatchObject({ follow_ups: 0 });
    expect((await hooksOf('message.follow_up_cancelled', 2))[1]!.json.data.object).toMatchObject({ id });
    const withSendAt = await call('POST', `/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'x@example.com' }],
      body: 'x',
      send_at: (await clock()).now + 600,
      follow_up: { after_seconds: 600, body: 'y' },
    });
    expect(withSendAt.status, withSendAt.text).toBe(400);
  });

  it('waits while its grant is suspended, and is sent once the grant is resumed', async () => {
    const { data: sentMessage } = await nylas.messages.send({
      identifier: grant,
      requestBody: {
        to: [{ email: 'paused@example.com' }],
        subject: 'While paused',
        body: 'Hi',
        followUp: { afterSeconds: 60, body: 'Still keen?' },
      } as never,
    });
    const pending = (await call('GET', `/v3/grants/${grant}/follow-ups?status=pending`)).body.data as Json[];
    const id = pending.find((entry) => entry.message_id === sentMessage.id)!.id as string;
    const suspended = await call('POST', `/v3/grants/${grant}/suspend`, { reason: 'a person reviews this mailbox' });
    expect(suspended.status, suspended.text).toBe(200);
    try {
      await advance({ seconds: 61 });
      const waiting = (await call('GET', `/v3/grants/${grant}/follow-ups/${id}`)).body.data as Json;
      expect(waiting).toMatchObject({ status: 'pending' });
      expect(String(waiting.reason)).toContain('a person reviews this mailbox');
    } finally {
      const resumed = await call('POST', `/v3/grants/${grant}/resume`);
      expect(resumed.status, resumed.text).toBe(200);
    }
    await advance({ seconds: 60 });
    expect((await call('GET', `/v3/grants/${grant}/follow-ups/${id}`)).body.data).toMatchObject({ status: 'sent' });
  });

  it('takes follow_up on the AI SDK send tool too', async () => {
    const tools = createAgentpostTools({ url: service.url, apiKey: testKey, grantId: grant });
    const sent = (await tools.send_message!.execute!(
      {
        to: [{ email: 'tool@example.com' }],
        subject: 'From the tool',
        body: 'Hello',
        follow_up: { after_seconds: 120, body: 'Hello again' },
      },
      { toolCallId: 'call-1', messages: [] },
    )) as Json;
    const messageId = JSON.stringify(sent).match(/"id":"([^"]+)"/)![1];
    const pending = (await call('GET', `/v3/grants/${grant}/follow-ups?status=pending`)).body.data as Json[];
    expect(pending).toMatchObject([{ message_id: messageId, body: 'Hello again', due_at: (await clock()).now + 120 }]);
    expect((await advance({ seconds: 120 })).ran).toMatchObject({ follow_ups: 1 });
    expect((await call('GET', `/v3/grants/${grant}/follow-ups/${pending[0]!.id as string}`)).body.data.status).toBe(
      'sent',
    );
  });

  it("the worker's pass runs a production application's follow-ups: a reply since its last pass cancels, the due one is sent", async () => {
    const production = await createMailbox(service, 'agent@production.agentpost.localhost');
    const send = (to: string, subject: string) =>
      call(
        'POST',
        `/v3/grants/${production}/messages/send`,
        { to: [{ email: to }], subject, body: 'x', follow_up: { after_seconds: 60, body: 'Still there?' } },
        service.apiKey,
      );
    const pass = (at: number) =>
      service.core.sending.followUps.runDue(new Date(at), {
        send: (input, context) => runOperation(sendMessage, service.core, input, context),
      });
    // A first pass that finds nothing due: the worker's cancel pass starts from here.
    expect(await pass(Date.now())).toEqual({ sent: 0, cancelled: 0, failed: 0 });
    const quiet = await send('prod-quiet@example.com', 'Quiet');
    const answered = await send('prod-buyer@example.com', 'Answered');
    expect(answered.status, answered.text).toBe(200);
    const [offer] = await relayedTo('prod-buyer@example.com');
    const reply = [
      'From: <prod-buyer@example.com>',
      'To: agent@production.agentpost.localhost',
      'Subject: Re: Answered',
      'Message-ID: <answer-2@example.com>',
      `In-Reply-To: ${messageIdOf(offer!)}`,
      '',
      'Yes.',
      '',
    ].join('\r\n');
    expect(
      (await sendRaw(service.smtpPort, 'prod-buyer@example.com', ['agent@production.agentpost.localhost'], reply)).code,
    ).toBe(250);
    // Not due yet: the reply cancels at once (this pass, or the service's own worker running the same pass), the
    // quiet one waits for its time.
    const statusOf = async (messageId: unknown) =>
      ((await call('GET', `/v3/grants/${production}/follow-ups`, undefined, service.apiKey)).body.data as Json[]).find(
        (item) => item.message_id === messageId,
      )?.status as string;
    expect((await pass(Date.now())).sent).toBe(0);
    await eventually(async () => ((await statusOf(answered.body.data.id)) === 'cancelled' ? true : undefined));
    expect(await statusOf(quiet.body.data.id)).toBe('pending');
    expect(await pass(Date.now() + 61_000)).toEqual({ sent: 1, cancelled: 0, failed: 0 });
    const listed = (await call('GET', `/v3/grants/${production}/follow-ups`, undefined, service.apiKey)).body
      .data as Json[];
    expect(listed.find((item) => item.message_id === quiet.body.data.id)).toMatchObject({ status: 'sent' });
    expect(listed.find((item) => item.message_id === answered.body.data.id)).toMatchObject({ status: 'cancelled' });
  });

  it("leaves a test-mode application's due work to its clock: the worker's passes skip it even when real time is past it", async () => {
    // A second test-mode application whose clock stands two days behind real time: by real time all its work is due.
    const behind = await service.core.accounts.applications.createApplication({
      name: 'Behind',
      plan: 'trial',
      testMode: true,
    });
    const client = service.client(behind.apiKey);
    await service.core.deps.db.write((tx) =>
      tx
        .update(tables.applications)
        .set({ testClockAt: Date.now() - 2 * 24 * HOUR * 1000 })
        .where(eq(tables.applications.id, behind.application.id)),
    );
    const mailbox = await createMailbox(
      { url: service.url, apiKey: behind.apiKey, nylas: client },
      'agent@behind.agentpost.localhost',
    );
    const as = (method: string, path: string, body?: Json) => call(method, path, body, behind.apiKey);
    const { now } = (await as('GET', '/v3/test-clock')).body.data as Json;
    expect(now).toBeLessThan(Date.now() / 1000 - 47 * HOUR);

    await client.messages.send({
      identifier: mailbox,
      requestBody: { to: [{ email: 'someone@example.com' }], body: 'later', sendAt: now + 600 },
    });
    const hold = await as('POST', '/v3/calendars/holds', {
      grant_id: mailbox,
      participants: [{ email: 'guest@example.com' }],
      slots: [{ start_time: now + 86_400, end_time: now + 86_400 + HOUR }],
      ttl_seconds: 600,
    });
    expect(hold.status, hold.text).toBe(200);
    const { data: message } = await client.messages.send({
      identifier: mailbox,
      requestBody: {
        to: [{ email: 'someone@example.com' }],
        body: 'first',
        followUp: { afterSeconds: 600, body: 'again' },
      } as never,
    });

    // The worker's passes, by real time: nothing of this application.
    expect(await service.core.jobs.queue.nextClaimableAt(['mail.send_scheduled'])).toBeUndefined();
    expect(await service.core.calendar.holds.expire()).toBe(0);
    const worker = await service.core.sending.followUps.runDue(new Date(), {
      send: () => Promise.reject(new Error('the worker must not send a test-mode follow-up')),
    });
    expect(worker).toEqual({ sent: 0, cancelled: 0, failed: 0 });
    expect((await as('GET', `/v3/calendars/holds/${hold.body.data.hold_id as string}`)).body.data.status).toBe('held');

    // Its own clock runs all three, in order of due time, at once.
    const moved = (await as('POST', '/v3/test-clock/advance', { seconds: 600 })).body.data as Json;
    expect(moved.ran).toMatchObject({ scheduled_sends: 1, follow_ups: 1, holds_expired: 1 });
    const followUps = (await as('GET', `/v3/grants/${mailbox}/follow-ups`)).body.data as Json[];
    expect(followUps).toMatchObject([{ message_id: message.id, status: 'sent' }]);
  });
});
