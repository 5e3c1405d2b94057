/**
 * The send API's refusals and guarantees over HTTP: header injection, bad Base64, another mailbox's attachment,
 * the recipient limit, body size limits (JSON and multipart), tracking on trial applications, and the
 * Idempotency-Key (five identical requests, one after the other and at once: one SMTP transaction and the same
 * answer; the key with another body: 409). Large attachments go as multipart/form-data, exactly as the nylas
 * SDK sends them.
 */
import { simpleParser } from 'mailparser';
import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'sendcheck.agentpost.localhost';
const SENDER = `sender@${DOMAIN}`;
const OTHER = `other@${DOMAIN}`;

describe('send API: bad input and idempotency', () => {
  let service: TestService;
  let sink: SmtpSink;
  let sender: string;
  let other: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({ env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` } });
    sender = await createMailbox(service, SENDER);
    other = await createMailbox(service, OTHER);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  const send = (body: unknown, headers: Record<string, string> = {}, grant = sender) =>
    request(service.url, 'POST', `/v3/grants/${grant}/messages/send`, { key: service.apiKey, body, headers });

  /** Every message the sink and the local mailboxes got since `before` (the count of stored messages). */
  async function storedCount(): Promise<number> {
    const rows = await service.core.deps.db.client.execute('select count(*) as n from messages');
    return Number(rows.rows[0]!.n);
  }

  it('refuses CR or LF in every header-bound field with 400, and nothing is sent or stored', async () => {
    const before = await storedCount();
    const sessions = sink.sessions;
    const base = { to: [{ email: 'to@example.com' }], subject: 'ok', body: 'hi' };
    const cases: [string, unknown][] = [
      ['subject', { ...base, subject: 'Hello\r\nBcc: victim@example.com' }],
      ['subject', { ...base, subject: 'Hello\nX-Injected: 1' }],
      ['to.0.name', { ...base, to: [{ name: 'Bob\r\nBcc: victim@example.com', email: 'to@example.com' }] }],
      ['to.0.email', { ...base, to: [{ email: 'to@example.com\r\nBcc: victim@example.com' }] }],
      ['cc.0.name', { ...base, cc: [{ name: 'x\ry', email: 'cc@example.com' }] }],
      ['reply_to.0.email', { ...base, reply_to: [{ email: 'r@example.com\nBcc: v@example.com' }] }],
      ['reply_to.0.name', { ...base, reply_to: [{ name: 'R\r\n', email: 'r@example.com' }] }],
      ['from.0.name', { ...base, from: [{ name: 'Me\r\nBcc: v@example.com', email: SENDER }] }],
      [
        'custom_headers.0.value',
        { ...base, custom_headers: [{ name: 'X-Tag', value: 'a\r\nBcc: victim@example.com' }] },
      ],
      ['custom_headers.0.name', { ...base, custom_headers: [{ name: 'X-Tag\r\nBcc', value: 'v' }] }],
      ['custom_headers.0.name', { ...base, custom_headers: [{ name: 'Bcc', value: 'victim@example.com' }] }],
      [
        'attachments.0.filename',
        {
          ...base,
          attachments: [{ filename: 'a.txt\r\nBcc: v@example.com', content_type: 'text/plain', content: 'aGk=' }],
        },
      ],
      [
        'attachments.0.content_type',
        {
          ...base,
          attachments: [{ filename: 'a.txt', content_type: 'text/plain\r\nBcc: v@example.com', content: 'aGk=' }],
        },
      ],
    ];
    for (const [field, body] of cases) {
      const response = await send(body);
      expect(response.status, field).toBe(400);
      expect(response.body.error.message, field).toContain(field);
    }
    // The drafts API takes the same fields through the same schema.
    const draft = await request(service.url, 'POST', `/v3/grants/${sender}/drafts`, {
      key: service.apiKey,
      body: { ...base, subject: 'x\r\nBcc: v@example.com' },
    });
    expect(draft.status).toBe(400);
    expect(await storedCount()).toBe(before);
    expect(sink.sessions).toBe(sessions);
  });

  it("refuses invalid Base64 (400), another mailbox's attachment id (404), a sender address of another mailbox (400)", async () => {
    const bad = await send({
      to: [{ email: 'to@example.com' }],
      body: 'x',
      attachments: [{ filename: 'a.bin', content_type: 'application/octet-stream', content: 'not base64!!' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('attachments.0.content');
    expect(bad.body.error.message).toContain('Base64');

    // A message with an attachment in the other mailbox.
    const delivered = await send({
      to: [{ email: OTHER }],
      subject: 'has file',
      body: 'x',
      attachments: [
        { filename: 'secret.txt', content_type: 'text/plain', content: Buffer.from('secret').toString('base64') },
      ],
    });
    expect(delivered.status).toBe(200);
    const inbox = await service.nylas.messages.list({ identifier: other, queryParams: { subject: 'has file' } });
    const foreignId = inbox.data[0]!.attachments![0]!.id;
    const stolen = await send(
      { to: [{ email: 'to@example.com' }], body: 'x', attachments: [{ id: foreignId }] },
      {},
      sender,
    );
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.message).toContain('attachments[0].id');
    // Forwarding one's own attachment by id works and carries its bytes.
    sink.messages.length = 0;
    const forward = await send(
      {
        to: [{ email: 'fwd@example.com' }],
        subject: 'forward',
        body: 'see attached',
        attachments: [{ id: foreignId }],
      },
      {},
      other,
    );
    expect(forward.status).toBe(200);
    const [arrived] = await sink.waitFor(1);
    const parsed = await simpleParser(arrived!.raw);
    expect(parsed.attachments.find((attachment) => attachment.filename === 'secret.txt')?.content.toString()).toBe(
      'secret',
    );

    const spoof = await send({ from: [{ email: OTHER }], to: [{ email: 'to@example.com' }], body: 'x' });
    expect(spoof.status).toBe(400);
    expect(spoof.body.error.message).toContain('from');
    const noRecipient = await send({ subject: 'to nobody', body: 'x' });
    expect(noRecipient.status).toBe(400);
    expect(noRecipient.body.error.message).toMatch(/recipient/);
    const unknownReply = await send({
      to: [{ email: 'to@example.com' }],
      body: 'x',
      reply_to_message_id: 'no-such-message',
    });
    expect(unknownReply.status).toBe(404);
    expect(unknownReply.body.error.message).toContain('reply_to_message_id');
  });

  it('limits recipients: 1,000 is a 400 naming the limit of 100', async () => {
    const many = Array.from({ length: 1000 }, (_, index) => ({ email: `r${index}@example.com` }));
    const response = await send({ to: many, subject: 'too many', body: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('100 recipients');
    const split = await send({ to: many.slice(0, 60), cc: many.slice(60, 101), body: 'x' });
    expect(split.status).toBe(400);
    expect(split.body.error.message).toContain('at most 100');
  });

  it('limits sizes: JSON over 3 MB and multipart over 40 MB are 413 naming the limit; a large attachment goes as multipart', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const json = await send({
      to: [{ email: 'to@example.com' }],
      body: 'x',
      attachments: [{ filename: 'big.bin', content_type: 'application/octet-stream', content: big }],
    });
    expect(json.status).toBe(413);
    expect(json.body.error.message).toContain('3 MB');

    // The SDK switches to multipart/form-data at 3 MB: field `message` + one file part per attachment.
    sink.messages.length = 0;
    const file = Buffer.alloc(4 * 1024 * 1024);
    for (let index = 0; index < file.length; index += 1) file[index] = (index * 31) % 251;
    const sent = await service.nylas.messages.send({
      identifier: sender,
      requestBody: {
        to: [{ email: 'large@example.com' }],
        subject: 'Large file',
        body: '<p>see attached</p>',
        attachments: [
          { filename: 'large.bin', contentType: 'application/octet-stream', content: file, size: file.length },
        ],
      },
    });
    expect(sent.data.attachments?.[0]).toMatchObject({ filename: 'large.bin', size: file.length });
    const [arrived] = await sink.waitFor(1, 20_000);
    const parsed = await simpleParser(arrived!.raw);
    expect(parsed.attachments[0]!.content.equals(file)).toBe(true);

    const form = new FormData();
    form.append('message', JSON.stringify({ to: [{ email: 'to@example.com' }], subject: 'huge' }));
    form.append('file0', new Blob([Buffer.alloc(41 * 1024 * 1024)], { type: 'application/octet-stream' }), 'huge.bin');
    const huge = await fetch(`${service.url}/v3/grants/${sender}/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}` },
      body: form,
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { error: { message: string } }).error.message).toContain('40 MB');

    // Under the request limit but over 40 MB once composed (Base64): 413 too.
    const nearly = new FormData();
    nearly.append('message', JSON.stringify({ to: [{ email: 'to@example.com' }], subject: 'nearly' }));
    nearly.append(
      'file0',
      new Blob([Buffer.alloc(35 * 1024 * 1024)], { type: 'application/octet-stream' }),
      'nearly.bin',
    );
    const composed = await fetch(`${service.url}/v3/grants/${sender}/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}` },
      body: nearly,
    });
    expect(composed.status).toBe(413);
    expect(((await composed.json()) as { error: { message: string } }).error.message).toContain('40 MB');
  });

  it('refuses tracking_options from a trial application (400) and accepts and returns them from a production one', async () => {
    const { apiKey } = await service.core.accounts.applications.createApplication({ name: 'Trial', plan: 'trial' });
    const trial = service.client(apiKey);
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: apiKey,
      body: { name: 'Trial', domain_address: 'trialapp.agentpost.localhost' },
    });
    const grant = await trial.auth.customAuthentication({
      requestBody: { provider: 'nylas', settings: { email: 'agent@trialapp.agentpost.localhost' } } as never,
    });
    const refused = await trial.messages
      .send({
        identifier: grant.data.id,
        requestBody: {
          to: [{ email: 'to@example.com' }],
          body: 'x',
          trackingOptions: { opens: true, label: 'campaign' },
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(NylasApiError);
    expect((refused as NylasApiError).statusCode).toBe(400);
    expect((refused as NylasApiError).message).toMatch(/tracking options are not allowed for trial/);
    const allowed = await service.nylas.messages.send({
      identifier: sender,
      requestBody: {
        to: [{ email: 'to@example.com' }],
        body: 'x',
        trackingOptions: { opens: true, label: 'campaign' },
      },
    });
    expect((allowed.data as unknown as { trackingOptions: unknown }).trackingOptions).toEqual({
      opens: true,
      label: 'campaign',
    });
    const stored = await request(
      service.url,
      'GET',
      `/v3/grants/${sender}/messages/${allowed.data.id}?fields=include_tracking_options`,
      { key: service.apiKey },
    );
    expect(stored.body.data.tracking_options).toEqual({ opens: true, label: 'campaign' });
    const plain = await request(service.url, 'GET', `/v3/grants/${sender}/messages/${allowed.data.id}`, {
      key: service.apiKey,
    });
    expect(plain.body.data.tracking_options).toBeUndefined();
    // The send is recorded for tracking in its own transaction: its sent copy, thread, Message-ID and label.
    const [tracked] = await service.core.deps.db.orm
      .select()
      .from(tables.trackedMessages)
      .where(eq(tables.trackedMessages.messageId, allowed.data.id));
    expect(tracked).toMatchObject({
      opens: true,
      links: false,
      threadReplies: false,
      label: 'campaign',
      threadId: allowed.data.threadId,
    });
    expect(tracked!.headerMessageId).toMatch(/@sendcheck\.agentpost\.localhost$/);
    expect(tracked!.id).not.toBe(allowed.data.id);
  });

  it('Idempotency-Key: five identical requests, one after another, make one send and replay the same answer', async () => {
    sink.messages.length = 0;
    const body = { to: [{ email: 'once@example.com' }], subject: 'exactly once', body: 'x' };
    const headers = { 'Idempotency-Key': 'key-sequential-1' };
    const answers = [];
    for (let index = 0; index < 5; index += 1) answers.push(await send(body, headers));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body.data))).size).toBe(1);
    const once = () => sink.messages.filter((message) => message.rcptTo.includes('once@example.com'));
    await eventually(async () => once().length > 0 || undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(once()).toHaveLength(1);
    const copies = await service.nylas.messages.list({ identifier: sender, queryParams: { subject: 'exactly once' } });
    expect(copies.data).toHaveLength(1);

    const conflict = await send({ ...body, subject: 'something else' }, headers);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.message).toContain('Idempotency-Key');
    const tooLong = await send(body, { 'Idempotency-Key': 'k'.repeat(257) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('256');
  });

  it('Idempotency-Key: five identical requests at once make one SMTP transaction and the same answer', async () => {
    const body = { to: [{ email: 'concurrent@example.com' }, { email: OTHER }], subject: 'concurrent once', body: 'x' };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => send(body, { 'Idempotency-Key': 'key-concurrent-1' })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body.data))).size).toBe(1);
    // The four that got the first one's answer say so, as Nylas does.
    expect(answers.filter((answer) => answer.headers.get('idempotent-response') === 'true')).toHaveLength(4);
    await eventually(
      async () => sink.messages.some((message) => message.rcptTo.includes('concurrent@example.com')) || undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.messages.filter((message) => message.rcptTo.includes('concurrent@example.com'))).toHaveLength(1);
    const atOther = await service.nylas.messages.list({
      identifier: other,
      queryParams: { subject: 'concurrent once' },
    });
    expect(atOther.data).toHaveLength(1);
    // Another application may use the same key for its own request.
    const { apiKey } = await service.core.accounts.applications.createApplication({
      name: 'Second',
      plan: 'production',
    });
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: apiKey,
      body: { name: 'Second', domain_address: 'second.agentpost.localhost' },
    });
    const grant = await service.client(apiKey).auth.customAuthentication({
      requestBody: { provider: 'nylas', settings: { email: 'agent@second.agentpost.localhost' } } as never,
    });
    const elsewhere = await request(service.url, 'POST', `/v3/grants/${grant.data.id}/messages/send`, {
      key: apiKey,
      body: { to: [{ email: 'x@example.com' }], body: 'y' },
      headers: { 'Idempotency-Key': 'key-concurrent-1' },
    });
    expect(elsewhere.status).toBe(200);
  });

  it("Idempotency-Key through the nylas SDK: a replay says Idempotent-Response: true, errors carry Nylas's types", async () => {
    const requestBody = { to: [{ email: OTHER }], subject: 'replayed through the SDK', body: 'x' };
    const overrides = { headers: { 'Idempotency-Key': 'sdk-key-1' } };
    const first = await service.nylas.messages.send({ identifier: sender, requestBody, overrides });
    expect(first.rawHeaders?.['idempotent-response']).toBeUndefined();
    const again = await service.nylas.messages.send({ identifier: sender, requestBody, overrides });
    expect(again.rawHeaders?.['idempotent-response']).toBe('true');
    expect(again.data.id).toBe(first.data.id);

    // A draft send replays the same way.
    const draft = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: { to: [{ email: OTHER }], subject: 'draft replayed through the SDK' },
    });
    const draftOverrides = { headers: { 'Idempotency-Key': 'sdk-draft-key-1' } };
    const sentDraft = await service.nylas.drafts.send({
      identifier: sender,
      draftId: draft.data.id,
      overrides: draftOverrides,
    });
    expect(sentDraft.rawHeaders?.['idempotent-response']).toBeUndefined();
    const replayedDraft = await service.nylas.drafts.send({
      identifier: sender,
      draftId: draft.data.id,
      overrides: draftOverrides,
    });
    expect(replayedDraft.rawHeaders?.['idempotent-response']).toBe('true');
    expect(replayedDraft.data.id).toBe(sentDraft.data.id);

    const reused = await service.nylas.messages
      .send({ identifier: sender, requestBody: { ...requestBody, subject: 'another request' }, overrides })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(reused).toBeInstanceOf(NylasApiError);
    expect(reused).toMatchObject({ statusCode: 409, type: 'api.invalid_idempotent_request' });
    const tooLong = await service.nylas.messages
      .send({ identifier: sender, requestBody, overrides: { headers: { 'Idempotency-Key': 'k'.repeat(257) } } })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(tooLong).toBeInstanceOf(NylasApiError);
    expect(tooLong).toMatchObject({ statusCode: 400, type: 'api.invalid_idempotency_key' });
  });

  it('sending a draft honours the Idempotency-Key too (a replay after the draft is gone gets the same answer)', async () => {
    const draft = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: { to: [{ email: OTHER }], subject: 'draft once' },
    });
    const path = `/v3/grants/${sender}/drafts/${draft.data.id}`;
    const first = await request(service.url, 'POST', path, {
      key: service.apiKey,
      body: {},
      headers: { 'Idempotency-Key': 'draft-key' },
    });
    const again = await request(service.url, 'POST', path, {
      key: service.apiKey,
      body: {},
      headers: { 'Idempotency-Key': 'draft-key' },
    });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    const without = await request(service.url, 'POST', path, { key: service.apiKey, body: {} });
    expect(without.status).toBe(404);
    expect(
      (await service.nylas.messages.list({ identifier: other, queryParams: { subject: 'draft once' } })).data,
    ).toHaveLength(1);
  });

  it('send_at must be in the future and at most 30 days ahead', async () => {
    const now = Math.floor(Date.now() / 1000);
    const past = await send({ to: [{ email: 'to@example.com' }], body: 'x', send_at: now - 60 });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toContain('send_at');
    const far = await send({ to: [{ email: 'to@example.com' }], body: 'x', send_at: now + 31 * 86_400 });
    expect(far.status).toBe(400);
    const ok = await send({ to: [{ email: 'to@example.com' }], body: 'x', send_at: now + 600 });
    expect(ok.status).toBe(202);
    expect(ok.body.schedule_id).toBe(ok.body.data.schedule_id);
  });
});
