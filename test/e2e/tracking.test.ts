/**
 * Open and click tracking end to end, through the nylas SDK against the real service (a production application):
 * a tracked send carries a pixel and rewritten links (the copy in `sent` and the MIME delivered alike, nothing else
 * changed); loading them answers the GIF and a 302 to the recorded URL, and gives signed `message.opened` /
 * `message.link_clicked` webhooks with the label; repeated opens, HEAD requests, scanners and early hits are
 * recorded but flagged; bad tokens and deleted grants are 404; a flood of 10,000 pixel hits is recorded whole,
 * counted once, while `/v3` still answers; the engagement endpoint reads it all back.
 */
import { createHmac } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { and, eq, sql } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { CLICK_TOKEN_PURPOSE, OPEN_TOKEN_PURPOSE } from '../../src/deliverability/tracked-sends.js';
import { pixelTag } from '../../src/deliverability/tracking-rewrite.js';
import { fixedClock } from '../helpers/clock.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'tracking.agentpost.localhost';
const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const TOKEN = '([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)';

describe('open and click tracking', () => {
  const clock = fixedClock('2026-05-04T09:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let sender: string;
  let webhookSecret: string;
  let applicationId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`, AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' },
      deps: { clock },
    });
    receiver = await startReceiver();
    sender = await createMailbox(service, `agent@${DOMAIN}`);
    applicationId = await service.core.accounts.applications.defaultApplicationId();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.MessageOpened, WebhookTriggers.MessageLinkClicked],
        webhookUrl: receiver.url,
      },
    });
    webhookSecret = webhook.webhookSecret;
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    await sink?.close();
  });

  /** Sends a tracked message; returns its sent copy and the tokens found in the stored body. */
  async function sendTracked(body: string, trackingOptions: Record<string, unknown>, grant = sender) {
    const { data } = await service.nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'reader@example.com' }], subject: 'Tracked', body, trackingOptions },
    });
    const { data: stored } = await service.nylas.messages.find({ identifier: grant, messageId: data.id });
    const pixel = new RegExp(`/t/o/${TOKEN}`).exec(stored.body ?? '')?.[1];
    const links = [...(stored.body ?? '').matchAll(new RegExp(`/t/l/${TOKEN}`, 'g'))].map((match) => match[1]!);
    return { id: data.id, body: stored.body ?? '', pixel, links };
  }

  /** One request to a tracking path (redirects not followed). */
  function hit(path: string, options: { method?: string; userAgent?: string } = {}) {
    return fetch(`${service.url}${path}`, {
      method: options.method ?? 'GET',
      redirect: 'manual',
      headers: { 'user-agent': options.userAgent ?? BROWSER },
    });
  }

  /** The notifications of a type about a message that the receiver got so far. */
  const notificationsOf = (type: string, messageId: string) =>
    receiver.deliveries.filter(
      (delivery) => delivery.json?.type === type && delivery.json.data.object.message_id === messageId,
    );

  /** Waits for the `count`-th notification of a type about a message. */
  function nthNotification(type: string, messageId: string, count: number): Promise<ReceivedDelivery> {
    return eventually(async () => notificationsOf(type, messageId)[count - 1], 10_000);
  }

  /** Outbox events recorded for a message (what would be notified). */
  async function outboxCount(type: string, messageId: string): Promise<number> {
    const rows = await service.core.deps.db.orm
      .select({ id: tables.outboxEvents.id })
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, type), eq(tables.outboxEvents.objectId, messageId)));
    return rows.length;
  }

  async function trackedRow(messageId: string) {
    const [row] = await service.core.deps.db.orm
      .select()
      .from(tables.trackedMessages)
      .where(eq(tables.trackedMessages.messageId, messageId));
    return row!;
  }

  async function eventsOf(messageId: string) {
    const row = await trackedRow(messageId);
    return service.core.deps.db.orm
      .select()
      .from(tables.engagementEvents)
      .where(eq(tables.engagementEvents.messageId, row.id))
      .orderBy(sql`rowid`);
  }

  const engagement = (messageId: string, grant = sender, key = service.apiKey) =>
    request(service.url, 'GET', `/v3/grants/${grant}/messages/${messageId}/engagement`, { key });

  function expectSigned(delivery: ReceivedDelivery): void {
    expect(delivery.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhookSecret).update(delivery.body).digest('hex'),
    );
  }

  it('rewrites the links and adds the pixel, in the copy in sent and in the MIME delivered alike, and changes nothing else', async () => {
    const original =
      '<html><body><p>Hello, read <a class="x" href="https://docs.example.com/start?a=1&amp;b=2">the docs</a>, ' +
      '<a href=\'mailto:help@example.com\'>write</a> or <A HREF="http://shop.example.org/">shop</A>.</p></body></html>';
    const sent = await sendTracked(original, { opens: true, links: true, label: 'spring' });
    expect(sent.pixel).toBeDefined();
    expect(sent.links).toHaveLength(2);
    const trackingUrl = service.config.deliverability.trackingUrl;
    // Only the two http(s) hrefs and the pixel differ from the original.
    let restored = sent.body.replace(pixelTag(`${trackingUrl}/t/o/${sent.pixel}`), '');
    restored = restored
      .replace(`${trackingUrl}/t/l/${sent.links[0]}`, 'https://docs.example.com/start?a=1&amp;b=2')
      .replace(`${trackingUrl}/t/l/${sent.links[1]}`, 'http://shop.example.org/');
    expect(restored).toBe(original);
    // The originals, decoded as a browser reads them, are what the redirects lead to.
    const row = await trackedRow(sent.id);
    const links = await service.core.deps.db.orm
      .select()
      .from(tables.trackingLinks)
      .where(eq(tables.trackingLinks.messageId, row.id))
      .orderBy(tables.trackingLinks.linkIndex);
    expect(links.map((link) => link.url)).toEqual([
      'https://docs.example.com/start?a=1&b=2',
      'http://shop.example.org/',
    ]);
    // The MIME the relay got carries the same body.
    const [delivered] = (await sink.waitFor(1)).filter((message) => message.raw.includes(sent.pixel!));
    expect(delivered).toBeDefined();
    const parsed = await simpleParser(delivered!.raw);
    expect(parsed.html).toBe(sent.body);
    expect(parsed.text ?? '').not.toContain('/t/');
  });

  it('a pixel load gives the GIF and a signed message.opened with the label; a click gives a 302 to the recorded URL and message.link_clicked, in link order', async () => {
    const sent = await sendTracked(
      '<p><a href="https://one.example.com/a">one</a> <a href="https://two.example.com/b?x=1">two</a></p>',
      { opens: true, links: true, label: 'launch' },
    );
    clock.advance(30_000);

    const pixel = await hit(`/t/o/${sent.pixel}?utm=ignored`);
    expect(pixel.status).toBe(200);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    expect(pixel.headers.get('cache-control')).toContain('no-store');
    const gif = Buffer.from(await pixel.arrayBuffer());
    expect(gif.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect(gif.readUInt16LE(6)).toBe(1);
    expect(gif.readUInt16LE(8)).toBe(1);

    const opened = await nthNotification('message.opened', sent.id, 1);
    expectSigned(opened);
    const openedAt = Math.floor(clock.now().getTime() / 1000);
    expect(opened.json).toMatchObject({
      type: 'message.opened',
      source: '/com/nylas/tracking',
      data: { application_id: applicationId, grant_id: sender },
    });
    expect(opened.json.data.object).toEqual({
      object: 'message',
      grant_id: sender,
      message_id: sent.id,
      label: 'launch',
      message_data: { count: 1, timestamp: openedAt },
      recents: [{ ip: expect.stringMatching(/127\.0\.0\.1$/), opened_id: 0, timestamp: openedAt, user_agent: BROWSER }],
      sender_app_id: applicationId,
      timestamp: openedAt,
    });

    // The query string is ignored: only the recorded URL is ever a target.
    const first = await hit(`/t/l/${sent.links[0]}?url=https://evil.example.net/`);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('https://one.example.com/a');
    const clicked = await nthNotification('message.link_clicked', sent.id, 1);
    expectSigned(clicked);
    expect(clicked.json.source).toBe('/com/nylas/tracking');
    expect(clicked.json.data.object).toMatchObject({
      object: 'message',
      grant_id: sender,
      message_id: sent.id,
      label: 'launch',
      link_data: [
        { count: 1, url: 'https://one.example.com/a' },
        { count: 0, url: 'https://two.example.com/b?x=1' },
      ],
      recents: [{ click_id: 0, link_index: '0', user_agent: BROWSER }],
      sender_app_id: applicationId,
    });

    clock.advance(1_000);
    const second = await hit(`/t/l/${sent.links[1]}`, { method: 'GET' });
    expect(second.status).toBe(302);
    expect(second.headers.get('location')).toBe('https://two.example.com/b?x=1');
    const again = await nthNotification('message.link_clicked', sent.id, 2);
    expect(
      again.json.data.object.recents.map((recent: { link_index: string; click_id: number }) => [
        recent.link_index,
        recent.click_id,
      ]),
    ).toEqual([
      ['0', 0],
      ['1', 1],
    ]);
    expect(again.json.data.object.link_data.map((link: { count: number }) => link.count)).toEqual([1, 1]);

    const read = await engagement(sent.id);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({
      object: 'message_engagement',
      message_id: sent.id,
      tracked: true,
      tracking_options: { opens: true, links: true, thread_replies: false, label: 'launch' },
      opens: { count: 1, hits: 1, flagged: 0, first_at: openedAt, last_at: openedAt },
      clicks: { count: 2, hits: 2, flagged: 0 },
      links: [
        { link_index: '0', url: 'https://one.example.com/a', count: 1 },
        { link_index: '1', url: 'https://two.example.com/b?x=1', count: 1 },
      ],
      replies: { count: 0, message_ids: [] },
    });
    expect(read.body.data.delivery_status).toEqual([expect.objectContaining({ email: 'reader@example.com' })]);
  });

  it('opens within a minute of the last counted one count once (flagged repeat); after it, again', async () => {
    const sent = await sendTracked('<p>Hi</p>', { opens: true, label: 'dedupe' });
    clock.advance(20_000);
    expect((await hit(`/t/o/${sent.pixel}`)).status).toBe(200);
    await nthNotification('message.opened', sent.id, 1);
    clock.advance(59_000);
    expect((await hit(`/t/o/${sent.pixel}`)).status).toBe(200);
    await service.core.deliverability.tracking.flush();
    expect((await eventsOf(sent.id)).map((event) => [event.counted, event.flag])).toEqual([
      [true, null],
      [false, 'repeat'],
    ]);
    expect(await outboxCount('message.opened', sent.id)).toBe(1);
    expect((await trackedRow(sent.id)).opensCount).toBe(1);

    // 61 s after the last counted open (the repeat did not move it).
    clock.advance(2_000);
    expect((await hit(`/t/o/${sent.pixel}`)).status).toBe(200);
    const second = await nthNotification('message.opened', sent.id, 2);
    expect(second.json.data.object.message_data.count).toBe(2);
    expect(second.json.data.object.recents.map((recent: { opened_id: number }) => recent.opened_id)).toEqual([0, 1]);
    expect(second.json.data.object.label).toBe('dedupe');
    const read = await engagement(sent.id);
    expect(read.body.data.opens).toMatchObject({ count: 2, hits: 3, flagged: 1 });
  });

  it('HEAD requests, scanner user agents and hits right after the send are recorded, flagged, not counted and not notified', async () => {
    const sent = await sendTracked('<p><a href="https://offer.example.com/">offer</a></p>', {
      opens: true,
      links: true,
    });
    // Within 10 s of the send: a gateway fetching ahead of the reader.
    clock.advance(3_000);
    expect((await hit(`/t/o/${sent.pixel}`)).status).toBe(200);
    clock.advance(60_000);
    const head = await hit(`/t/o/${sent.pixel}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('image/gif');
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    expect(
      (
        await hit(`/t/o/${sent.pixel}`, {
          userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        })
      ).status,
    ).toBe(200);
    expect((await hit(`/t/o/${sent.pixel}`, { userAgent: 'curl/8.5.0' })).status).toBe(200);
    const scanned = await hit(`/t/l/${sent.links[0]}`, { userAgent: 'Mozilla/5.0 (compatible; Barracuda Sentinel)' });
    expect(scanned.status).toBe(302);
    expect(scanned.headers.get('location')).toBe('https://offer.example.com/');
    const headClick = await hit(`/t/l/${sent.links[0]}`, { method: 'HEAD' });
    expect(headClick.status).toBe(302);
    await service.core.deliverability.tracking.flush();

    expect((await eventsOf(sent.id)).map((event) => [event.kind, event.counted, event.flag])).toEqual([
      ['open', false, 'early'],
      ['open', false, 'head'],
      ['open', false, 'scanner'],
      ['open', false, 'scanner'],
      ['click', false, 'scanner'],
      ['click', false, 'head'],
    ]);
    expect(await outboxCount('message.opened', sent.id)).toBe(0);
    expect(await outboxCount('message.link_clicked', sent.id)).toBe(0);
    const row = await trackedRow(sent.id);
    expect([row.opensCount, row.clicksCount, row.lastOpenAt]).toEqual([0, 0, null]);
    const read = await engagement(sent.id);
    expect(read.body.data.opens).toEqual({ count: 0, hits: 4, flagged: 4 });
    expect(read.body.data.clicks).toEqual({ count: 0, hits: 2, flagged: 2 });
  });

  it('forged, altered, truncated, wrong-kind and unknown tokens, and a redirect altered toward another host, are 404 in the Nylas shape', async () => {
    const sent = await sendTracked('<p><a href="https://safe.example.com/">safe</a></p>', { opens: true, links: true });
    clock.advance(30_000);
    const pixel = sent.pixel!;
    const link = sent.links[0]!;
    const signer = await service.core.deliverability.signing.signer();
    const [payload, mac] = link.split('.') as [string, string];
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const trackingId = Buffer.from(payload, 'base64url').toString();
    const cases: [string, string][] = [
      [
        'forged pixel',
        `/t/o/${Buffer.from('someone-else').toString('base64url')}.${Buffer.alloc(16, 7).toString('base64url')}`,
      ],
      ['altered pixel mac', `/t/o/${flip(pixel, pixel.length - 3)}`],
      ['altered pixel payload', `/t/o/${flip(pixel, 2)}`],
      ['truncated pixel', `/t/o/${pixel.slice(0, -4)}`],
      ['pixel without its mac', `/t/o/${pixel.split('.')[0]}`],
      ['pixel token on the link route', `/t/l/${pixel}`],
      ['link token on the pixel route', `/t/o/${link}`],
      ['truncated link', `/t/l/${link.slice(0, -1)}`],
      ['altered link mac', `/t/l/${payload}.${flip(mac, 5)}`],
      ['signed, unknown message', `/t/o/${signer.sign(OPEN_TOKEN_PURPOSE, 'no-such-message')}`],
      ['signed, link index beyond the links', `/t/l/${signer.sign(CLICK_TOKEN_PURPOSE, `${trackingId}.1`)}`],
      [
        'payload pointed at another host, old mac',
        `/t/l/${Buffer.from(`${trackingId}.0@evil.example.net`).toString('base64url')}.${mac}`,
      ],
      [
        'payload replaced by a URL, old mac',
        `/t/l/${Buffer.from('https://evil.example.net/').toString('base64url')}.${mac}`,
      ],
      ['a URL after the token', `/t/l/${link}/https://evil.example.net/`],
      ['garbage', '/t/l/%2e%2e%2f%2e%2e%2fv3'],
    ];
    for (const [name, path] of cases) {
      const response = await hit(path);
      expect(response.status, name).toBe(404);
      expect(response.headers.get('location'), name).toBeNull();
      expect(isErrorEnvelope(await response.json()), name).toBe(true);
    }
    await service.core.deliverability.tracking.flush();
    expect(await eventsOf(sent.id), 'no hit was recorded').toEqual([]);
    // The genuine ones still work.
    expect((await hit(`/t/o/${pixel}`)).status).toBe(200);
    expect((await hit(`/t/l/${link}`)).headers.get('location')).toBe('https://safe.example.com/');
  });

  it("a deleted grant's tracking URLs are 404 at once, though they answered a moment before", async () => {
    const doomed = await createMailbox(service, `doomed@${DOMAIN}`);
    const sent = await sendTracked(
      '<p><a href="https://gone.example.com/">gone</a></p>',
      { opens: true, links: true },
      doomed,
    );
    clock.advance(30_000);
    expect((await hit(`/t/o/${sent.pixel}`)).status).toBe(200);
    expect((await hit(`/t/l/${sent.links[0]}`)).status).toBe(302);
    await service.core.deliverability.tracking.flush();
    await service.nylas.grants.destroy({ grantId: doomed });
    expect(
      (
        await service.core.deps.db.orm
          .select()
          .from(tables.trackedMessages)
          .where(eq(tables.trackedMessages.grantId, doomed))
      ).length,
    ).toBe(0);
    const pixel = await hit(`/t/o/${sent.pixel}`);
    expect(pixel.status).toBe(404);
    expect(isErrorEnvelope(await pixel.json())).toBe(true);
    const link = await hit(`/t/l/${sent.links[0]}`);
    expect(link.status).toBe(404);
    expect(link.headers.get('location')).toBeNull();
  });

  it('a plain-text body is sent as written (no pixel, links left alone), and the send is still tracked', async () => {
    const text = 'See https://plain.example.com/page for details.';
    const { data } = await service.nylas.messages.send({
      identifier: sender,
      requestBody: {
        to: [{ email: 'reader@example.com' }],
        subject: 'Plain',
        body: text,
        isPlaintext: true,
        trackingOptions: { opens: true, links: true, threadReplies: true },
      },
    });
    const raw = await service.core.deps.db.orm
      .select({ body: tables.messages.body })
      .from(tables.messages)
      .where(eq(tables.messages.id, data.id));
    expect(raw[0]!.body).not.toContain('/t/');
    expect(raw[0]!.body).toContain('https://plain.example.com/page');
    const row = await trackedRow(data.id);
    expect(row).toMatchObject({ opens: true, links: true, threadReplies: true });
    const read = await engagement(data.id);
    expect(read.body.data).toMatchObject({ tracked: true, links: [] });
  });

  it('a draft saved with tracking_options and sent later is tracked', async () => {
    const { data: draft } = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: {
        to: [{ email: 'reader@example.com' }],
        subject: 'Draft',
        body: '<p><a href="https://draft.example.com/x">x</a></p>',
        trackingOptions: { links: true, label: 'draft' },
      },
    });
    clock.advance(5_000);
    const { data: message } = await service.nylas.drafts.send({ identifier: sender, draftId: draft.id });
    const { data: stored } = await service.nylas.messages.find({ identifier: sender, messageId: message.id });
    const token = new RegExp(`/t/l/${TOKEN}`).exec(stored.body ?? '')?.[1];
    expect(token).toBeDefined();
    expect(stored.body).not.toContain('/t/o/');
    clock.advance(30_000);
    const response = await hit(`/t/l/${token}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://draft.example.com/x');
    const clicked = await nthNotification('message.link_clicked', message.id, 1);
    expect(clicked.json.data.object).toMatchObject({ label: 'draft', recents: [{ link_index: '0' }] });
  });

  it("engagement: another application's message and another grant's message are 404; an untracked send shows its delivery state only", async () => {
    const sent = await sendTracked('<p>x</p>', { opens: true, threadReplies: true });
    const other = await createMailbox(service, `other@${DOMAIN}`);
    const wrongGrant = await engagement(sent.id, other);
    expect(wrongGrant.status).toBe(404);
    expect(isErrorEnvelope(wrongGrant.body)).toBe(true);
    const { apiKey } = await service.core.accounts.applications.createApplication({
      name: 'Elsewhere',
      plan: 'production',
    });
    expect((await engagement(sent.id, sender, apiKey)).status).toBe(404);
    expect((await engagement('no-such-message')).status).toBe(404);

    // A message sent without tracking: delivery state only.
    const { data: plain } = await service.nylas.messages.send({
      identifier: sender,
      requestBody: { to: [{ email: 'reader@example.com' }], subject: 'Untracked', body: '<p>x</p>' },
    });
    const untracked = await engagement(plain.id);
    expect(untracked.status).toBe(200);
    expect(untracked.body.data).toMatchObject({
      tracked: false,
      opens: { count: 0 },
      links: [],
      delivery_status: [expect.objectContaining({ email: 'reader@example.com' })],
    });
    expect(untracked.body.data.tracking_options).toBeUndefined();
  });

  it('a flood of 10,000 pixel hits is recorded whole and counted once, and /v3 answers meanwhile', async () => {
    const sent = await sendTracked('<p>flood</p>', { opens: true, label: 'flood' });
    clock.advance(30_000);
    const url = new URL(`${service.url}/t/o/${sent.pixel}`);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const call = httpRequest(
          { agent, host: url.hostname, port: url.port, path: url.pathname, headers: { 'user-agent': BROWSER } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        call.on('error', reject);
        call.end();
      });
    const TOTAL = 10_000;
    let next = 0;
    const statuses = new Map<number, number>();
    let during: Awaited<ReturnType<typeof request>> | undefined;
    const worker = async () => {
      while (next < TOTAL) {
        next++;
        const status = await get();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        // Half-way through, an API call on the same service.
        if (next === TOTAL / 2 && during === undefined)
          during = await request(service.url, 'GET', `/v3/grants/${sender}/messages/${sent.id}`, {
            key: service.apiKey,
          });
      }
    };
    try {
      await Promise.all(Array.from({ length: 64 }, worker));
    } finally {
      agent.destroy();
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: TOTAL });
    expect(during?.status).toBe(200);
    expect(during?.body.data.id).toBe(sent.id);

    await service.core.deliverability.tracking.flush();
    const row = await trackedRow(sent.id);
    const [counts] = await service.core.deps.db.client
      // Identical repeats of one write batch are one row with a count (`hits`): every hit is in the sum.
      .execute({
        sql: "select sum(hits) as hits, sum(counted) as counted, sum(case when flag = 'repeat' then hits else 0 end) as repeats, count(*) as rows from engagement_events where message_id = ?",
        args: [row.id],
      })
      .then((result) => result.rows);
    expect([Number(counts!.hits), Number(counts!.counted), Number(counts!.repeats)]).toEqual([TOTAL, 1, TOTAL - 1]);
    expect(Number(counts!.rows)).toBeLessThan(TOTAL);
    expect(row.opensCount).toBe(1);
    expect(await outboxCount('message.opened', sent.id)).toBe(1);
    const opened = await nthNotification('message.opened', sent.id, 1);
    expect(opened.json.data.object).toMatchObject({ label: 'flood', message_data: { count: 1 } });
  }, 60_000);
});
