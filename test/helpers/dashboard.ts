/**
 * A person's browser on the dashboard, without a browser: fetch with a cookie jar (cookies as the server set them,
 * by name), redirects not followed, and the CSRF token read from the last page's forms.
 */

/** One answer of the dashboard. */
export interface DashboardAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** `Location` of a redirect, when any. */
  location: string | null;
  /** The raw `Set-Cookie` lines of this answer. */
  setCookies: string[];
}

/** A cookie-keeping client of one service's dashboard. */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that had a form. */
  csrf: string | undefined;

  constructor(
    readonly url: string,
    readonly base = '/dashboard',
  ) {}

  private async send(method: string, path: string, form?: Record<string, string>): Promise<DashboardAnswer> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${this.url}${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return {
      status: response.status,
      headers: response.headers,
      text,
      location: response.headers.get('location'),
      setCookies,
    };
  }

  get(path: string): Promise<DashboardAnswer> {
    return this.send('GET', path);
  }

  /** POSTs a form; the last CSRF token is added unless `csrf` is given (`null`: none at all). */
  post(path: string, fields: Record<string, string>, csrf?: string | null): Promise<DashboardAnswer> {
    const token = csrf === undefined ? this.csrf : csrf;
    return this.send('POST', path, { ...fields, ...(token !== null && token !== undefined ? { _csrf: token } : {}) });
  }

  /** Opens the sign-in page and signs in with `key`; answers the sign-in POST's answer. */
  async signIn(key: string): Promise<DashboardAnswer> {
    await this.get('/sign-in');
    return this.post('/sign-in', { key });
  }
}
