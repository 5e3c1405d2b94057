/**
 * The event stream (issue 40, item 1) through the running service: a client with no listening port reads
 * `GET /v3/events/stream` as Server-Sent Events (eventsource-parser over fetch) and as a WebSocket (ws), receives
 * `message.created` for mail delivered over SMTP with the webhook's notification id, resumes from its last cursor
 * with exactly the events it missed, in order, none twice; scope, permissions and the retention answer as documented.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'stream.agentpost.localhost';
type Json = Record<string, unknown>;

/** A client of the SSE face: the events it parsed so far, and a way to stop reading. */
interface SseClient {
  status: number;
  events: EventSourceMessage[];
  body: string;
  close(): void;
}

async function openSse(url: string, key: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const client: SseClient = { status: response.status, events: [], body: '', close: () => controller.abort() };
  if (response.status !== 200) {
    client.body = await response.text();
    return client;
  }
  const parser = createParser({ onEvent: (event) => client.events.push(event) });
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // Aborted by close().
    }
  })();
  return client;
}

function mail(to: string, subject: string): string {
  return [
    'From: Sender <sender@outside.example>',
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W/g, '')}.${Math.random().toString(36).slice(2)}@outside.example>`,
    'Date: Sun, 29 Nov 2026 18:00:00 +0000',
    '',
    `Body of ${subject}.`,
    '',
  ].join('\r\n');
}

describe('the event stream', () => {
  let service: TestService;
  let alpha: string;
  let beta: string;
  const ALPHA = `alpha@${DOMAIN}`;
  const BETA = `beta@${DOMAIN}`;
  const deliver = async (to: string, subject: string) =>
    expect((await sendRaw(service.smtpPort, 'sender@outside.example', [to], mail(to, subject))).code).toBe(250);
  const makeKey = async (body: Json) => {
    const made = await request(service.url, 'POST', '/v3/api-keys', { key: service.apiKey, body });
    expect(made.status, made.text).toBe(201);
    return (made.body.data as { key: string }).key;
  };
  const subjectOf = (event: EventSourceMessage) =>
    (JSON.parse(event.data) as { data: { object: { subject?: string } } }).data.object.subject ?? '';

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_WORKER_POLL_MS: '100' },
    });
    alpha = await createMailbox(service, ALPHA);
    beta = await createMailbox(service, BETA);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('SSE: message.created for SMTP mail, with the webhook id; resuming gives exactly the missed events', async () => {
    const url = `${service.url}/v3/events/stream?grant_id=${alpha}&trigger_types=message.created`;
    const first = await openSse(url, service.apiKey);
    expect(first.status).toBe(200);
    await deliver(ALPHA, 'Stream one');
    await deliver(BETA, 'Not for this stream');
    const [event] = await eventually(async () => (first.events.length >= 1 ? first.events : undefined));
    const notification = JSON.parse(event!.data) as Json & { data: Json & { object: Json } };
    expect(notification).toMatchObject({
      specversion: '1.0',
      type: 'message.created',
      source: '/nylas/emails/realtime',
      cursor: event!.id,
      data: { grant_id: alpha, object: { subject: 'Stream one', grant_id: alpha } },
    });
    // The body is in the notification, as webhooks carry it.
    expect(String(notification.data.object.body)).toContain('Body of Stream one.');
    // The same id as the outbox's event, which a webhook of this change carries.
    const row = await service.core.deps.db.client.execute({
      sql: 'select id from outbox_events where seq = ?',
      args: [Number(event!.id)],
    });
    expect(row.rows[0]?.id).toBe(notification.id);
    first.close();

    // Missed while disconnected: three messages, in order.
    for (const subject of ['Missed one', 'Missed two', 'Missed three']) await deliver(ALPHA, subject);
    await eventually(async () => {
      const listed = await service.nylas.messages.list({ identifier: alpha, queryParams: { limit: 10 } });
      return listed.data.length >= 4 ? listed : undefined;
    });
    const resumed = await openSse(url, service.apiKey, { 'last-event-id': event!.id! });
    expect(resumed.status).toBe(200);
    await deliver(ALPHA, 'Live again');
    await eventually(async () => (resumed.events.length >= 4 ? resumed.events : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resumed.events.map(subjectOf)).toEqual(['Missed one', 'Missed two', 'Missed three', 'Live again']);
    const cursors = resumed.events.map((one) => Number(one.id));
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    expect(cursors[0]).toBeGreaterThan(Number(event!.id));
    resumed.close();

    // The cursor parameter does the same as Last-Event-ID.
    const again = await openSse(`${url}&cursor=${event!.id}`, service.apiKey);
    await eventually(async () => (again.events.length >= 4 ? again.events : undefined)).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${again.status} ${JSON.stringify(again.events)}`);
    });
    expect(again.events.map(subjectOf)).toEqual(['Missed one', 'Missed two', 'Missed three', 'Live again']);
    again.close();
  });

  it('WebSocket: one notification per text frame; a wrong key is refused before the handshake', async () => {
    const wsUrl = `${service.url.replace(/^http/, 'ws')}/v3/events/stream?trigger_types=message.created`;
    const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${service.apiKey}` } });
    const frames: Json[] = [];
    socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as Json));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    await deliver(BETA, 'Over a socket');
    const [frame] = await eventually(async () => (frames.length >= 1 ? frames : undefined));
    expect(frame).toMatchObject({
      type: 'message.created',
      data: { grant_id: beta, object: { subject: 'Over a socket' } },
    });
    expect(typeof frame!.cursor).toBe('string');
    socket.close();

    const refused = new WebSocket(wsUrl, { headers: { authorization: 'Bearer agp_not_a_key' } });
    const status = await new Promise<number>((resolve) => {
      refused.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      refused.once('open', () => resolve(101));
    });
    expect(status).toBe(401);
  });

  it("a grant-scoped key's stream carries its grant only; another grant is a 404; types follow permissions", async () => {
    const scoped = await makeKey({ name: 'alpha reader', scope: { grant_ids: [alpha] }, permissions: ['mail.read'] });
    const stream = await openSse(`${service.url}/v3/events/stream?trigger_types=message.created`, scoped);
    expect(stream.status).toBe(200);
    await deliver(BETA, 'Beta only');
    await deliver(ALPHA, 'Alpha only');
    await eventually(async () => (stream.events.length >= 1 ? stream.events : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.events.map(subjectOf)).toEqual(['Alpha only']);
    stream.close();

    const outside = await openSse(`${service.url}/v3/events/stream?grant_id=${beta}`, scoped);
    expect(outside.status).toBe(404);
    expect(JSON.parse(outside.body)).toMatchObject({ error: { type: 'not_found_error' } });

    // A key that reads calendars only hears no mail events.
    const calendarOnly = await makeKey({ name: 'calendar', permissions: ['calendar.read'] });
    const calendars = await openSse(`${service.url}/v3/events/stream`, calendarOnly);
    expect(calendars.status).toBe(200);
    await deliver(ALPHA, 'Unseen by calendars');
    const folderOrMail = await new Promise((resolve) => setTimeout(resolve, 600)).then(() =>
      calendars.events.filter((event) =>
        /^(message|folder|thread)\./.test((JSON.parse(event.data) as Json).type as string),
      ),
    );
    expect(folderOrMail).toEqual([]);
    calendars.close();
    const none = await openSse(
      `${service.url}/v3/events/stream`,
      await makeKey({ name: 'sender', permissions: ['mail.send'] }),
    );
    expect(none.status).toBe(403);
    expect(none.body).toMatch(/lacks the permission mail\.read/);
  });

  it('a cursor older than the retention is 410 cursor_expired; one ahead of the newest event a 400', async () => {
    const newest = Number(
      (await service.core.deps.db.client.execute('select max(seq) as seq from outbox_events')).rows[0]!.seq,
    );
    const ahead = await openSse(`${service.url}/v3/events/stream?cursor=${newest + 1000}`, service.apiKey);
    expect(ahead.status).toBe(400);
    expect(ahead.body).toMatch(/ahead of the newest event/);
    // The retention purge took every event but the newest (it always keeps that one).
    await service.core.deps.db.client.execute({ sql: 'delete from outbox_events where seq < ?', args: [newest] });
    const expired = await openSse(`${service.url}/v3/events/stream?cursor=1`, service.apiKey);
    expect(expired.status).toBe(410);
    expect(JSON.parse(expired.body)).toMatchObject({ error: { type: 'cursor_expired' } });
    const current = await openSse(`${service.url}/v3/events/stream?cursor=${newest - 1}`, service.apiKey);
    expect(current.status).toBe(200);
    current.close();
  });
});
