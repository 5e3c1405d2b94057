/**
 * The dashboard's first pages (issue 39, item 1) through the running service, as a person's browser would use them
 * without script: domains (the records to publish, verify), accounts (create, suspend, resume), keys (create with a
 * scope and permissions, shown once; revoke), the access log (filters, paging by cursor) and approvals (the held
 * message as it will leave, never rendered as HTML; reject).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from '../helpers/dashboard.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'pages.agentpost.localhost';

describe('dashboard pages', () => {
  let service: TestService;
  let browser: DashboardClient;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    browser = new DashboardClient(service.url);
    expect((await browser.signIn(service.apiKey)).status).toBe(303);
  });
  afterAll(async () => {
    await service.close();
  });

  it('registers a custom domain and shows its DNS records with copy and verify buttons', async () => {
    await browser.get('/domains');
    const made = await browser.post('/domains', { domain_address: 'mail.pages-example.test', name: '' });
    expect(made.status).toBe(303);
    const page = await browser.get(made.location!.replace('/dashboard', ''));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Registered mail.pages-example.test.');
    expect(page.text).toContain('_agentpost.mail.pages-example.test');
    expect(page.text).toMatch(/data-copy="agentpost-verification=[^"]+"/);
    expect(page.text).toContain('v=DMARC1');
    const verified = await browser.post(made.location!.replace('/dashboard', ''), { type: 'ownership' });
    expect(verified.status).toBe(200);
    expect(verified.text).toMatch(/role="alert">ownership: No matching TXT record/);
    expect((await browser.get('/domains')).text).toContain('mail.pages-example.test');
  });

  it('creates, suspends and resumes an Agent Account', async () => {
    await createMailbox(service, `first@${DOMAIN}`);
    await browser.get('/accounts');
    expect((await browser.post('/accounts', { action: 'create', email: `made@${DOMAIN}`, name: 'Made' })).status).toBe(
      303,
    );
    const listed = await browser.get('/accounts');
    expect(listed.text).toContain(`Created made@${DOMAIN}.`);
    const grants = await request(service.url, 'GET', `/v3/grants?email=made@${DOMAIN}`, { key: service.apiKey });
    const grantId = (grants.body.data as { id: string }[])[0]!.id;
    await browser.post('/accounts', { action: 'suspend', grant_id: grantId, reason: 'Looping on a thread' });
    expect((await browser.get('/accounts')).text).toMatch(/suspended<\/strong>\s*Looping on a thread/);
    await browser.post('/accounts', { action: 'resume', grant_id: grantId });
    expect((await browser.get('/accounts')).text).toContain(`Resumed made@${DOMAIN}.`);
  });

  it('creates a key with a scope and permissions (its secret shown once) and revokes it', async () => {
    const grantId = await createMailbox(service, `keyed@${DOMAIN}`);
    await browser.get('/keys');
    const made = await browser.post('/keys', {
      action: 'create',
      name: 'reader',
      grant_ids: grantId,
      'permission_mail.read': 'on',
      expires_in_days: '7',
    });
    expect(made.status).toBe(200);
    const secret = /data-copy="(agp_[^"]+)"/.exec(made.text)?.[1];
    expect(secret).toBeDefined();
    const current = await request(service.url, 'GET', '/v3/api-keys/current', { key: secret });
    expect(current.body.data).toMatchObject({
      name: 'reader',
      scope: { grant_ids: [grantId] },
      permissions: ['mail.read'],
    });
    const keyId = (current.body.data as { id: string }).id;
    const keys = await browser.get('/keys');
    expect(keys.text).toContain('Revoke reader');
    expect(keys.text).not.toContain(secret);
    expect((await browser.post('/keys', { action: 'revoke', api_key_id: keyId })).status).toBe(303);
    expect((await request(service.url, 'GET', '/v3/grants', { key: secret })).status).toBe(401);
    expect((await browser.get('/keys')).text).toContain('The key was revoked.');
  });

  it('filters the access log and pages through it by cursor', async () => {
    for (let index = 0; index < 55; index++) await browser.get('/accounts');
    const first = await browser.get('/access-log?operation=list_grants');
    expect(first.status).toBe(200);
    const rows = [...first.text.matchAll(/<td>list_grants<\/td>/g)];
    expect(rows).toHaveLength(50);
    expect(first.text).not.toContain('<td>list_api_keys</td>');
    const next = /href="\/dashboard(\/access-log\?operation=list_grants&amp;page_token=[^"]+)" rel="next"/.exec(
      first.text,
    );
    expect(next).not.toBeNull();
    const second = await browser.get(next![1]!.replace(/&amp;/g, '&'));
    expect([...second.text.matchAll(/<td>list_grants<\/td>/g)].length).toBeGreaterThan(0);
    expect(second.text).toContain('First page');
  });

  it('shows a held send as it will leave, as text, and rejects it', async () => {
    const grantId = await createMailbox(service, `held@${DOMAIN}`);
    expect(
      (
        await request(service.url, 'PATCH', `/v3/grants/${grantId}`, {
          key: service.apiKey,
          body: { oversight_mode: 'gated_all' },
        })
      ).status,
    ).toBe(200);
    const asker = await request(service.url, 'POST', '/v3/api-keys', { key: service.apiKey, body: { name: 'asker' } });
    const held = await request(service.url, 'POST', `/v3/grants/${grantId}/messages/send`, {
      key: (asker.body.data as { key: string }).key,
      body: {
        to: [{ email: 'customer@example.com' }],
        subject: 'Quote <b>now</b>',
        body: '<p>Price: 42</p><script>alert(1)</script>',
      },
    });
    expect(held.status).toBe(202);
    const approvalId = (held.body as { approval_id: string }).approval_id;
    const list = await browser.get('/approvals');
    expect(list.text).toContain(`/dashboard/approvals/${approvalId}`);
    const detail = await browser.get(`/approvals/${approvalId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Quote &lt;b&gt;now&lt;/b&gt;');
    expect(detail.text).toContain('Price: 42');
    expect(detail.text).not.toContain('<script>alert');
    expect(detail.text).toContain('value="approve"');
    const rejected = await browser.post(`/approvals/${approvalId}`, { decision: 'reject', reason: 'Wrong price' });
    expect(rejected.status).toBe(303);
    const after = await browser.get(`/approvals/${approvalId}`);
    expect(after.text).toContain('Rejected.');
    expect(after.text).toMatch(/<strong>rejected<\/strong>/);
    expect(after.text).not.toContain('value="approve"');
    // An unknown approval is a page saying so, not a crash.
    const missing = await browser.get('/approvals/nope');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Not found');
  });
});
