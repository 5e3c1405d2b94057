/**
 * @module server/dashboard
 * The dashboard (docs/dashboard.md), served by the HTTP role under `AGENTPOST_DASHBOARD_PATH` (default `/dashboard`):
 * sign-in with an API key into a server-side session, CSRF tokens on every form, a strict Content-Security-Policy,
 * and pages (./contracts.ts) that read and write only through the operations, as the signed-in key on the
 * `dashboard` face (scope, permissions and the access log apply as on `/v3`).
 *
 * It is an app of its own behind one wildcard route of the service's app, so the service's middleware (request id,
 * path limits, shutdown, the request log) applies, and the OpenAPI document (the `/v3` API) does not list its pages.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie } from 'hono/cookie';
import { matchedRoutes } from 'hono/route';
import { ZodError } from 'zod';
import {
  AppError,
  HTTP_ERRORS,
  describeZodError,
  PERMISSIONS,
  operations,
  runOperation,
  type AnyOperation,
  type Core,
  type DashboardSession,
} from '../../src/index.js';
import { normalizeTimeZone } from '../../src/time-zones.js';
import type { AppEnv } from '../types.js';
import { contentDisposition } from '../routes/attachments.js';
import { peerAddress, type RateLimiter } from '../middleware/rate-limit.js';
import type { DashboardPage, DashboardRequest, Html, PageAnswer } from './contracts.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import { layout, signInBody } from './layout.js';
import {
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  TIME_ZONE_COOKIE,
  clearSessionCookie,
  clearSignInCookie,
  sameToken,
  securityHeaders,
  framePolicy,
  setNotice,
  setSessionCookie,
  setSignInCookie,
  takeNotice,
} from './session.js';
import { errorBox } from './ui.js';
import { FIRST_PAGES } from './pages/first.js';
import { MORE_PAGES } from './pages/more.js';

/** A dashboard form is small: 64 KB is far more than any of its forms carries. */
const MAX_FORM_BYTES = 64 * 1024;

/** The dashboard app's environment: the service's request context it runs inside. */
interface DashboardEnv {
  Bindings: { parent: Context<AppEnv> };
}
type DashboardContext = Context<DashboardEnv>;

/** Options of {@link mountDashboard}. */
export interface MountDashboardOptions {
  core: Core;
  /** The service's limiter: failed sign-ins count as failed authentications of the client address. */
  limiter: RateLimiter;
  /** The pages (default: the frame's own and MORE_PAGES). */
  pages?: readonly DashboardPage[];
}

/** Where a frame document carries its own policy to the dashboard's middleware (removed before the answer leaves). */
const FRAME_POLICY_HEADER = 'x-agentpost-frame-policy';

/** The answer of a page that answers a file (a download) or a frame's document instead of a page; else undefined. */
function fileAnswer(c: DashboardContext, answered: Exclude<PageAnswer, { redirect: string }>): Response | undefined {
  if (answered.download) {
    const { filename, contentType, bytes } = answered.download;
    return c.body(new Uint8Array(bytes), 200, {
      'content-type': contentType,
      'content-disposition': contentDisposition('attachment', filename),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
  }
  if (answered.frameDocument) {
    // Its own policy, not the dashboard's (a srcdoc document would inherit that one, which refuses inline styles),
    // with the frame's sandbox repeated, shown only inside the dashboard's own pages.
    const { html: document, csp } = answered.frameDocument;
    return c.body(document, 200, {
      'content-type': 'text/html; charset=utf-8',
      [FRAME_POLICY_HEADER]: framePolicy(csp),
      'x-frame-options': 'SAMEORIGIN',
      'cache-control': 'no-store',
    });
  }
  return undefined;
}

/** Mounts the dashboard on the service's app at `AGENTPOST_DASHBOARD_PATH`; nothing when it is empty. */
export function mountDashboard(app: Hono<AppEnv>, options: MountDashboardOptions): void {
  const base = options.core.deps.config.dashboard.path;
  if (!base) return;
  const dashboard = createDashboardApp(base, options);
  // One wildcard route (it matches `${base}` itself too): its own router answers the rest.
  app.all(`${base}/*`, (c) => dashboard.fetch(c.req.raw, { parent: c }));
}

function createDashboardApp(
  base: string,
  { core, limiter, pages = [...FIRST_PAGES, ...MORE_PAGES] }: MountDashboardOptions,
) {
  const { config } = core.deps;
  const sessionSeconds = config.dashboard.sessionSeconds;
  const byName = new Map<string, AnyOperation>(operations.map((operation) => [operation.name, operation]));
  const dashboard = new Hono<DashboardEnv>();
  const frame = { core, base, byName };

  const render = (c: DashboardContext, title: string, body: Html, status = 200, session?: DashboardSession) =>
    c.html(
      layout(
        {
          base,
          path: c.req.path.slice(base.length) || '/',
          pages,
          session: session ? { keyName: session.principal.key?.name ?? '', csrf: session.csrf } : undefined,
          notice: takeNotice(c, config, base),
        },
        title,
        body,
      ),
      status as 200,
    );
  const redirect = (c: DashboardContext, to: string, notice?: string) => {
    if (notice) setNotice(c, config, base, notice);
    return c.redirect(to, 303);
  };

  dashboard.use('*', async (c: DashboardContext, next) => {
    await next();
    // The service's request log and metrics name the dashboard's route, not its wildcard.
    const route = matchedRoutes(c).at(-1)?.path;
    c.env.parent.set('route', route && !route.endsWith('*') ? route : `${base}/*`);
    // A frame document keeps the policy it was answered with; every other answer gets the dashboard's.
    if (c.res.headers.has(FRAME_POLICY_HEADER)) {
      c.res.headers.set('content-security-policy', c.res.headers.get(FRAME_POLICY_HEADER)!);
      c.res.headers.delete(FRAME_POLICY_HEADER);
      c.res.headers.set('x-content-type-options', 'nosniff');
      c.res.headers.set('referrer-policy', 'no-referrer');
    } else securityHeaders(c);
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  });
  dashboard.onError((error, c) => {
    if (error instanceof AppError) {
      const { status } = HTTP_ERRORS[error.code];
      return render(c, status === 429 ? 'Too many attempts' : 'Refused', errorBox(error.message), status);
    }
    c.env.parent.get('logger').error('dashboard page failed', { error: String(error), path: c.req.path });
    return render(c, 'Something went wrong', errorBox('The page failed; the service log has the details.'), 500);
  });
  dashboard.notFound((c) => render(c, 'Not found', errorBox(`No dashboard page ${c.req.path}.`), 404));

  const asset = (body: string, type: string) => (c: DashboardContext) =>
    c.body(body, 200, { 'content-type': type, 'cache-control': 'public, max-age=3600' });
  dashboard.get(`${base}/assets/dashboard.css`, asset(DASHBOARD_CSS, 'text/css; charset=utf-8'));
  dashboard.get(`${base}/assets/dashboard.js`, asset(DASHBOARD_JS, 'text/javascript; charset=utf-8'));
  const formLimit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', 'The form is larger than 64 KB.');
    },
  });

  dashboard.get(`${base}/sign-in`, async (c) => {
    const session = await currentSession(c);
    if (session) return c.redirect(`${base}/`, 303);
    const token = core.deps.randomBytes(32).toString('base64url');
    setSignInCookie(c, config, base, token);
    return render(c, 'Sign in', signInBody(base, token));
  });

  dashboard.post(`${base}/sign-in`, formLimit, async (c) => {
    const form = await readForm(c);
    if (!sameToken(form._csrf, getCookie(c, SIGN_IN_COOKIE)))
      return render(c, 'Refused', errorBox('The sign-in form was not valid: open the sign-in page again.'), 403);
    const parent = c.env.parent;
    limiter.checkAddress(parent);
    let session: DashboardSession;
    try {
      // A new sign-in ends the session this browser had (session fixation hygiene): its id stops working at once.
      session = await core.accounts.applications.openDashboardSession(
        form.key ?? '',
        sessionSeconds,
        getCookie(c, SESSION_COOKIE),
      );
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'unauthorized') throw error;
      limiter.failedAuthentication(parent);
      recordRefusal(core, parent, error);
      const token = core.deps.randomBytes(32).toString('base64url');
      setSignInCookie(c, config, base, token);
      return render(c, 'Sign in', signInBody(base, token, 'That key is not valid (unknown, revoked or expired).'), 401);
    }
    clearSignInCookie(c, config, base);
    setSessionCookie(c, config, base, session.sessionId, sessionSeconds);
    return c.redirect(`${base}/`, 303);
  });

  dashboard.post(`${base}/sign-out`, formLimit, async (c) => {
    const session = await currentSession(c);
    if (!session) return redirect(c, `${base}/sign-in`);
    const form = await readForm(c);
    if (!sameToken(form._csrf, session.csrf)) return refuseCsrf(c, session);
    await core.accounts.applications.closeDashboardSession(session.sessionId);
    clearSessionCookie(c, config, base);
    return redirect(c, `${base}/sign-in`, 'Signed out.');
  });

  /** The request's session, or undefined (its cookie is then removed). */
  async function currentSession(c: DashboardContext): Promise<DashboardSession | undefined> {
    const id = getCookie(c, SESSION_COOKIE);
    if (id === undefined) return undefined;
    const session = await core.accounts.applications.resumeDashboardSession(id);
    if (!session) {
      clearSessionCookie(c, config, base);
      return undefined;
    }
    // The request log names the application, and a page counts against its budget as a /v3 request does.
    c.env.parent.set('principal', session.principal);
    limiter.take(c.env.parent, {});
    return session;
  }

  function refuseCsrf(c: DashboardContext, session: DashboardSession) {
    return render(
      c,
      'Refused',
      errorBox('This form was not sent from this dashboard (its CSRF token is missing or wrong): open the page again.'),
      403,
      session,
    );
  }

  async function answer(c: DashboardContext, session: DashboardSession, produce: () => Promise<PageAnswer>) {
    let answered: PageAnswer;
    try {
      answered = await produce();
    } catch (error) {
      // A refusal of an operation (403 outside the key's permissions, 404 outside its scope) is a page, not a crash.
      if (!(error instanceof AppError)) throw error;
      const { status } = HTTP_ERRORS[error.code];
      const title = status === 403 ? 'Not permitted' : status === 404 ? 'Not found' : 'Could not do that';
      return render(c, title, errorBox(error.message), status, session);
    }
    if ('redirect' in answered) return redirect(c, answered.redirect, answered.notice);
    const file = fileAnswer(c, answered);
    if (file) return file;
    return render(c, answered.title, answered.body, answered.status ?? 200, session);
  }

  for (const page of pages) {
    const paths = page.path === '/' ? [`${base}/`, base] : [`${base}${page.path}`];
    for (const path of paths) {
      dashboard.get(path, async (c) => {
        const session = await currentSession(c);
        if (!session) return signedOut(c);
        return answer(c, session, () => page.get(requestFor(frame, c, session, undefined)));
      });
      dashboard.post(path, formLimit, async (c) => {
        const session = await currentSession(c);
        if (!session) return signedOut(c);
        const form = await readForm(c);
        if (!sameToken(form._csrf, session.csrf)) return refuseCsrf(c, session);
        delete form._csrf;
        if (!page.post) return render(c, 'Not allowed', errorBox('This page takes no form.'), 405, session);
        return answer(c, session, () => page.post!(requestFor(frame, c, session, form)));
      });
    }
  }

  /** No session (never signed in, expired, signed out elsewhere, or its key revoked): to the sign-in page. */
  function signedOut(c: DashboardContext) {
    const hadCookie = getCookie(c, SESSION_COOKIE) !== undefined;
    return redirect(
      c,
      `${base}/sign-in`,
      hadCookie ? 'Your session ended (it expired, or its key was revoked): sign in again.' : undefined,
    );
  }

  return dashboard;
}

/** What a page is given: the request, and `run`, which calls an operation as the session's key on the dashboard face. */
function requestFor(
  frame: { core: Core; base: string; byName: ReadonlyMap<string, AnyOperation> },
  c: DashboardContext,
  session: DashboardSession,
  form: Record<string, string> | undefined,
): DashboardRequest {
  const { core, base, byName } = frame;
  const { principal } = session;
  const parent = c.env.parent;
  const origin = new URL(c.req.url).origin;
  return {
    base,
    params: c.req.param(),
    query: new URL(c.req.url).searchParams,
    form,
    csrf: session.csrf,
    key: {
      id: principal.key?.id ?? '',
      name: principal.key?.name ?? '',
      permissions: principal.permissions ? [...principal.permissions] : [...PERMISSIONS],
    },
    now: () => Math.floor(core.deps.clock.now().getTime() / 1000),
    timeZone: normalizeTimeZone(getCookie(c, TIME_ZONE_COOKIE) ?? ''),
    run: (name, input) => {
      const operation = byName.get(name);
      if (!operation) throw new Error(`The dashboard asked for an unknown operation ${name}.`);
      return runOperation(operation, core, input, {
        principal,
        face: 'dashboard',
        requestId: parent.get('requestId'),
        address: peerAddress(parent),
        origin,
      }).catch((error: unknown) => {
        // A form's value the schema refuses is the person's mistake (400, shown in place), not a failed page.
        if (error instanceof ZodError)
          throw new AppError('invalid_request', describeZodError(error), undefined, { cause: error });
        throw error;
      });
    },
  };
}

/** A urlencoded (or multipart) form's text fields; files are dropped. */
async function readForm(c: DashboardContext): Promise<Record<string, string>> {
  const body = await c.req.parseBody().catch(() => ({}));
  const form: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') form[name] = value;
  return form;
}

/** Records a refused sign-in in the access log, as a refused Bearer key is (server/middleware/auth.ts). */
function recordRefusal(core: Core, parent: Context<AppEnv>, error: AppError): void {
  const known = error.details as { applicationId?: string; key?: { id: string; name: string } } | undefined;
  core.accessLog.record({
    applicationId: known?.applicationId,
    key: known?.key,
    face: 'dashboard',
    operation: 'authenticate',
    status: HTTP_ERRORS.unauthorized.status,
    errorType: HTTP_ERRORS.unauthorized.type,
    address: peerAddress(parent),
    requestId: parent.get('requestId'),
  });
}
