/**
 * The hosted login form for IMAP accounts (issue 38 item 6): `GET /v3/connect/auth?provider=imap` shows a form of this
 * service, whose post connects the account as `POST /v3/connect/custom` does (the IMAP and SMTP logins checked on
 * Debian's Dovecot and Postfix here) and ends at the application's redirect URI with a code that
 * `POST /v3/connect/token` exchanges for the grant. A browser-free walk (fetch, a cookie, the form's fields) checks the
 * CSRF token, the browser binding, a wrong password shown on the form, the cancel button, and that no password
 * reaches a URL or a log line; then one walk in Debian's Chromium (playwright-core) fills the form and lands on the
 * redirect URI with a code that exchanges to a grant whose mail syncs in.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/ports/index.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { imapClient } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { postfixMissing, startPostfix, type Postfix } from '../helpers/postfix.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { smallMail } from '../helpers/oauth-mail.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`imap-hosted-form: skipped: ${missing}`);
const CHROMIUM = '/usr/bin/chromium';
const chromiumMissing = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (Debian package chromium)`;
if (!missing && chromiumMissing) console.warn(`imap-hosted-form: the Chromium walk is skipped: ${chromiumMissing}`);

/** Fixed ports of this file (46350-46399). */
const IMAP_PORT = 46351;
const AUTH_PORT = 46352;
const SMTP_PORT = 46353;
const LMTP_PORT = 46354;

/** Passwords unlike anything else, so a search of URLs and log lines finds them only if they leaked there. */
const ALICE = { user: 'alice@example.test', password: 'alice-Form-Secret-6621' };
const BOB = { user: 'bob@example.test', password: 'bob-Form-Secret-3307' };
const WRONG_PASSWORD = 'alice-Wrong-Guess-4410';
const WAIT_MS = 20_000;

/** What the page's form carries in its hidden fields. */
function hiddenFields(page: string): { flow: string; csrf_token: string } {
  const value = (name: string) =>
    new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(page)?.[1]?.replace(/&amp;/g, '&');
  return { flow: value('flow')!, csrf_token: value('csrf_token')! };
}

/** The flow's cookie (name=value) from a response's Set-Cookie. */
function cookieOf(response: Response): string {
  const line = response.headers.getSetCookie().find((item) => item.startsWith('agentpost_oauth='));
  return line!.split(';')[0]!;
}

/** A logger that keeps every line, to search for passwords. */
function capturingLogger(lines: string[]): Logger {
  const keep = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push(JSON.stringify({ level, message, ...fields }));
  return { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function message(subject: string): string {
  return smallMail(BOB.user, ALICE.user, subject);
}

describe.skipIf(missing !== undefined)('the hosted login form for IMAP accounts', { timeout: 60_000 }, () => {
  let dovecot: Dovecot;
  let postfix: Postfix;
  let service: TestService;
  /** The application's redirect URI: a page of its own that answers 200 (where Chromium lands). */
  let app: Server;
  let redirectUri: string;
  let applicationId: string;
  const logLines: string[] = [];

  /** The form's server fields: this file's Dovecot and Postfix, under "Other IMAP server". */
  const servers = {
    preset: 'other',
    imap_host: '127.0.0.1',
    imap_port: String(IMAP_PORT),
    smtp_host: '127.0.0.1',
    smtp_port: String(SMTP_PORT),
  };

  const authUrl = (params: Record<string, string>) =>
    `${service.url}/v3/connect/auth?${new URLSearchParams({
      client_id: applicationId,
      redirect_uri: redirectUri,
      response_type: 'code',
      provider: 'imap',
      ...params,
    }).toString()}`;

  const post = (cookie: string | undefined, fields: Record<string, string>) =>
    fetch(`${service.url}/v3/connect/imap`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(fields).toString(),
    });

  /** Opens the form as a browser would: its page, the hidden fields, the cookie. */
  const openForm = async (params: Record<string, string>) => {
    const response = await fetch(authUrl(params), { redirect: 'manual' });
    const page = await response.text();
    return { response, page, cookie: cookieOf(response), hidden: hiddenFields(page) };
  };

  const grantCount = async () => (await service.nylas.grants.list()).data.length;

  beforeAll(async () => {
    dovecot = await startDovecot({
      imapPort: IMAP_PORT,
      lmtpPort: LMTP_PORT,
      authPort: AUTH_PORT,
      users: [ALICE, BOB],
    });
    postfix = startPostfix({
      port: SMTP_PORT,
      domain: 'postfix.localhost',
      transports: {},
      saslAuthPort: AUTH_PORT,
      lmtp: { port: LMTP_PORT, domains: ['example.test'] },
    });
    app = createServer((_request, response) => response.end('the application got its code'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(app.address() as AddressInfo).port}/app/callback`;
    service = await startTestService({
      env: {
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_WORKER_POLL_MS: '100',
        AGENTPOST_RATE_LIMIT_APPLICATION: '0',
        AGENTPOST_LOG_LEVEL: 'debug',
      },
      deps: { logger: capturingLogger(logLines) },
    });
    await service.nylas.applications.redirectUris.create({ requestBody: { url: redirectUri, platform: 'web' } });
    applicationId = (await service.nylas.applications.getDetails()).data.applicationId;
    const alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
    await alice.append('INBOX', message('Before the form'));
    await alice.logout();
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
    postfix?.stop();
    await dovecot?.stop();
  });

  it('shows a form of its own under a strict Content-Security-Policy, with no script, the presets and the hint', async () => {
    const { response, page, hidden } = await openForm({ login_hint: 'ada@icloud.com' });
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain(`form-action 'self' ${new URL(redirectUri).origin}`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(page).not.toMatch(/<script/i);
    expect(page).toMatch(/<form method="post" action="\/v3\/connect\/imap">/);
    for (const preset of ['icloud', 'yahoo', 'fastmail', 'other']) expect(page).toContain(`value="${preset}"`);
    // login_hint's domain chose the iCloud preset and filled the address.
    expect(page).toMatch(/value="icloud"\s+checked/);
    expect(page).toContain('value="ada@icloud.com"');
    expect(hidden.flow.length).toBeGreaterThan(20);
    expect(hidden.csrf_token.length).toBeGreaterThan(20);
  });

  it('refuses a post without the CSRF token (403), with a wrong one (403) and from another browser (400); no grant is made', async () => {
    const { cookie, hidden } = await openForm({ state: 'csrf-state' });
    const fields = { ...servers, email: ALICE.user, password: ALICE.password, action: 'connect' };
    const without = await post(cookie, { ...fields, flow: hidden.flow });
    expect(without.status).toBe(403);
    expect(await without.text()).toMatch(/CSRF token/);
    const wrong = await post(cookie, { ...fields, flow: hidden.flow, csrf_token: 'x'.repeat(32) });
    expect(wrong.status).toBe(403);
    const otherBrowser = await post(undefined, { ...fields, ...hidden });
    expect(otherBrowser.status).toBe(400);
    expect(await otherBrowser.text()).toMatch(/not started in this browser/);
    // A flow of another sign-in, with this browser's cookie: the binding does not match.
    const other = await openForm({});
    const crossed = await post(cookie, { ...fields, ...other.hidden });
    expect(crossed.status).toBe(400);
    expect(await grantCount()).toBe(0);
  });

  it("a wrong password shows the form again with the server's reason and the password field empty; the right one redirects with a code that exchanges for the grant", async () => {
    const { verifier, challenge } = pkce();
    const { cookie, hidden } = await openForm({
      state: 'app-state-7',
      login_hint: ALICE.user,
      access_type: 'offline',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const refused = await post(cookie, {
      ...hidden,
      ...servers,
      email: ALICE.user,
      password: WRONG_PASSWORD,
      action: 'connect',
    });
    expect(refused.status).toBe(400);
    const again = await refused.text();
    expect(again).toMatch(/role="alert"[^>]*>IMAP server 127\.0\.0\.1:46351 refused the login/);
    expect(again).not.toContain(WRONG_PASSWORD);
    expect(again).toMatch(/<input\s+id="password"\s+name="password"\s+type="password"(?![^>]*value=)[^>]*>/);
    // What was typed stays (the address, the servers), with the same flow and CSRF token.
    expect(again).toContain(`value="${ALICE.user}"`);
    expect(again).toMatch(/value="other"\s+checked/);
    expect(hiddenFields(again)).toEqual(hidden);
    expect(await grantCount()).toBe(0);

    const accepted = await post(cookie, {
      ...hidden,
      ...servers,
      email: ALICE.user,
      password: ALICE.password,
      action: 'connect',
    });
    expect(accepted.status).toBe(302);
    const location = new URL(accepted.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect([...location.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(location.searchParams.get('state')).toBe('app-state-7');
    expect(location.toString()).not.toContain(ALICE.password);
    expect(accepted.headers.getSetCookie().join()).toMatch(/agentpost_oauth=;.*Max-Age=0/);

    const exchanged = await service.nylas.auth.exchangeCodeForToken({
      clientId: applicationId,
      redirectUri,
      code: location.searchParams.get('code')!,
      codeVerifier: verifier,
    });
    expect(exchanged).toMatchObject({ email: ALICE.user, provider: 'imap' });
    expect(exchanged.refreshToken).toMatch(/^agprt_/);
    const { data: grant } = await service.nylas.grants.find({ grantId: exchanged.grantId });
    expect(grant).toMatchObject({
      provider: 'imap',
      grantStatus: 'valid',
      email: ALICE.user,
      settings: { imapHost: '127.0.0.1', imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
    });
    // The grant works: its mail syncs in.
    await eventually(async () => {
      const { data } = await service.nylas.messages.list({ identifier: exchanged.grantId });
      return data.some((item) => item.subject === 'Before the form') ? true : undefined;
    }, WAIT_MS);
    // The code is one use.
    await expect(
      service.nylas.auth.exchangeCodeForToken({
        clientId: applicationId,
        redirectUri,
        code: location.searchParams.get('code')!,
        codeVerifier: verifier,
      }),
    ).rejects.toThrow(/code/);
  });

  it('cancelling goes to the redirect URI with access_denied and the state', async () => {
    const { cookie, hidden } = await openForm({ state: 'cancel-state' });
    const cancelled = await post(cookie, { ...hidden, action: 'cancel' });
    expect(cancelled.status).toBe(302);
    const location = new URL(cancelled.headers.get('location')!);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user cancelled the sign-in.',
      state: 'cancel-state',
    });
  });

  it('no password reached a log line', () => {
    // The posts were logged (the access log), and the refused login with the server's words.
    expect(logLines.filter((line) => /"message":"request","method":"POST".*"status":302/.test(line))).not.toEqual([]);
    expect(
      logLines.some((line) => line.includes('hosted IMAP form refused') && line.includes('refused the login')),
    ).toBe(true);
    for (const secret of [ALICE.password, WRONG_PASSWORD]) {
      expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
    }
  });

  it.skipIf(chromiumMissing !== undefined)(
    "Debian's Chromium fills the form and lands on the redirect URI with a code that exchanges to a working grant",
    async () => {
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage();
        const violations: string[] = [];
        page.on('console', (entry) => {
          if (/Content Security Policy|Refused to/i.test(entry.text())) violations.push(entry.text());
        });
        await page.goto(authUrl({ state: 'browser-state', login_hint: BOB.user }));
        // An address of no preset's domain chose "Other IMAP server", whose servers are shown open.
        expect(await page.getByLabel('Other IMAP server').isChecked()).toBe(true);
        if ((await page.locator('details').getAttribute('open')) === null) {
          await page.getByText("Servers (for another provider, or to change a preset's)").click();
        }
        await page.getByLabel('Password').fill(BOB.password);
        await page.getByLabel('IMAP server', { exact: true }).fill('127.0.0.1');
        await page.locator('#imap_port').fill(String(IMAP_PORT));
        await page.getByLabel('SMTP server', { exact: true }).fill('127.0.0.1');
        await page.locator('#smtp_port').fill(String(SMTP_PORT));
        await Promise.all([
          page.waitForURL((url) => url.toString().startsWith(redirectUri)),
          page.getByRole('button', { name: 'Connect' }).click(),
        ]);
        const landed = new URL(page.url());
        expect(landed.searchParams.get('state')).toBe('browser-state');
        expect(await page.textContent('body')).toBe('the application got its code');
        expect(violations).toEqual([]);
        const exchanged = await service.nylas.auth.exchangeCodeForToken({
          clientId: applicationId,
          redirectUri,
          code: landed.searchParams.get('code')!,
          clientSecret: service.apiKey,
        });
        expect(exchanged).toMatchObject({ email: BOB.user, provider: 'imap' });
        const { data: grant } = await service.nylas.grants.find({ grantId: exchanged.grantId });
        expect(grant.grantStatus).toBe('valid');
        // A working grant: it sends through Bob's SMTP server, and the mail arrives at Alice's.
        await service.nylas.messages.send({
          identifier: exchanged.grantId,
          requestBody: { to: [{ email: ALICE.user }], subject: 'Sent after the browser walk', body: 'Hi' },
        });
        const alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
        try {
          await eventually(async () => {
            const lock = await alice.getMailboxLock('INBOX');
            try {
              const found = (await alice.search({ subject: 'Sent after the browser walk' }, { uid: true })) || [];
              return found.length > 0 ? true : undefined;
            } finally {
              lock.release();
            }
          }, WAIT_MS);
        } finally {
          await alice.logout();
        }
      } finally {
        await browser.close();
      }
    },
  );
});
