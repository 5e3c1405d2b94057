/**
 * The dashboard walked as a person would (issue 39, "How it is checked"), with Debian's Chromium driven by
 * playwright-core: sign in with a key, register a trial and a custom domain, create two mailboxes, create a webhook
 * (its loopback endpoint refuses the first attempts) and a rule applied in the default workspace, send a message from
 * one mailbox to the other and read it in the viewer with its trust verdicts, see the webhook's failed delivery and
 * retry it, see the rule's evaluation, visit every other page (calendars, deliverability, a list, approvals, the
 * access log), make a second key, sign in with it, revoke it and be signed out. On every page axe finds no serious or
 * critical accessibility violation; a screenshot of each page is kept in test-artifacts/dashboard/ (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

/** Debian's Chromium (`.ci/run` installs the `chromium` package). */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'dashboard');
const WALKER = 'agent@walk.agentpost.localhost';
const READER = 'reader@walk.agentpost.localhost';
const SUBJECT = 'Hello from the walk';
/** Waiting for what the service does after an answer (local delivery, a webhook's attempts): polled, bounded. */
const POLL = { timeout: 30_000, intervals: [250] };

describe.skipIf(!existsSync(CHROMIUM))('the dashboard walked in Chromium (needs /usr/bin/chromium)', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let receiver: WebhookReceiver;
  const pagesChecked: string[] = [];

  /** Checks the page with axe (serious and critical only) and keeps a screenshot named `name`. */
  async function inspect(name: string): Promise<void> {
    // Not inside frames: the only frame is the viewer's sandboxed message body (the sender's markup; no script may
    // run in it, so axe cannot either). On that page axe at times never answered while the frame was part of its
    // context, so there the frame is left out and its title (what axe's frame-title asks) is checked here.
    const frames = await page.locator('iframe').count();
    if (frames > 0) expect(await page.locator('iframe').getAttribute('title')).toBeTruthy();
    const builder = new AxeBuilder({ page }).options({ iframes: false });
    const results = await (frames > 0 ? builder.exclude('iframe') : builder).analyze();
    const grave = results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
      );
    expect(grave, `${name}: ${page.url()}`).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    pagesChecked.push(name);
  }

  /** Follows an entry of the dashboard's navigation. */
  const navigate = (label: string) =>
    page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: label, exact: true }).click();

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    // The webhook's endpoint is this test's loopback receiver: private addresses allowed (tests only).
    service = await startTestService({
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    // A viewer in New York: the dashboard's script tells the server, which counts the overview's day there.
    page = await (await browser.newContext({ timezoneId: 'America/New_York' })).newPage();
    // The revoke button asks first (the dashboard's script): the person agrees.
    page.on('dialog', (dialog) => void dialog.accept());
    // A step that does not happen fails at that step, well within the test's own limit.
    page.setDefaultTimeout(20_000);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await receiver?.close();
  });

  it('signs in, adds a domain and mailboxes, sends and reads a message, sees a webhook delivery and a rule evaluation, and is signed out by revoking its key', async () => {
    const dashboard = `${service.url}/dashboard`;
    await page.goto(`${dashboard}/`);
    expect(page.url()).toBe(`${dashboard}/sign-in`);
    await inspect('sign-in');
    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard}/`);
    expect(await page.textContent('h1')).toBe('Overview');
    expect(await page.textContent('main')).toContain('the day in America/New_York');
    await inspect('overview');

    // A trial domain: usable at once.
    await navigate('Domains');
    await page.getByLabel('Domain', { exact: true }).fill('walk.agentpost.localhost');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(/\/dashboard\/domains\/[^/]+$/);
    expect(await page.textContent('.notice')).toContain('Registered walk.agentpost.localhost');
    await inspect('domain-trial');
    // A custom domain: the DNS records to publish, with copy buttons and verify buttons.
    await page.goto(`${dashboard}/domains`);
    await page.getByLabel('Domain', { exact: true }).fill('mail.walk-example.test');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(/\/dashboard\/domains\/[^/]+$/);
    expect(await page.locator('table td').filter({ hasText: 'ownership' }).count()).toBeGreaterThan(0);
    expect(await page.locator('button.copy:visible').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Verify ownership' }).click();
    await page.waitForLoadState();
    expect(await page.locator('[role=alert], .notice').first().textContent()).toContain('ownership');
    await inspect('domain-custom');
    await page.goto(`${dashboard}/domains`);
    await inspect('domains');

    // A mailbox.
    await navigate('Accounts');
    await page.getByLabel('Address (on a registered domain)').fill('agent@walk.agentpost.localhost');
    await page.getByLabel('Display name').fill('Walking agent');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(`${dashboard}/accounts`);
    expect(await page.textContent('.notice')).toContain('Created agent@walk.agentpost.localhost');
    expect(await page.textContent('table')).toContain('agent@walk.agentpost.localhost');
    await inspect('accounts');
    // A second mailbox, to send to.
    await page.getByLabel('Address (on a registered domain)').fill(READER);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(`${dashboard}/accounts`);
    expect(await page.textContent('.notice')).toContain(`Created ${READER}`);

    // A webhook on message.created; its endpoint answers 500 until the person has seen the failure.
    receiver.respond = () => 500;
    await navigate('Webhooks');
    await inspect('webhooks');
    await page.getByLabel('Endpoint URL (https; it must answer the challenge)').fill(receiver.url);
    await page.getByLabel('Description').fill('The walk');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(`${dashboard}/webhooks`);
    expect(await page.textContent('h1')).toBe('Webhook created');
    expect(await page.textContent('code.secret')).toBeTruthy();
    expect(receiver.challenges).toHaveLength(1);
    await inspect('webhook-created');
    await page.getByRole('link', { name: 'Open the webhook' }).click();
    await page.waitForURL(/\/dashboard\/webhooks\/[^/]+$/);
    const webhookUrl = page.url();
    expect(await page.textContent('main')).toContain('Nothing queued');
    await inspect('webhook');

    // A rule that stars the walker's mail, applied in the default workspace (every mailbox here).
    await navigate('Rules');
    await inspect('rules');
    await page.getByLabel('Name', { exact: true }).fill('Star the walker');
    await page.getByLabel('Condition field').selectOption('from.address');
    await page.getByLabel('Operator').selectOption('is');
    await page.getByLabel(/^Value/).fill(WALKER);
    await page.getByLabel('Action').selectOption('mark_as_starred');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(`${dashboard}/rules`);
    expect(await page.textContent('.notice')).toContain('Rule created and applied.');
    const ruleRow = page.locator('tr').filter({ hasText: 'Star the walker' });
    expect(await ruleRow.textContent()).toContain('Default');

    // The walker's mailbox sends a test message to the reader's.
    await navigate('Mail');
    await inspect('mail');
    await page.getByRole('link', { name: WALKER }).click();
    await page.waitForURL(/\/dashboard\/mail\/[^/]+$/);
    const walkerMailbox = page.url();
    await inspect('mailbox');
    await page.getByLabel('To', { exact: true }).fill(READER);
    await page.getByLabel('Subject').fill(SUBJECT);
    await page.getByLabel('Message (plain text)').fill('Hello, reader: this came through the dashboard.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForLoadState();
    expect(await page.textContent('.notice')).toContain(`Sent to ${READER}`);

    // The reader's mailbox has it (delivered locally): the thread, the message, its trust verdicts, its headers.
    await navigate('Mail');
    await page.getByRole('link', { name: READER }).click();
    await page.waitForURL(/\/dashboard\/mail\/[^/]+$/);
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole('link', { name: SUBJECT }).count();
      }, POLL)
      .toBe(1);
    await inspect('mailbox-received');
    await page.getByRole('link', { name: SUBJECT }).click();
    await page.waitForURL(/\/threads\/[^/]+$/);
    await inspect('thread');
    await page.getByRole('link', { name: SUBJECT }).click();
    await page.waitForURL(/\/messages\/[^/]+$/);
    expect(await page.textContent('h1')).toBe(SUBJECT);

    expect(await page.textContent('main')).toContain(WALKER);
    const verdicts = page.getByRole('table', { name: 'Trust verdicts' });
    for (const check of ['SPF', 'DKIM', 'DMARC', 'Lookalike domain', 'Injection score'])
      expect(await verdicts.getByRole('rowheader', { name: check }).count(), check).toBe(1);
    // The body, in the sandboxed frame whose document the dashboard serves under its own policy.
    expect(await page.frameLocator('iframe.message-body').locator('body').textContent()).toContain(
      'this came through the dashboard',
    );
    await inspect('message');
    await page.getByRole('link', { name: /raw header/i }).click();
    await page.waitForURL(/\/raw-headers$/);
    expect(await page.textContent('main')).toContain(`Subject: ${SUBJECT}`);
    await inspect('raw-headers');

    // The webhook's deliveries failed (500) and are retried; once each has failed twice (the next automatic attempt
    // is minutes away), the endpoint recovers and the person retries them now: delivered, they leave the log.
    await page.goto(webhookUrl);
    const deliveries = page.getByRole('table', { name: 'Deliveries' }).locator('tbody tr');
    await expect
      .poll(async () => {
        await page.reload();
        const rows = await deliveries.evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
        );
        return (
          rows.length > 0 &&
          rows.every(
            ([, , state, attempts, error]) => state === 'retrying' && Number(attempts) >= 2 && error === 'HTTP 500',
          )
        );
      }, POLL)
      .toBe(true);
    await inspect('webhook-retrying');
    receiver.respond = () => 200;
    const failedAttempts = receiver.deliveries.length;
    await page.getByRole('button', { name: 'Retry now' }).first().click();
    await page.waitForLoadState();
    expect(await page.textContent('.notice')).toContain('Delivery retried: it is due now.');
    // A retry makes its mailbox's chain due; a delivery of another mailbox still waiting is retried in turn (one that
    // left the log meanwhile says so in the notice).
    await expect
      .poll(async () => {
        await page.reload();
        const retry = page.getByRole('button', { name: 'Retry now' });
        if ((await retry.count()) > 0) {
          await retry.first().click();
          await page.waitForLoadState();
          expect(await page.textContent('.notice')).toMatch(/Delivery retried|Not done: .* was delivered since/);
        }
        return page.textContent('main');
      }, POLL)
      .toContain('Nothing queued: every notification was delivered.');
    expect(receiver.deliveries.length).toBeGreaterThan(failedAttempts);
    expect(receiver.deliveries.at(-1)!.json.type).toBe('message.created');
    await inspect('webhook-delivered');

    // The rule's evaluation in the reader's mailbox: it matched and starred the message.
    await navigate('Rules');
    await page.getByRole('link', { name: 'Star the walker' }).click();
    await page.waitForURL(/\/dashboard\/rules\/[^/]+$/);
    await page.getByLabel('Mailbox').selectOption({ label: READER });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForLoadState();
    const evaluation = page.getByRole('table', { name: 'Evaluations that matched this rule' }).locator('tbody tr');
    // One evaluation per stage that ran the rule (at RCPT TO and at ingest), each from the walker and matched.
    expect(await evaluation.count()).toBeGreaterThan(0);
    for (const row of await evaluation.allTextContents()) {
      expect(row).toContain(WALKER);
      expect(row).toContain('matched');
    }
    await inspect('rule');

    // A list (made over /v3, as an agent's operator would script it) and its page.
    const list = await request(service.url, 'POST', '/v3/lists', {
      key: service.apiKey,
      body: { name: 'Partners', type: 'domain' },
    });
    const listId = (list.body.data as { id: string }).id;
    await request(service.url, 'POST', `/v3/lists/${listId}/items`, {
      key: service.apiKey,
      body: { items: ['partner.example'] },
    });
    await page.goto(`${dashboard}/rules`);
    await page.getByRole('link', { name: 'Partners' }).click();
    await page.waitForURL(/\/dashboard\/lists\/[^/]+$/);
    expect(await page.textContent('main')).toContain('partner.example');
    await inspect('list');

    // The overview counts the message: one in (the reader's), one out (the walker's).
    await navigate('Overview');
    expect(await page.textContent('main')).toContain('1 in · 1 out');

    // Calendars: the mailboxes, the walker's calendars, a calendar's days.
    await navigate('Calendars');
    await inspect('calendars');
    await page.getByRole('link', { name: WALKER }).click();
    await page.waitForURL(/\/dashboard\/calendars\/[^/]+$/);
    await inspect('calendar-list');
    await page.locator('main table a').first().click();
    await page.waitForURL(/\/dashboard\/calendars\/[^/]+\/[^/]+$/);
    await inspect('calendar-events');

    await navigate('Deliverability');
    await inspect('deliverability');

    // An agent's send held for approval (its mailbox is gated): the person reads it as it will leave and approves it.
    const gated = decodeURIComponent(walkerMailbox.split('/').at(-1)!);
    const gating = await request(service.url, 'PATCH', `/v3/grants/${gated}`, {
      key: service.apiKey,
      body: { oversight_mode: 'gated_all' },
    });
    expect(gating.status).toBe(200);
    const agentKey = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'agent' },
    });
    const held = await request(service.url, 'POST', `/v3/grants/${gated}/messages/send`, {
      key: (agentKey.body.data as { key: string }).key,
      body: { to: [{ email: READER }], subject: 'Held for a person', body: 'Approve me.', is_plaintext: true },
    });
    expect(held.status).toBe(202);
    await navigate('Approvals');
    await inspect('approvals');
    await page.getByRole('link', { name: 'Held for a person' }).click();
    await page.waitForURL(/\/dashboard\/approvals\/[^/]+$/);
    expect(await page.textContent('main')).toContain('Approve me.');
    await inspect('approval');
    await page.getByRole('button', { name: 'Approve and send' }).click();
    await page.waitForLoadState();
    expect(await page.textContent('main')).toMatch(/approved|sent/);
    await navigate('Access log');
    expect(await page.textContent('table')).toContain('approve_approval');
    await inspect('access-log');

    // A second key, shown once.
    await navigate('Keys');
    await inspect('keys');
    await page.getByLabel('Name', { exact: true }).fill('walker');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('.copyable code').textContent())!;
    expect(secret).toMatch(/^agp_/);
    await inspect('key-created');

    // Signed in with it, the person revokes it, and the next page signs them out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${dashboard}/sign-in`);
    expect(await page.textContent('.notice')).toContain('Signed out.');
    await page.getByLabel('API key').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard}/`);
    await page.goto(`${dashboard}/keys`);
    await page.getByRole('button', { name: 'Revoke walker' }).click();
    await page.waitForURL(`${dashboard}/sign-in`);
    expect(await page.textContent('.notice')).toContain('sign in again');
    await inspect('signed-out');
    expect(pagesChecked).toHaveLength(30);
  }, 300_000);
});
