/**
 * Shared pieces of the dashboard's pages (server/dashboard/contracts.ts): times, paging links, forms with their CSRF
 * token, tables, refusals shown in place. Everything renders with `hono/html`, so every interpolation is escaped.
 */
import { html, raw } from 'hono/html';
import { AppError, HTTP_ERRORS } from '../../src/index.js';
import type { DashboardRequest, Html } from './contracts.js';

/** A time as ISO 8601 in `<time datetime>` (UTC as text); the dashboard's script shows it in the viewer's time zone. */
export function time(unixSeconds: number | null | undefined): Html {
  if (unixSeconds === null || unixSeconds === undefined) return html`<span class="muted">-</span>`;
  const iso = new Date(unixSeconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;
}

/** The hidden CSRF field every form carries (a POST without it is refused with 403). */
export function csrfField(request: DashboardRequest): Html {
  return html`<input type="hidden" name="_csrf" value="${request.csrf}" />`;
}

/**
 * A one-button form that POSTs `fields` to `action` (a path under the mount, e.g. `/keys/abc/revoke`). `confirm`: a
 * question the script asks first (without script the form posts at once).
 */
export function actionButton(
  request: DashboardRequest,
  action: string,
  label: string,
  options: { fields?: Record<string, string>; confirm?: string; danger?: boolean } = {},
): Html {
  const fields = Object.entries(options.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
  return html`<form
    method="post"
    action="${request.base}${action}"
    class="inline"
    ${options.confirm ? html` data-confirm="${options.confirm}"` : ''}
  >
    ${csrfField(request)}${fields}<button type="submit" ${options.danger ? raw(' class="danger"') : ''}>
      ${label}
    </button>
  </form>`;
}

/** A table with a caption (read by screen readers) and one header row; an empty list says so. */
export function table(caption: string, headers: readonly string[], rows: readonly Html[], empty = 'None yet.'): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${headers.map((header) => html`<th scope="col">${header}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

/**
 * Paging by cursor: a link to the next page (`page_token=<cursor>`, the request's other query parameters kept) and,
 * when on a later page, one back to the first.
 */
export function pager(request: DashboardRequest, path: string, nextCursor: string | null | undefined): Html {
  const next = new URLSearchParams(request.query);
  const onLaterPage = next.has('page_token');
  next.delete('page_token');
  const first = next.toString();
  const links: Html[] = [];
  if (onLaterPage) links.push(html`<a href="${request.base}${path}${first ? `?${first}` : ''}">First page</a>`);
  if (nextCursor) {
    next.set('page_token', nextCursor);
    links.push(html`<a href="${request.base}${path}?${next.toString()}" rel="next">Next page</a>`);
  }
  return links.length > 0 ? html`<nav class="pager" aria-label="Pages">${links}</nav>` : html``;
}

/** What {@link attempt} answers: the operation's result, or the refusal to show in its place. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; status: number; message: string };

/**
 * Runs an operation and keeps an `AppError` (a 403 for a permission the key lacks, a 404 outside its scope) as a
 * value, for a page that shows several things and should still show the others.
 */
export async function attempt<T>(
  request: DashboardRequest,
  name: string,
  input: Record<string, unknown>,
): Promise<Attempt<T>> {
  try {
    return { ok: true, value: (await request.run(name, input)) as T };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { ok: false, status: HTTP_ERRORS[error.code].status, message: error.message };
  }
}

/** A refusal or failure shown in place (role=alert, so a screen reader announces it). */
export function errorBox(message: string): Html {
  return html`<p class="error" role="alert">${message}</p>`;
}

/** Whether the signed-in key has a permission (pages hide what it may not do; the operation refuses anyway). */
export function can(request: DashboardRequest, permission: string): boolean {
  return request.key.permissions.includes(permission);
}

/** A value with a copy button (shown by the script; without it, the value can still be selected). */
export function copyable(value: string, label: string): Html {
  return html`<span class="copyable"
    ><code>${value}</code>
    <button type="button" class="copy" data-copy="${value}" aria-label="Copy ${label}" hidden>Copy</button></span
  >`;
}

/** A form field's trimmed value, or undefined when empty or absent. */
export function field(request: DashboardRequest, name: string): string | undefined {
  const value = request.form?.[name]?.trim();
  return value ? value : undefined;
}
