/**
 * The dashboard's pages of MORE_PAGES (issue 39: the mailbox viewer, webhooks, rules, deliverability, calendars),
 * without the frame: a small harness builds each DashboardRequest around runOperation for a real key on a running
 * service (the `dashboard` face), calls the page's get or post, and reads the HTML it renders.
 *
 * - A hostile message (script, event handlers, remote images, javascript: links, an iframe, CSS loading a remote
 *   background) renders none of it outside the sandboxed frame, and the frame's document (the page's /body route) holds
 *   none of it either; that document's Content-Security-Policy forbids every remote load and allows inline styles; its
 *   attachment downloads through the page's own route.
 * - A webhook made on the page, its failed delivery in the log, and the retry button delivering it.
 * - A rule made on the page and the evaluation that matched it.
 * - The suppression list: added, paged, removed.
 * - A grant-scoped key reaches only its grant: another grant's pages answer 404 and leak nothing of it.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../src/index.js';
import { operations, runOperation } from '../../src/operations/index.js';
import type { DashboardRequest } from '../../server/dashboard/contracts.js';
import type { MoreAnswer } from '../../server/dashboard/pages/kit.js';
import { MORE_PAGES } from '../../server/dashboard/pages/more.js';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'pages.agentpost.localhost';
const CSRF = 'csrf-token-of-the-test-session';
const HOSTILE_SUBJECT = 'Quarterly numbers (hostile)';

/** A message built to make a viewer run script or fetch something remote, in every usual way. */
const HOSTILE_HTML = [
  '<html><head><title>t</title><style>body { background: url(http://evil.example/bg.png) }</style>',
  '<base href="http://evil.example/"><meta http-equiv="refresh" content="0;url=http://evil.example/"></head><body>',
  '<p onclick="alert(1)">Hello <b>there</b></p>',
  '<script>alert(2)</script><SCRIPT src="http://evil.example/x.js"></SCRIPT>',
  '<img src="http://tracker.example/pixel.gif?id=1" onerror="alert(3)" alt="pixel">',
  '<img src=x onerror=alert(4)>',
  '<a href="javascript:alert(5)">click</a> <a href="jav&#x61;script:alert(6)">again</a>',
  '<a href="https://example.com/ok">a fine link</a>',
  '<iframe src="http://evil.example/frame"></iframe><svg onload="alert(7)"><circle r="1"/></svg>',
  '<div style="background-image: url(http://evil.example/div.png)">styled</div>',
  '<form action="http://evil.example/post"><input name="q"><button formaction="http://evil.example/b">go</button></form>',
  '</body></html>',
].join('\n');

function hostileMessage(from: string, to: string): string {
  const boundary = 'b-hostile';
  return [
    `From: Numbers <${from}>`,
    `To: ${to}`,
    `Subject: ${HOSTILE_SUBJECT}`,
    'Message-ID: <hostile-1@hostile.example>',
    'Date: Sun, 29 Nov 2026 12:00:00 +0000',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    HOSTILE_HTML,
    `--${boundary}`,
    'Content-Type: text/plain; name="report.txt"',
    'Content-Disposition: attachment; filename="report.txt"',
    '',
    'the attached report',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

/** What neither the page nor the frame's document may hold of the hostile message. */
function expectNothingActive(markup: string) {
  expect(markup).not.toMatch(/<script/i);
  expect(markup).not.toMatch(/\son[a-z]+\s*=/i);
  expect(markup).not.toMatch(/javascript:/i);
  expect(markup).not.toMatch(/evil\.example|tracker\.example/);
}

/** What the frame's document may not hold besides: frames, forms, a base URL, a refresh, SVG, inputs. */
function expectNoActiveElements(document: string) {
  expect(document).not.toMatch(/<(iframe|form|base|svg|input|button|object|embed)[\s>]/i);
  expect(document).not.toMatch(/http-equiv="refresh"/i);
}

describe('dashboard pages (MORE_PAGES) through a harness', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  const clock = fixedClock('2026-11-29T12:00:00Z');
  let grantA: string;
  let grantB: string;
  let scopedKey: string;
  let webhookId: string;
  let ruleId: string;
  let messageId: string;

  /** Opens `path` (a page's route) as `key`: GET, or POST when `form` is given. */
  async function open(
    key: string,
    path: string,
    params: Record<string, string> = {},
    query = '',
    form?: Record<string, string>,
  ): Promise<{ answer: MoreAnswer; html: string }> {
    const page = MORE_PAGES.find((candidate) => candidate.path === path);
    if (!page) throw new Error(`no page ${path}`);
    const principal = await service.core.accounts.applications.authenticateApiKey(key);
    const request: DashboardRequest = {
      run: (name, input) => {
        const operation = operations.find((candidate) => candidate.name === name);
        if (!operation) throw new Error(`no operation ${name}`);
        return runOperation(operation, service.core, input, { principal, face: 'dashboard' });
      },
      base: '/dashboard',
      params,
      query: new URLSearchParams(query),
      form,
      csrf: CSRF,
      now: () => Math.floor(service.core.deps.clock.now().getTime() / 1000),
      key: {
        id: principal.key?.id ?? 'local',
        name: principal.key?.name ?? 'local',
        permissions: [...(principal.permissions ?? PERMISSIONS)],
      },
    };
    const answer = (form ? await page.post!(request) : await page.get(request)) as MoreAnswer;
    return { answer, html: 'body' in answer ? String(await answer.body) : '' };
  }
  /** Runs an operation as the application's key; answers what it answers, untyped, as JSON over /v3 would be. */
  async function run(name: string, input: Record<string, unknown>): Promise<any> {
    const principal = await service.core.accounts.applications.authenticateApiKey(service.apiKey);
    const operation = operations.find((candidate) => candidate.name === name)!;
    return runOperation(operation, service.core, input, { principal });
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    service = await startTestService({
      deps: { clock },
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' },
    });
    grantA = await createMailbox(service, `agent@${DOMAIN}`);
    grantB = await createMailbox(service, `other@${DOMAIN}`);
    const key = await run('create_api_key', {
      name: 'only-b',
      scope: { grant_ids: [grantB] },
      permissions: ['mail.read', 'calendar.read'],
    });
    scopedKey = key.key as string;
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('creates a webhook from its form, the secret shown once on the answer page', async () => {
    // Deliveries fail until the test lets them through (the challenge still answers).
    receiver.respond = () => 500;
    const { answer, html } = await open(service.apiKey, '/webhooks', {}, '', {
      webhook_url: receiver.url,
      trigger_types: 'message.created',
      description: 'from the dashboard',
    });
    expect('title' in answer && answer.title).toBe('Webhook created');
    expect(html).toMatch(/whsec_/);
    const listed = await open(service.apiKey, '/webhooks');
    expect(listed.html).toContain(receiver.url);
    expect(listed.html).toContain('from the dashboard');
    expect(listed.html).toContain(`name="_csrf" value="${CSRF}"`);
    webhookId = (await run('list_webhooks', {})).data[0].id;
  });

  it('creates a rule from its form, listed with what it does', async () => {
    const { answer } = await open(service.apiKey, '/rules', {}, '', {
      name: 'Hostile senders read',
      trigger: 'inbound',
      field: 'from.domain',
      operator: 'is',
      value: 'hostile.example',
      action: 'mark_as_read',
      priority: '5',
    });
    expect(answer).toEqual({ redirect: '/dashboard/rules', notice: 'Rule created.' });
    const { html } = await open(service.apiKey, '/rules');
    expect(html).toContain('Hostile senders read');
    expect(html).toContain('from.domain is hostile.example → mark_as_read');
    ruleId = (await run('list_rules', {})).data[0].id;
    const workspaces = (await run('list_workspaces', {})).data as { workspace_id: string }[];
    for (const { workspace_id } of workspaces) await run('update_workspace', { workspace_id, rule_ids: [ruleId] });
  });

  it('shows a hostile message with no script, handler or remote URL, in a sandboxed frame that loads nothing', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'numbers@hostile.example',
      [`agent@${DOMAIN}`],
      hostileMessage('numbers@hostile.example', `agent@${DOMAIN}`),
    );
    expect(reply.code).toBe(250);
    messageId = (await run('list_messages', { grant_id: grantA })).data[0].id;

    const mailbox = await open(service.apiKey, '/mail/:grant_id', { grant_id: grantA });
    expect(mailbox.html).toContain(HOSTILE_SUBJECT);
    const { html } = await open(service.apiKey, '/mail/:grant_id/messages/:message_id', {
      grant_id: grantA,
      message_id: messageId,
    });
    expect(html).toContain('Trust verdicts');
    expect(html).toMatch(/<iframe[^>]*\ssandbox=""/);
    // The frame's document is the page's own /body route, answered under its own policy (not a srcdoc, which would
    // inherit the dashboard's policy and lose the message's inline styles).
    expect(html).not.toContain('srcdoc');
    const src = /<iframe[^>]*\ssrc="([^"]*)"/.exec(html)?.[1];
    expect(src).toBe(`/dashboard/mail/${grantA}/messages/${messageId}/body`);
    const framed = await open(service.apiKey, '/mail/:grant_id/messages/:message_id/body', {
      grant_id: grantA,
      message_id: messageId,
    });
    const srcdoc = framed.answer.frameDocument!.html;
    expectNothingActive(html);
    expectNothingActive(srcdoc);
    expectNoActiveElements(srcdoc);
    // Outside the frame, the only frame is the sandboxed one.
    expect(html.match(/<iframe/g)).toHaveLength(1);
    // The frame's document is answered under a policy that forbids every remote load and all script (and says so
    // again in its head).
    const csp = framed.answer.frameDocument!.csp;
    expect(srcdoc.indexOf('Content-Security-Policy')).toBeLessThan(srcdoc.indexOf('<body>'));
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src data:');
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).not.toMatch(/script-src|https?:|\*/);
    // What is harmless stays: the text, the markup, a plain link.
    expect(srcdoc).toContain('Hello <b>there</b>');
    expect(srcdoc).toContain('href="https://example.com/ok"');
    expect(html).toMatch(/2 remote image\(s\) blocked/);

    // The attachment downloads through the page's own route, as the key.
    const attachment = (await run('get_message', { grant_id: grantA, message_id: messageId })).attachments[0];
    const download = await open(service.apiKey, '/mail/:grant_id/messages/:message_id/attachments/:attachment_id', {
      grant_id: grantA,
      message_id: messageId,
      attachment_id: attachment.id,
    });
    expect(download.answer.download?.filename).toBe('report.txt');
    expect(Buffer.from(download.answer.download!.bytes).toString('utf8')).toBe('the attached report');
    const headers = await open(service.apiKey, '/mail/:grant_id/messages/:message_id/raw-headers', {
      grant_id: grantA,
      message_id: messageId,
    });
    expect(headers.html).toContain(`Subject: ${HOSTILE_SUBJECT}`);
    expect(headers.html).not.toContain('the attached report');
  });

  it("lists the webhook's failed delivery, and its retry button delivers it", async () => {
    await receiver.waitForDeliveries(1);
    const failing = async () => {
      for (let tries = 0; tries < 100; tries++) {
        const page = await run('list_webhook_deliveries', { webhook_id: webhookId });
        if (page.data[0]?.status === 'retrying') return page.data[0];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the delivery never failed');
    };
    const delivery = await failing();
    const before = await open(service.apiKey, '/webhooks/:webhook_id', { webhook_id: webhookId });
    expect(before.html).toContain('message.created');
    expect(before.html).toContain('retrying');
    expect(before.html).toContain('HTTP 500');
    expect(before.html).toContain(`name="delivery_id" value="${delivery.id}"`);

    receiver.respond = () => 200;
    const retried = await open(service.apiKey, '/webhooks/:webhook_id', { webhook_id: webhookId }, '', {
      delivery_id: delivery.id,
    });
    expect(retried.answer).toEqual({
      redirect: `/dashboard/webhooks/${webhookId}`,
      notice: 'Delivery retried: it is due now.',
    });
    const deliveries = await receiver.waitForDeliveries(2);
    expect(deliveries[1]!.json.type).toBe('message.created');
    expect(deliveries[1]!.json.id).toBe(deliveries[0]!.json.id);
    for (let tries = 0; tries < 100; tries++) {
      if ((await run('list_webhook_deliveries', { webhook_id: webhookId })).data.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = await open(service.apiKey, '/webhooks/:webhook_id', { webhook_id: webhookId });
    expect(after.html).toContain('Nothing queued');
  });

  it('shows the evaluation that matched the rule', async () => {
    const { html } = await open(service.apiKey, '/rules/:rule_id', { rule_id: ruleId }, `grant_id=${grantA}`);
    expect(html).toContain('Evaluations that matched this rule');
    expect(html).toContain('numbers@hostile.example');
    expect(html).toContain('marked_as_read');
    expect(html).toMatch(/<tr class="matched">/);
  });

  it('adds, pages and removes suppressed addresses, and charts the domain', async () => {
    const added = await open(service.apiKey, '/deliverability', {}, '', { action: 'add', email: 'gone@example.com' });
    expect(added.answer).toEqual({ redirect: '/dashboard/deliverability', notice: 'gone@example.com suppressed.' });
    for (let index = 0; index < 50; index++) await run('add_suppression', { email: `bulk${index}@example.com` });
    const first = await open(service.apiKey, '/deliverability');
    expect(first.html).toMatch(/<svg[^>]*role="img"/);
    expect(first.html).toContain(DOMAIN);
    const next = /href="([^"]*suppressions_page=[^"]*)" rel="next"/.exec(first.html)?.[1];
    expect(next).toBeDefined();
    const query = new URL(next!.replace(/&amp;/g, '&'), 'http://dashboard').search;
    const second = await open(service.apiKey, '/deliverability', {}, query);
    // Newest first: the first address added is on the second page.
    expect(first.html).not.toContain('gone@example.com');
    expect(second.html).toContain('gone@example.com');
    expect(second.html).toContain('name="email" value="gone@example.com"');

    const removed = await open(service.apiKey, '/deliverability', {}, '', {
      action: 'remove',
      email: 'gone@example.com',
    });
    expect(removed.answer).toMatchObject({ redirect: '/dashboard/deliverability' });
    expect((await run('list_suppressions', { email: 'gone@example.com' })).data).toEqual([]);
    const again = await open(service.apiKey, '/deliverability', {}, query);
    expect(again.html).not.toContain('gone@example.com');
  });

  it('shows a calendar’s events in a range of days', async () => {
    const calendar = (await run('list_calendars', { grant_id: grantB })).data[0];
    const start = Date.parse('2026-12-02T15:00:00Z') / 1000;
    await run('create_event', {
      grant_id: grantB,
      calendar_id: calendar.id,
      title: 'Planning <b>review</b>',
      when: { start_time: start, end_time: start + 3600 },
    });
    const calendars = await open(scopedKey, '/calendars/:grant_id', { grant_id: grantB });
    expect(calendars.html).toContain(calendar.name);
    const { html } = await open(
      scopedKey,
      '/calendars/:grant_id/:calendar_id',
      { grant_id: grantB, calendar_id: calendar.id },
      'from=2026-12-01&to=2026-12-03',
    );
    expect(html).toContain('Planning &lt;b&gt;review&lt;/b&gt;');
    expect(html).toContain('<time datetime="2026-12-02T15:00:00.000Z">');
    const outside = await open(
      scopedKey,
      '/calendars/:grant_id/:calendar_id',
      { grant_id: grantB, calendar_id: calendar.id },
      'from=2026-12-03&to=2026-12-05',
    );
    expect(outside.html).toContain('No events in this range.');
  });

  it("a grant-scoped key sees only its grant: the other grant's pages answer 404 and show nothing of it", async () => {
    const list = await open(scopedKey, '/mail');
    expect(list.html).toContain(`other@${DOMAIN}`);
    expect(list.html).not.toContain(`agent@${DOMAIN}`);
    const tries: [string, Record<string, string>][] = [
      ['/mail/:grant_id', { grant_id: grantA }],
      ['/mail/:grant_id/messages/:message_id', { grant_id: grantA, message_id: messageId }],
      ['/mail/:grant_id/messages/:message_id', { grant_id: grantB, message_id: messageId }],
      ['/mail/:grant_id/messages/:message_id/raw-headers', { grant_id: grantA, message_id: messageId }],
      ['/calendars/:grant_id', { grant_id: grantA }],
      ['/rules/:rule_id', { rule_id: ruleId }],
    ];
    for (const [path, params] of tries) {
      const { answer, html } = await open(scopedKey, path, params);
      expect(answer.status, path).toBeGreaterThanOrEqual(403);
      expect(answer.status, path).toBeLessThanOrEqual(404);
      expect(html).not.toContain(HOSTILE_SUBJECT);
      expect(html).not.toContain('numbers@hostile.example');
    }
    expect((await open(scopedKey, '/mail/:grant_id', { grant_id: grantA })).answer.status).toBe(404);
    // What the key may not do at all (application objects, without the permission) is a 403 naming it.
    const webhooks = await open(scopedKey, '/webhooks');
    expect(webhooks.answer.status).toBe(403);
    expect(webhooks.html).not.toContain(receiver.url);
    const retry = await open(scopedKey, '/webhooks/:webhook_id', { webhook_id: webhookId }, '', { delivery_id: 'x' });
    expect(retry.answer.status).toBe(403);
    expect((await open(scopedKey, '/deliverability')).answer.status).toBe(403);
  });
});

describe('the viewer sanitizer, by itself', () => {
  const cases: [string, string, string][] = [
    ['a split script tag', '<scr<script>ipt>alert(1)</script>', 'ipt&gt;alert(1)'],
    ['an upper-case handler without quotes', '<IMG SRC=x ONERROR=alert(1)>', '<img>'],
    ['slashes between attributes', '<img/src="x"/onerror="alert(1)">', '<img>'],
    [
      'an entity-encoded scheme',
      '<a href="&#106;avascript:alert(1)">x</a>',
      '<a target="_blank" rel="noopener noreferrer">x</a>',
    ],
    [
      'a scheme behind spaces and a tab',
      '<a href=" java\tscript:alert(1)">x</a>',
      '<a target="_blank" rel="noopener noreferrer">x</a>',
    ],
    ['a way out of style', '<style>p{}</style><script>alert(1)</script>', '<style>p{}</style>'],
    ['an escaped way out of style', '<style>p{content:"\\3c/style>"}</style>', '<style>p{content:"3c/style>"}</style>'],
    ['an unclosed quote', '<p title="x>hello <script>alert(1)</script>', '<p>'],
    ['an unclosed script', 'before<script>alert(1)', 'before'],
    ['a comment hiding a tag', '<!-- <script>x</script> -->after', 'after'],
    ['text that looks like markup', '1 < 2 > 0', '1 &lt; 2 &gt; 0'],
    ['a data image kept', '<img src="data:image/png;base64,AAAA">', '<img src="data:image/png;base64,AAAA">'],
    ['an svg data image refused', '<img src="data:image/svg+xml;base64,AAAA">', '<img>'],
    ['a quoted attribute value re-escaped', "<p title='a\"b<c'>t</p>", '<p title="a&quot;b&lt;c">t</p>'],
  ];
  it.each(cases)('%s', async (_name, input, expected) => {
    const { sanitizeHtml } = await import('../../server/dashboard/pages/sanitize-html.js');
    expect(sanitizeHtml(input).html).toBe(expected);
  });

  it('reads a large hostile body in one pass (nested unclosed tags and quotes do not make it rescan)', async () => {
    const { sanitizeHtml, MAX_HTML_CHARS } = await import('../../server/dashboard/pages/sanitize-html.js');
    const body = '<a href="'.repeat(200_000) + '<p onclick="x">'.repeat(50_000);
    const out = sanitizeHtml(body);
    // However the quotes pair up across the repeats, no handler survives and the paragraphs come out bare.
    expect(out.html.includes('onclick')).toBe(false);
    expect(out.removed).toBeGreaterThan(0);
    expect(/^(<a target="_blank" rel="noopener noreferrer">)?(<p>)+$/.test(out.html)).toBe(true);
    const long = sanitizeHtml('x'.repeat(MAX_HTML_CHARS + 10));
    expect(long.truncated).toBe(true);
    expect(long.html).toHaveLength(MAX_HTML_CHARS);
  });
});

/** Debian's Chromium, which `.ci/run` installs; a developer machine without it skips the browser check. */
const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('the message frame in a real browser (skipped: no /usr/bin/chromium)', () => {
  let server: Server;
  let base: string;
  const hits: string[] = [];

  beforeAll(async () => {
    // Every URL of the hostile body points here, so any fetch the browser makes is seen, whatever its kind.
    server = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/gif' });
      response.end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A body that tries every way to fetch or run something. */
  const hostile = () =>
    [
      `<style>@import url(${base}/import.css); body { background: url(${base}/style-bg.png) }</style>`,
      `<link rel="stylesheet" href="${base}/link.css"><base href="${base}/base/">`,
      `<img src="${base}/img.gif" onerror="fetch('${base}/onerror')">`,
      `<img srcset="${base}/srcset.gif 1x"><picture><source srcset="${base}/source.gif"></picture>`,
      `<div style="background-image:url(${base}/inline-bg.png)">styled</div>`,
      `<table background="${base}/table-bg.gif"><tr><td>cell</td></tr></table>`,
      `<script>fetch('${base}/script')</script><script src="${base}/script.js"></script>`,
      `<iframe src="${base}/iframe"></iframe><object data="${base}/object"></object><embed src="${base}/embed">`,
      `<video poster="${base}/poster.gif"></video><audio src="${base}/audio.mp3" autoplay></audio>`,
      `<svg><image href="${base}/svg-image.png"/></svg><input type="image" src="${base}/input.gif">`,
      `<meta http-equiv="refresh" content="0;url=${base}/refresh">`,
      `<body onload="fetch('${base}/onload')"><p>Visible text</p><p style="width: 123px; height: 45px">Styled</p></body>`,
    ].join('\n');

  it('fetches nothing the message names and runs none of its script; unsanitized, the same body would', async () => {
    const { chromium } = await import('playwright-core');
    const { bodyFrame } = await import('../../server/dashboard/pages/message.js');
    const { sanitizeHtml, viewerDocument, VIEWER_CSP } = await import('../../server/dashboard/pages/sanitize-html.js');
    const { CONTENT_SECURITY_POLICY, framePolicy } = await import('../../server/dashboard/session.js');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      // The control: the same body in a frame with the sandbox alone (no sanitizer, no policy) does fetch.
      const raw = hostile().replace(/&/g, '&amp;').replace(/"/g, '&quot;');
      await page.setContent(`<iframe sandbox="" srcdoc="${raw}"></iframe>`);
      expect(hits).toContain('/img.gif');
      hits.length = 0;

      // The viewer's frame, on a page of its own (the control's frame may still be following its meta refresh):
      // setContent resolves at the load event, which waits for the frame and its resources.
      const viewer = await browser.newPage();
      // The page and the frame's document answered under the policies the dashboard answers them with.
      await viewer.route('http://dashboard.test/**', async (route) => {
        const framed = route.request().url().endsWith('/body');
        await route.fulfill({
          contentType: 'text/html; charset=utf-8',
          headers: { 'content-security-policy': framed ? framePolicy(VIEWER_CSP) : CONTENT_SECURITY_POLICY },
          body: framed
            ? viewerDocument(sanitizeHtml(hostile()).html)
            : `<!doctype html><main>${String(await bodyFrame(hostile(), '/body'))}</main>`,
        });
      });
      await viewer.goto('http://dashboard.test/message', { waitUntil: 'load' });
      const frame = viewer.frameLocator('iframe');
      expect(await frame.locator('body').textContent()).toContain('Visible text');
      // The message's inline style applies (read as the element's box: a sandboxed frame runs no evaluated script).
      const box = await frame.locator('p[style]').boundingBox();
      expect([box?.width, box?.height]).toEqual([123, 45]);
      expect(hits).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
