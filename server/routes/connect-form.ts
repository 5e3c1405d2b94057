/**
 * The hosted login form for IMAP and CalDAV accounts (docs/connected-accounts.md, "The hosted IMAP form"): the page
 * `GET /v3/connect/auth?provider=imap` shows, and `POST /v3/connect/imap`, where it is sent. The work is
 * `core.accounts.oauth` (src/oauth/imap-form.ts); this module renders it with `hono/html` (every value escaped).
 * The page loads nothing and runs no script: a Content-Security-Policy with `default-src 'none'`, its one style
 * allowed by hash, and forms allowed to go only here and, after the post, to the application's redirect URI.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { html, raw } from 'hono/html';
import type { ImapFormView } from '../../src/oauth/index.js';
import type { AppEnv } from '../types.js';

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}' +
  'label{display:block;margin:.75rem 0 .25rem;font-weight:600}input[type=text],input[type=email],input[type=password],' +
  'input[type=url],input[type=number]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px}' +
  'fieldset{border:1px solid #ccc;border-radius:4px;margin:1rem 0}.choice{margin:.25rem 0}.choice label{display:inline;font-weight:400}' +
  '.hint{color:#555;font-size:.9rem;margin:0 0 .25rem 1.6rem}.error{background:#fde8e8;border:1px solid #b00020;color:#6b0014;padding:.75rem;border-radius:4px}' +
  '.row{display:flex;gap:.75rem}.row>div:first-child{flex:3}.row>div:last-child{flex:1}button{font:inherit;padding:.5rem 1.25rem;margin:1rem .5rem 0 0}';

/** The style's hash, the one the Content-Security-Policy allows. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/** The head's fixed part, whole: the style element's text must be exactly what its hash covers. */
const HEAD = raw(
  `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Connect your mailbox</title><style>${STYLE}</style>`,
);

/** Where the form's post may end: this service, and the application's redirect URI (its origin, or its scheme). */
function formTargets(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return /^https?:$/.test(url.protocol) ? url.origin : url.protocol;
  } catch {
    return '';
  }
}

function headers(view: ImapFormView): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self' ${formTargets(view.redirectUri)}; frame-ancestors 'none'; base-uri 'none'`,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };
}

function textField(
  view: ImapFormView,
  name: string,
  label: string,
  options: { type?: string; autocomplete?: string; required?: boolean; placeholder?: string } = {},
) {
  return html`<label for="${name}">${label}</label
    ><input
      id="${name}"
      name="${name}"
      type="${options.type ?? 'text'}"
      value="${view.values[name] ?? ''}"
      maxlength="2048"
      autocomplete="${options.autocomplete ?? 'off'}"
      ${options.placeholder ? html`placeholder="${options.placeholder}"` : ''}
      ${options.required ? 'required' : ''}
    />`;
}

function page(view: ImapFormView) {
  const servers = ['imap_host', 'imap_port', 'smtp_host', 'smtp_port', 'caldav_url', 'carddav_url'];
  const open = view.preset === 'other' || servers.some((name) => view.values[name] !== undefined);
  return html`<!doctype html>
    <html lang="en">
      <head>
        ${HEAD}
      </head>
      <body>
        <main>
          <h1>Connect your mailbox</h1>
          <p>Sign in with your mail account's password (an app password where your provider has them).</p>
          ${view.error ? html`<p class="error" role="alert" id="error">${view.error}</p>` : ''}
          <form method="post" action="/v3/connect/imap">
            <input type="hidden" name="flow" value="${view.flow}" />
            <input type="hidden" name="csrf_token" value="${view.csrf}" />
            <fieldset>
              <legend>Your provider</legend>
              ${view.presets.map(
                (preset) =>
                  html`<div class="choice">
                      <input
                        type="radio"
                        name="preset"
                        id="preset-${preset.id}"
                        value="${preset.id}"
                        ${preset.id === view.preset ? 'checked' : ''}
                      /><label for="preset-${preset.id}">${preset.label}</label>
                    </div>
                    <p class="hint">${preset.hint}</p>`,
              )}
            </fieldset>
            ${textField(view, 'email', 'Email address', { type: 'email', autocomplete: 'email', required: true })}
            <label for="password">Password</label
            ><input
              id="password"
              name="password"
              type="password"
              maxlength="1024"
              autocomplete="current-password"
              required
            />
            ${textField(view, 'username', 'Login name (if not the address)', { autocomplete: 'username' })}
            <details ${open ? 'open' : ''}>
              <summary>Servers (for another provider, or to change a preset's)</summary>
              <div class="row">
                <div>${textField(view, 'imap_host', 'IMAP server', { placeholder: 'imap.example.com' })}</div>
                <div>${textField(view, 'imap_port', 'Port', { type: 'number', placeholder: '993' })}</div>
              </div>
              <div class="row">
                <div>${textField(view, 'smtp_host', 'SMTP server', { placeholder: 'smtp.example.com' })}</div>
                <div>${textField(view, 'smtp_port', 'Port', { type: 'number', placeholder: '465' })}</div>
              </div>
              ${textField(view, 'caldav_url', 'CalDAV URL (calendars, optional)', {
                type: 'url',
                placeholder: 'https://caldav.example.com/',
              })}
              ${textField(view, 'carddav_url', 'CardDAV URL (contacts, optional)', {
                type: 'url',
                placeholder: 'https://carddav.example.com/',
              })}
            </details>
            <button type="submit" name="action" value="connect">Connect</button
            ><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
          </form>
        </main>
      </body>
    </html>`;
}

/** The hosted IMAP form as a response: 200 the first time, 400 shown again after a refused post. */
export async function imapFormResponse(
  c: Context<AppEnv>,
  view: ImapFormView,
  status: 200 | 400,
  cookie?: string,
): Promise<Response> {
  const answer = headers(view);
  if (cookie !== undefined) answer['set-cookie'] = cookie;
  return c.body(String(await page(view)), status, answer);
}

/** A page saying why a post was refused (another browser, an expired flow, no CSRF token). */
export async function refusedPage(c: Context<AppEnv>, status: 400 | 403, message: string): Promise<Response> {
  const body = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Sign-in refused</title>
      </head>
      <body>
        <h1>This sign-in cannot go on</h1>
        <p>${message}</p>
      </body>
    </html>`;
  return c.body(String(await body), status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
}
