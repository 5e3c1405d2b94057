/**
 * @module server/dashboard/pages/kit
 * What the pages of MORE_PAGES (./more.ts) share: times as `<time>`, the CSRF field, paging links, tables, forms,
 * and the answer of a refused or failed operation. Everything renders with `hono/html`, so every interpolated value
 * is escaped; `raw` is used nowhere here.
 */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { AppError, HTTP_ERRORS } from '../../../src/errors.js';
import type { DashboardPage, DashboardRequest, Html, PageAnswer } from '../contracts.js';
import { csrfField, field, table } from '../ui.js';

/**
 * Members an answer of these pages may carry beyond the seam's PageAnswer (server/dashboard/contracts.ts), both
 * optional, so a frame that does not know them still renders `title` and `body`:
 * - `status`: the HTTP status to answer with (404 for what the key cannot reach, 403 for what it may not do);
 * - `download`: bytes to send as a file instead of the layout (`Content-Disposition: attachment`, with
 *   `X-Content-Type-Options: nosniff`); `body` then holds a fallback link for a frame that does not serve it;
 * - `frameDocument`: a document for a sandboxed frame, answered under its own policy.
 */
export interface PageExtras {
  readonly status?: number;
  readonly download?: { readonly filename: string; readonly contentType: string; readonly bytes: Uint8Array };
  readonly frameDocument?: { readonly html: string; readonly csp: string };
}

/** An answer of these pages: the seam's, plus {@link PageExtras}. */
export type MoreAnswer = PageAnswer & PageExtras;

/** A page of MORE_PAGES: a DashboardPage whose answers may carry {@link PageExtras}. */
export interface MorePage extends DashboardPage {
  get(request: DashboardRequest): Promise<MoreAnswer>;
  post?(request: DashboardRequest): Promise<MoreAnswer>;
}

/** A rendered fragment. */
export type Fragment = HtmlEscapedString | Promise<HtmlEscapedString>;

/** A list page as operations answer it. */
export interface Page<T> {
  data: T[];
  next_cursor?: string;
}

/** Runs an operation that answers a page. */
export async function runPage<T>(request: DashboardRequest, name: string, input: Record<string, unknown>) {
  return (await request.run(name, input)) as Page<T>;
}

/** Runs an operation that answers one object. */
export async function runOne<T>(request: DashboardRequest, name: string, input: Record<string, unknown>) {
  return (await request.run(name, input)) as T;
}

/** ISO 8601 of unix seconds (or milliseconds when `unit` says so). */
export function isoOf(value: number, unit: 'seconds' | 'ms' = 'seconds'): string {
  const ms = unit === 'seconds' ? value * 1000 : value;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/** A time the frame's script shows in the viewer's time zone; without script it reads as ISO 8601 (UTC). */
export function timeOf(seconds: number | null | undefined): Fragment {
  if (seconds === null || seconds === undefined) return html`<span class="none">—</span>`;
  const iso = isoOf(seconds);
  return html`<time datetime="${iso}">${iso}</time>`;
}

/** `path?query` with the given parameters (undefined ones left out). */
export function hrefOf(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Paging: a link to the next page (the list's `next_cursor` as `page_token`, the other parameters kept) and, when
 * this is not the first page, one back to the first. `param` names the token when a page has several lists.
 */
export function pager(
  request: DashboardRequest,
  path: string,
  nextCursor: string | undefined,
  param = 'page_token',
): Fragment {
  const keep: Record<string, string> = {};
  for (const [name, value] of request.query) if (name !== param) keep[name] = value;
  const first = request.query.has(param) ? html`<a href="${hrefOf(path, keep)}" rel="first">First page</a>` : html``;
  const next = nextCursor
    ? html`<a href="${hrefOf(path, { ...keep, [param]: nextCursor })}" rel="next">Next page</a>`
    : html``;
  return html`<nav class="pager" aria-label="Pages">${first} ${next}</nav>`;
}

/** The page token of the current request (`param`), if any. */
export function pageToken(request: DashboardRequest, param = 'page_token'): string | undefined {
  return request.query.get(param) ?? undefined;
}

/** A table with a caption and a header row; an empty list says so instead (the frame's, server/dashboard/ui.ts). */
export { csrfField, field, table };

/** A one-button form that posts `fields` (and the CSRF token) to `action`. */
export function buttonForm(
  request: DashboardRequest,
  action: string,
  fields: Record<string, string>,
  label: string,
): Fragment {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfField(request)}
    ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
    <button type="submit">${label}</button>
  </form>`;
}

/** An integer query parameter within bounds, else `fallback`. */
export function intParam(request: DashboardRequest, name: string, fallback: number, min: number, max: number): number {
  const value = Number(request.query.get(name));
  return Number.isInteger(value) && value >= min && value <= max ? value : fallback;
}

/** The refusals a page answers itself, with the status the HTTP face would give: what the key cannot reach, or may not do. */
const PAGE_REFUSALS: ReadonlySet<string> = new Set([
  'not_found',
  'forbidden',
  'unauthorized',
  'invalid_request',
  'conflict',
  'rate_limited',
]);

/**
 * A refused or failed operation as a page: its message (the operation's own words, which name only what the caller
 * gave) and the status the HTTP face would answer. Anything that is not an AppError is thrown on to the frame.
 */
export function problemAnswer(error: unknown): MoreAnswer {
  if (!(error instanceof AppError)) throw error;
  if (!PAGE_REFUSALS.has(error.code)) throw error;
  const { status } = HTTP_ERRORS[error.code];
  const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Could not do that';
  return { title, status, body: html`<p role="alert">${error.message}</p>` };
}

/** After a POST: back to `to`, with the operation's refusal (or `done`) as the notice. */
export async function afterPost(to: string, done: string, action: () => Promise<unknown>): Promise<MoreAnswer> {
  try {
    await action();
    return { redirect: to, notice: done };
  } catch (error) {
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'forbidden'))
      return problemAnswer(error);
    if (error instanceof AppError && PAGE_REFUSALS.has(error.code))
      return { redirect: to, notice: `Not done: ${error.message}` };
    throw error;
  }
}

/** Wraps a page's handlers so a refused operation renders as {@link problemAnswer} instead of failing the request. */
export function guarded(page: MorePage): MorePage {
  const get = page.get.bind(page);
  const post = page.post?.bind(page);
  return {
    ...page,
    get: async (request) => get(request).catch(problemAnswer),
    ...(post ? { post: async (request: DashboardRequest) => post(request).catch(problemAnswer) } : {}),
  };
}

/** A definition list of label and value pairs, leaving out absent values. */
export function facts(pairs: readonly (readonly [string, Html | string | number | undefined | null])[]): Fragment {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== '');
  return html`<dl class="facts">
    ${shown.map(
      ([label, value]) =>
        html`<dt>${label}</dt>
          <dd>${value}</dd>`,
    )}
  </dl>`;
}

/** Participants as `Name <address>`, comma-separated. */
export function people(list: readonly { name?: string | undefined; email: string }[] | undefined): string {
  return (list ?? []).map((person) => (person.name ? `${person.name} <${person.email}>` : person.email)).join(', ');
}

/** Path segment: `encodeURIComponent`, for ids placed in links. */
export const seg = (value: string): string => encodeURIComponent(value);
