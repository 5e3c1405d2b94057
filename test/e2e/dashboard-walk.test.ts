/**
 * The dashboard walked as a person would (issue 39, "How it is checked"), with Debian's Chromium driven by
 * playwright-core: sign in with a key, register a trial and a custom domain, create a mailbox, look at approvals and
 * the access log, make a second key, sign in with it, revoke it and be signed out. On every page axe finds no serious
 * or critical accessibility violation; a screenshot of each page is kept in test-artifacts/dashboard/ (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/** Debian's Chromium (`.ci/run` installs the `chromium` package). */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'dashboard');

describe.skipIf(!existsSync(CHROMIUM))('the dashboard walked in Chromium (needs /usr/bin/chromium)', () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;
  const pagesChecked: string[] = [];

  /** Checks the page with axe (serious and critical only) and keeps a screenshot named `name`. */
  async function inspect(name: string): Promise<void> {
    const results = await new AxeBuilder({ page }).analyze();
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
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await (await browser.newContext()).newPage();
    // The revoke button asks first (the dashboard's script): the person agrees.
    page.on('dialog', (dialog) => void dialog.accept());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('signs in, adds domains and a mailbox, makes and revokes a key, and is signed out', async () => {
    const dashboard = `${service.url}/dashboard`;
    await page.goto(`${dashboard}/`);
    expect(page.url()).toBe(`${dashboard}/sign-in`);
    await inspect('sign-in');
    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard}/`);
    expect(await page.textContent('h1')).toBe('Overview');
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

    await navigate('Approvals');
    await inspect('approvals');
    await navigate('Access log');
    expect(await page.textContent('table')).toContain('create_agent_account');
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
    expect(pagesChecked).toHaveLength(11);
  }, 120_000);
});
