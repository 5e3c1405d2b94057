/**
 * The dashboard's layout: the document around every page (navigation from the pages' `nav`, the signed-in key, the
 * sign-out form, a one-line notice) and the sign-in page. Assets are the service's own (./assets.ts).
 */
import { html } from 'hono/html';
import type { DashboardPage, Html } from './contracts.js';

/** What the layout needs besides the page's title and body. */
export interface LayoutContext {
  base: string;
  /** The path asked for (under the mount), to mark the current navigation entry. */
  path: string;
  pages: readonly DashboardPage[];
  /** The signed-in key, and the CSRF token of the sign-out form; absent on the sign-in page. */
  session?: { keyName: string; csrf: string } | undefined;
  notice?: string | undefined;
}

/** The whole document. */
export function layout(context: LayoutContext, title: string, body: Html): Html {
  const { base } = context;
  const entries = context.pages
    .filter((page) => page.nav)
    .sort((left, right) => left.nav!.order - right.nav!.order)
    .map((page) => {
      const current = page.path === '/' ? context.path === '/' : context.path.startsWith(page.path);
      return html`<li>
        <a href="${base}${page.path === '/' ? '/' : page.path}" ${current ? html` aria-current="page"` : ''}
          >${page.nav!.label}</a
        >
      </li>`;
    });
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Agentpost</title>
        <link rel="stylesheet" href="${base}/assets/dashboard.css" />
        <script src="${base}/assets/dashboard.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="top">
          <a class="brand" href="${base}/">Agentpost</a>
          ${
            context.session
              ? html`<nav class="main" aria-label="Dashboard">
                    <ul>
                      ${entries}
                    </ul>
                  </nav>
                  <form method="post" action="${base}/sign-out" class="inline">
                    <input type="hidden" name="_csrf" value="${context.session.csrf}" />
                    <span class="muted">Key: ${context.session.keyName}</span>
                    <button type="submit">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main id="content">
          ${context.notice ? html`<p class="notice" role="status">${context.notice}</p>` : ''}
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** The sign-in form; `csrf` is the sign-in token (a cookie of its own, since there is no session yet). */
export function signInBody(base: string, csrf: string, error?: string): Html {
  return html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <p>
      Sign in with an API key of this service. Its scope and permissions apply to every page; the key is not kept in
      your browser, only a session cookie.
    </p>
    <form method="post" action="${base}/sign-in" class="stack">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <label for="key">API key</label>
      <input id="key" name="key" type="password" autocomplete="off" required maxlength="512" />
      <div><button type="submit">Sign in</button></div>
    </form>`;
}
