/**
 * The dashboard's frame (issue 39, item 1) through the running service: sign-in with a key into a server-side
 * session, the cookie's flags (Secure over HTTPS), CSRF refusals, the Content-Security-Policy, a grant-scoped key
 * seeing only its grant, a refusal of an operation shown as a page, failed sign-ins counted like failed Bearer keys,
 * a revoked key's session signed out at its next request, sign-out, and the setting that turns the dashboard off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/index.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { request } from '../helpers/http.js';
import { createMailbox, sendRaw } from '../helpers/mail.js';
import { TEST_API_KEY, createTestCore, testConfig, startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'dash.agentpost.localhost';

describe('dashboard frame', () => {
  let service: TestService;
  let grantA: string;

  const makeKey = async (body: Record<string, unknown>) => {
    const made = await request(service.url, 'POST', '/v3/api-keys', { key: service.apiKey, body });
    expect(made.status, made.text).toBe(201);
    return made.body.data as { id: string; key: string };
  };

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_RATE_LIMIT_FAILED_AUTH: '3' },
    });
    grantA = await createMailbox(service, `a@${DOMAIN}`);
    await createMailbox(service, `b@${DOMAIN}`);
  });
  afterAll(async () => {
    await service.close();
  });

  it('sends a person who is not signed in to the sign-in page, under a strict Content-Security-Policy', async () => {
    const browser = new DashboardClient(service.url);
    const home = await browser.get('/');
    expect(home.status).toBe(303);
    expect(home.location).toBe('/dashboard/sign-in');
    const page = await browser.get('/sign-in');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>|<style>|\son\w+=/);
    const script = await browser.get('/assets/dashboard.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
  });

  it('signs in with a key into an HttpOnly, SameSite=Strict session cookie that holds no key', async () => {
    const browser = new DashboardClient(service.url);
    const signedIn = await browser.signIn(service.apiKey);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/dashboard/');
    const session = signedIn.setCookies.find((line) => line.startsWith('agentpost_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\/dashboard/);
    expect(session).toMatch(/Max-Age=28800/);
    expect(session).not.toMatch(/Secure/);
    expect(session).not.toContain(service.apiKey);
    const overview = await browser.get('/');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Overview');
    expect(overview.text).toMatch(/Mailboxes[\s\S]*?2/);
    // The pages read through the operations, recorded on the dashboard face.
    const log = await request(service.url, 'GET', '/v3/access-log?operation=get_overview', { key: service.apiKey });
    const faces = (log.body.data as { face: string }[]).map((entry) => entry.face);
    expect(faces).toContain('dashboard');
    // The service's metrics name the dashboard's route.
    expect((await service.metrics.scrape()).body).toMatch(/route="\/dashboard\/"/);
  });

  it('refuses a form without its CSRF token, or with another', async () => {
    const browser = new DashboardClient(service.url);
    await browser.signIn(service.apiKey);
    await browser.get('/accounts');
    const fields = { action: 'create', email: `csrf@${DOMAIN}` };
    expect((await browser.post('/accounts', fields, null)).status).toBe(403);
    expect((await browser.post('/accounts', fields, 'x'.repeat(43))).status).toBe(403);
    // The sign-in form has its own token.
    const stranger = new DashboardClient(service.url);
    expect((await stranger.post('/sign-in', { key: service.apiKey }, null)).status).toBe(403);
    const made = await browser.post('/accounts', fields);
    expect(made.status).toBe(303);
    expect((await browser.get('/accounts')).text).toContain(`csrf@${DOMAIN}`);
  });

  it('shows a grant-scoped key only its grant, and a refused operation as a page', async () => {
    const scoped = await makeKey({ name: 'scoped', scope: { grant_ids: [grantA] }, permissions: ['mail.read'] });
    const browser = new DashboardClient(service.url);
    expect((await browser.signIn(scoped.key)).status).toBe(303);
    const accounts = await browser.get('/accounts');
    expect(accounts.status).toBe(200);
    expect(accounts.text).toContain(`a@${DOMAIN}`);
    expect(accounts.text).not.toContain(`b@${DOMAIN}`);
    const keys = await browser.get('/keys');
    expect(keys.status).toBe(403);
    expect(keys.text).toContain('Not permitted');
  });

  it('signs a revoked key out at its next request, and signs out on request', async () => {
    const doomed = await makeKey({ name: 'doomed' });
    const browser = new DashboardClient(service.url);
    await browser.signIn(doomed.key);
    expect((await browser.get('/')).status).toBe(200);
    expect((await request(service.url, 'DELETE', `/v3/api-keys/${doomed.id}`, { key: service.apiKey })).status).toBe(
      200,
    );
    const after = await browser.get('/');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/dashboard/sign-in');
    expect(browser.cookies.has('agentpost_session')).toBe(false);

    const other = new DashboardClient(service.url);
    await other.signIn(service.apiKey);
    await other.get('/');
    const out = await other.post('/sign-out', {});
    expect(out.status).toBe(303);
    expect((await other.get('/sign-in')).text).toContain('Signed out.');
    expect((await other.get('/')).status).toBe(303);
  });

  it('ends the previous session of a browser that signs in again', async () => {
    const browser = new DashboardClient(service.url);
    await browser.signIn(service.apiKey);
    const first = browser.cookies.get('agentpost_session')!;
    // A sign-in page opened in another tab before: its form posted while the first session is still on.
    const tab = new DashboardClient(service.url);
    await tab.get('/sign-in');
    browser.cookies.set('agentpost_sign_in', tab.cookies.get('agentpost_sign_in')!);
    const scoped = await makeKey({
      name: 'second sign-in',
      scope: { grant_ids: [grantA] },
      permissions: ['mail.read'],
    });
    const again = await browser.post('/sign-in', { key: scoped.key }, tab.csrf);
    expect(again.status).toBe(303);
    const second = browser.cookies.get('agentpost_session')!;
    expect(second).not.toBe(first);
    expect((await browser.get('/')).text).toContain('second sign-in');
    // The first session's id is no good any more, from this browser or any other: its row is gone.
    expect(await service.core.accounts.applications.resumeDashboardSession(first)).toBeUndefined();
    const stale = new DashboardClient(service.url);
    stale.cookies.set('agentpost_session', first);
    const refused = await stale.get('/');
    expect(refused.status).toBe(303);
    expect(refused.location).toBe('/dashboard/sign-in');
  });

  it('creates a rule applied in a workspace with one operation, and shows only the evaluations that matched it', async () => {
    const browser = new DashboardClient(service.url);
    await browser.signIn(service.apiKey);
    const workspaces = await request(service.url, 'GET', '/v3/workspaces', { key: service.apiKey });
    const home = (workspaces.body.data as { workspace_id: string; default: boolean }[]).find((w) => w.default)!;
    await browser.get('/rules');
    const fields = {
      name: 'Match senders read',
      trigger: 'inbound',
      field: 'from.domain',
      operator: 'is',
      value: 'match.example',
      action: 'mark_as_read',
      priority: '5',
    };
    const made = await browser.post('/rules', { ...fields, workspace_id: home.workspace_id });
    expect(made.status).toBe(303);
    expect((await browser.get('/rules')).text).toContain('Rule created and applied.');
    const rules = await request(service.url, 'GET', '/v3/rules', { key: service.apiKey });
    const ruleId = (rules.body.data as { id: string; name: string }[]).find((r) => r.name === fields.name)!.id;
    const workspace = await request(service.url, 'GET', `/v3/workspaces/${home.workspace_id}`, {
      key: service.apiKey,
    });
    expect(workspace.body.data.rule_ids).toContain(ruleId);
    // One operation: the form no longer reads and rewrites the workspace.
    for (const operation of ['get_workspace', 'update_workspace']) {
      const log = await request(service.url, 'GET', `/v3/access-log?operation=${operation}`, { key: service.apiKey });
      expect((log.body.data as { face: string }[]).filter((entry) => entry.face === 'dashboard')).toEqual([]);
    }
    // Atomic: a workspace that is not the application's is a 404, and no rule is made.
    const refused = await request(service.url, 'POST', '/v3/rules', {
      key: service.apiKey,
      body: {
        name: 'Nowhere',
        match: { conditions: [] },
        actions: [{ type: 'archive' }],
        workspace_ids: ['no-such-workspace'],
      },
    });
    expect(refused.status).toBe(404);
    const after = await request(service.url, 'GET', '/v3/rules', { key: service.apiKey });
    expect((after.body.data as { name: string }[]).map((r) => r.name)).not.toContain('Nowhere');
    // A form value the schema refuses is said on the page, not a failed page.
    const empty = await browser.post('/rules', { ...fields, name: '' });
    expect(empty.status).toBe(303);
    expect((await browser.get('/rules')).text).toMatch(/Not done: [^<]*name/);

    // Two messages in: one from the rule's domain, one from another.
    for (const from of ['someone@match.example', 'someone@other.example']) {
      const raw = `From: ${from}\r\nTo: a@${DOMAIN}\r\nSubject: from ${from}\r\n\r\nHello\r\n`;
      expect((await sendRaw(service.smtpPort, from, [`a@${DOMAIN}`], raw)).code).toBe(250);
    }
    const path = `/v3/grants/${grantA}/rule-evaluations`;
    const every = await request(service.url, 'GET', path, { key: service.apiKey });
    expect(every.body.data.length).toBeGreaterThanOrEqual(2);
    const matched = await request(service.url, 'GET', `${path}?rule_id=${ruleId}`, { key: service.apiKey });
    expect(matched.status).toBe(200);
    const rows = matched.body.data as { matched_rule_ids: string[]; evaluation_input: { from_address?: string } }[];
    // Evaluated at RCPT and in the inbox, the one message from the rule's domain; none of the other.
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((row) => row.evaluation_input.from_address))).toEqual(new Set(['someone@match.example']));
    expect(every.body.data.length).toBeGreaterThan(rows.length);
    expect(rows.every((row) => row.matched_rule_ids.includes(ruleId))).toBe(true);
    const page = await browser.get(`/rules/${ruleId}?grant_id=${grantA}`);
    expect(page.text).toContain('someone@match.example');
    expect(page.text).not.toContain('someone@other.example');
    const all = await browser.get(`/rules/${ruleId}?grant_id=${grantA}&all=1`);
    expect(all.text).toContain('someone@other.example');
  });

  it('counts failed sign-ins like failed Bearer keys: over the budget, the address gets 429', async () => {
    const browser = new DashboardClient(service.url);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) statuses.push((await browser.signIn('agp_not_a_key')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The same budget refuses the address on /v3 too, and the refusals are in the access log.
    expect((await request(service.url, 'GET', '/v3/grants', { key: 'agp_wrong' })).status).toBe(429);
  });
});

describe('dashboard settings', () => {
  it('names AGENTPOST_DASHBOARD_PATH when it is not off or a path', () => {
    expect(() => testConfig('file:unused.db', { AGENTPOST_DASHBOARD_PATH: 'dashboard' })).toThrow(
      /AGENTPOST_DASHBOARD_PATH.*off.*\/dashboard/,
    );
    expect(testConfig('file:unused.db', { AGENTPOST_DASHBOARD_PATH: '/ops/board' }).dashboard).toEqual({
      path: '/ops/board',
      sessionSeconds: 8 * 3600,
    });
  });

  it("counts a page against the application's request budget, as a /v3 request", async () => {
    const { core, close } = await createTestCore(undefined, { AGENTPOST_RATE_LIMIT_APPLICATION: '2' });
    try {
      // A clock that stands still: the bucket of two never refills.
      const app = createApp({ core, rateLimitClock: () => 0 });
      const origin = 'http://agentpost.example/dashboard';
      const signIn = await app.request(`${origin}/sign-in`);
      const token = /name="_csrf" value="([^"]+)"/.exec(await signIn.text())![1]!;
      const signInCookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
      const signedIn = await app.request(`${origin}/sign-in`, {
        method: 'POST',
        headers: { cookie: signInCookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, key: TEST_API_KEY }).toString(),
      });
      expect(signedIn.status).toBe(303);
      const session = signedIn.headers
        .getSetCookie()
        .find((line) => line.startsWith('agentpost_session='))!
        .split(';')[0]!;
      const statuses: number[] = [];
      for (let page = 0; page < 3; page++)
        statuses.push((await app.request(`${origin}/access-log`, { headers: { cookie: session } })).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      close();
    }
  });

  it('marks the cookie Secure over HTTPS, and is off with AGENTPOST_DASHBOARD_PATH=off', async () => {
    const { core, close } = await createTestCore();
    try {
      const app = createApp({ core });
      const signIn = await app.request('https://agentpost.example/dashboard/sign-in');
      expect(signIn.headers.get('set-cookie')).toMatch(/Secure/);
    } finally {
      close();
    }
    const off = await createTestCore(undefined, { AGENTPOST_DASHBOARD_PATH: 'off' });
    try {
      const app = createApp({ core: off.core });
      expect((await app.request('http://agentpost.example/dashboard/sign-in')).status).toBe(404);
    } finally {
      off.close();
    }
  });
});
