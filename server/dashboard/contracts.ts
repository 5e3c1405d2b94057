/**
 * The dashboard's seam between its frame (sign-in, session, CSRF, layout, routing: server/dashboard/index.ts) and its
 * pages (server/dashboard/pages/*). A page reads and writes only through `run`, the same operations as `/v3`, as the
 * signed-in key (its scope and permissions apply); it renders with `hono/html` (every interpolation escaped).
 */
import type { HtmlEscapedString } from 'hono/utils/html';

/** Rendered markup: what `html\`…\`` from `hono/html` returns. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** One request to a dashboard page, after sign-in and (for a POST) the CSRF check. */
export interface DashboardRequest {
  /**
   * Runs the registered operation `name` (src/operations) as the signed-in key, on the `dashboard` face, through
   * `runOperation` (validation, permissions, scope, the access log). Throws the operation's `AppError` as on `/v3`.
   */
  run(name: string, input: Record<string, unknown>): Promise<unknown>;
  /** The mount path without a trailing slash, e.g. `/dashboard`; links are `${base}/…`. */
  readonly base: string;
  /** The route's path parameters (`/webhooks/:id` → `{ id }`). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** A POST's form fields (urlencoded), CSRF already checked and `_csrf` removed; undefined on GET. */
  readonly form: Readonly<Record<string, string>> | undefined;
  /** The session's CSRF token, for `<input type="hidden" name="_csrf" value="…">` in every form. */
  readonly csrf: string;
  /** The signed-in key: its id, name and permissions (the frame hides what the key may not do). */
  readonly key: { readonly id: string; readonly name: string; readonly permissions: readonly string[] };
  /** The service's clock in unix seconds (core.deps.clock), for times a form gives relatively (expires in N days). */
  readonly now: () => number;
  /**
   * The viewer's IANA time zone, as the dashboard's script reported it (cookie `agentpost_time_zone`, checked);
   * undefined without the script or for a name that is not a time zone.
   */
  readonly timeZone?: string | undefined;
}

/** What a page answers: markup inside the layout, or a redirect (after a POST) with an optional one-line notice. */
export type PageAnswer =
  | {
      readonly title: string;
      readonly body: Html;
      /** The status of the page (an operation's refusal rendered as a page: 403, 404, 409, …); default 200. */
      readonly status?: number;
      /** A file to answer instead of the page (an attachment): sent as a download, never rendered. */
      readonly download?: { readonly filename: string; readonly contentType: string; readonly bytes: Uint8Array };
      /**
       * A document to answer instead of the page (a message body for the viewer's sandboxed frame), under its own
       * Content-Security-Policy (`csp`), framable only by the dashboard, never rendered in the layout.
       */
      readonly frameDocument?: { readonly html: string; readonly csp: string };
    }
  | { readonly redirect: string; readonly notice?: string };

/** A page: a path under the mount (Hono syntax), an optional entry in the navigation, a GET and optionally a POST. */
export interface DashboardPage {
  readonly path: string;
  readonly nav?: { readonly label: string; readonly order: number };
  get(request: DashboardRequest): Promise<PageAnswer>;
  post?(request: DashboardRequest): Promise<PageAnswer>;
}
