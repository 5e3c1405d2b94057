/**
 * @module oauth/imap-form
 * The hosted login form for IMAP and CalDAV accounts (issue 38 item 6; Nylas hosts one): `GET /v3/connect/auth` with
 * `provider=imap` (or `icloud`) shows it instead of sending the browser to a provider. What the user types goes,
 * as the settings of `POST /v3/connect/custom`, through the same input schema and the same `grants.create` (the IMAP
 * and SMTP logins, then the CalDAV and CardDAV homes, checked before anything is stored); the sign-in then ends as an
 * OAuth one does, at the application's redirect URI with a code and its state. The flow travels sealed in the form's
 * hidden field (no row is kept), bound to the browser by the cookie of the OAuth flow, and every post carries the
 * CSRF token sealed in it. Passwords never leave the post's body: not in a URL, a log line or the form shown again.
 */
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { CreateGrantInputSchema } from '../schemas/grants.js';
import type { AuthorizeQuery } from '../schemas/oauth.js';
import type { BrowserStep, ImapFormAnswer, ImapFormPreset, ImapFormView } from './contracts.js';
import { equalText, errorStep, FLOW_TTL_MS, issueCode, openFlow, type FlowState } from './flow-state.js';
import type { OAuthState } from './oauth-state.js';

/** The presets of the form: the servers of the common password (app password) providers, and "other". */
export const IMAP_FORM_PRESETS: readonly ImapFormPreset[] = [
  {
    id: 'icloud',
    label: 'iCloud Mail',
    domains: ['icloud.com', 'me.com', 'mac.com'],
    imap: { host: 'imap.mail.me.com', port: 993 },
    smtp: { host: 'smtp.mail.me.com', port: 587 },
    caldavUrl: 'https://caldav.icloud.com',
    carddavUrl: 'https://contacts.icloud.com',
    hint: 'Use an app-specific password (appleid.apple.com, Sign-In and Security).',
  },
  {
    id: 'yahoo',
    label: 'Yahoo Mail',
    domains: ['yahoo.com', 'ymail.com', 'rocketmail.com'],
    imap: { host: 'imap.mail.yahoo.com', port: 993 },
    smtp: { host: 'smtp.mail.yahoo.com', port: 465 },
    caldavUrl: 'https://caldav.calendar.yahoo.com',
    hint: 'Use an app password (Account security, Generate app password).',
  },
  {
    id: 'fastmail',
    label: 'Fastmail',
    domains: ['fastmail.com', 'fastmail.fm'],
    imap: { host: 'imap.fastmail.com', port: 993 },
    smtp: { host: 'smtp.fastmail.com', port: 465 },
    caldavUrl: 'https://caldav.fastmail.com',
    carddavUrl: 'https://carddav.fastmail.com',
    hint: 'Use an app password (Settings, Privacy & Security, App passwords).',
  },
  {
    id: 'other',
    label: 'Other IMAP server',
    domains: [],
    hint: 'Give the servers of your mail provider below.',
  },
];

/** The form's text fields (the password aside: it is never shown again). */
const FIELDS = [
  'email',
  'username',
  'imap_host',
  'imap_port',
  'smtp_host',
  'smtp_port',
  'caldav_url',
  'carddav_url',
] as const;

/** The longest value a text field may carry (a URL at most). */
const MAX_FIELD = 2048;

/** The preset of a provider name or of an address's domain; "other" when none fits. */
/** The preset of any other server (the last). */
const OTHER_PRESET = IMAP_FORM_PRESETS[IMAP_FORM_PRESETS.length - 1]!;

function presetFor(provider: string, loginHint: string | undefined): ImapFormPreset {
  const byName = IMAP_FORM_PRESETS.find((preset) => preset.id === provider);
  if (byName) return byName;
  const domain = loginHint?.slice(loginHint.lastIndexOf('@') + 1).toLowerCase();
  return IMAP_FORM_PRESETS.find((preset) => domain !== undefined && preset.domains.includes(domain)) ?? OTHER_PRESET;
}

function view(
  sealed: string,
  flow: FlowState,
  preset: ImapFormPreset,
  values: Record<string, string>,
  error?: string,
): ImapFormView {
  return {
    flow: sealed,
    csrf: flow.t ?? '',
    preset: preset.id,
    presets: IMAP_FORM_PRESETS,
    values,
    redirectUri: flow.r,
    ...(error !== undefined ? { error } : {}),
  };
}

/**
 * The first step of a sign-in on the hosted IMAP form: the flow sealed for the form's hidden field, with a CSRF
 * token of its own, and the cookie value that binds it to this browser.
 */
export function imapFormStep(state: OAuthState, query: AuthorizeQuery, provider: string): BrowserStep {
  const binding = state.randomBytes(18).toString('base64url');
  const flow: FlowState = {
    a: query.client_id,
    r: query.redirect_uri,
    s: query.state,
    p: 'imap',
    c: query.code_challenge,
    m: query.code_challenge ? (query.code_challenge_method ?? 'plain').toLowerCase() : undefined,
    o: query.access_type === 'offline',
    v: '',
    cb: '',
    b: binding,
    x: state.clock.now().getTime() + FLOW_TTL_MS,
    t: state.randomBytes(24).toString('base64url'),
  };
  const values: Record<string, string> = query.login_hint ? { email: query.login_hint } : {};
  const sealed = state.secrets.seal(JSON.stringify(flow));
  return { form: view(sealed, flow, presetFor(provider, query.login_hint), values), binding };
}

/** A port as the schema wants it: digits become a number; anything else stays text, for the schema to name. */
function portOf(text: string | undefined): number | string | undefined {
  if (text === undefined) return undefined;
  return /^\d{1,5}$/.test(text) ? Number(text) : text;
}

/** The settings of `POST /v3/connect/custom` from the form's fields: blank fields take the preset's values. */
function settingsOf(preset: ImapFormPreset, values: Record<string, string>, password: string): Record<string, unknown> {
  const given = (name: string) => (values[name] !== undefined && values[name] !== '' ? values[name] : undefined);
  const settings: Record<string, unknown> = {
    email: given('email'),
    imap_username: given('username') ?? given('email'),
    imap_password: password,
    imap_host: given('imap_host') ?? preset.imap?.host,
    imap_port: portOf(given('imap_port')) ?? preset.imap?.port,
    smtp_host: given('smtp_host') ?? preset.smtp?.host,
    smtp_port: portOf(given('smtp_port')) ?? preset.smtp?.port,
    caldav_url: given('caldav_url') ?? preset.caldavUrl,
    carddav_url: given('carddav_url') ?? preset.carddavUrl,
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

/** The form's words for the settings the schema names. */
const LABELS: Record<string, string> = {
  'settings.email': 'Email address',
  'settings.imap_username': 'Login name',
  'settings.imap_password': 'Password',
  'settings.imap_host': 'IMAP server',
  'settings.imap_port': 'IMAP port',
  'settings.smtp_host': 'SMTP server',
  'settings.smtp_port': 'SMTP port',
  'settings.caldav_url': 'CalDAV URL',
  'settings.carddav_url': 'CardDAV URL',
};

/** The settings without which no account is tried (the preset gives the servers, unless it is "other"). */
const REQUIRED = ['email', 'imap_password', 'imap_host', 'imap_port', 'smtp_host', 'smtp_port'] as const;

/** `POST /v3/connect/imap` (see OAuthService.submitImapForm). */
export async function submitImapForm(
  state: OAuthState,
  fields: Record<string, string>,
  binding: string | undefined,
): Promise<ImapFormAnswer> {
  const sealed = fields.flow;
  const flow = openFlow(state, sealed);
  if (!flow || flow.p !== 'imap' || flow.t === undefined || binding === undefined || !equalText(flow.b, binding)) {
    throw new AppError(
      'invalid_request',
      'This sign-in was not started in this browser, or it took too long; start it again from the application.',
    );
  }
  if (!fields.csrf_token || !equalText(flow.t, fields.csrf_token)) {
    throw new AppError(
      'forbidden',
      'The form was not sent from this sign-in page (its CSRF token is missing or wrong).',
    );
  }
  if (fields.action === 'cancel') {
    return errorStep(flow.r, 'access_denied', 'The user cancelled the sign-in.', flow.s);
  }
  const values: Record<string, string> = {};
  for (const name of FIELDS) {
    const value = fields[name]?.trim();
    if (value) values[name] = value.slice(0, MAX_FIELD);
  }
  const preset = IMAP_FORM_PRESETS.find((entry) => entry.id === fields.preset) ?? OTHER_PRESET;
  const again = (error: string): ImapFormAnswer => ({ form: view(sealed!, flow, preset, values, error) });
  const settings = settingsOf(preset, values, (fields.password ?? '').slice(0, MAX_FIELD));
  const missing = REQUIRED.filter((name) => settings[name] === undefined || settings[name] === '');
  if (missing.length > 0) {
    return again(`Please give ${missing.map((name) => LABELS[`settings.${name}`]).join(', ')}.`);
  }
  const input = CreateGrantInputSchema.safeParse({ provider: 'imap', settings });
  if (!input.success) {
    return again(
      input.error.issues
        .map((issue) => {
          const path = issue.path.join('.');
          return `${LABELS[path] ?? path}: ${issue.message}`;
        })
        .join(' '),
    );
  }
  const principal: Principal = { applicationId: flow.a, via: 'local' };
  let grantId: string;
  try {
    grantId = (await state.grants.create(principal, input.data)).grant.id;
  } catch (error) {
    if (error instanceof AppError && error.code !== 'internal') {
      state.logger.info('oauth: the hosted IMAP form refused', { application_id: flow.a, reason: error.message });
      return again(error.message);
    }
    state.logger.warn('oauth: the hosted IMAP form failed', { application_id: flow.a, error: String(error) });
    return again('The account could not be connected; try again.');
  }
  return { location: await issueCode(state, flow, grantId, [], undefined) };
}
