/**
 * @module oauth/flow-state
 * What the browser's steps of a sign-in share, whether at a provider (./hosted-flow.ts) or on the hosted IMAP form
 * (./imap-form.ts): the flow sealed by the secret box (no row is kept while the user signs in), the OAuth errors and
 * the code sent to the application's redirect URI.
 */
import { timingSafeEqual } from 'node:crypto';
import { insertIssuedToken } from './oauth-store.js';
import type { OAuthState } from './oauth-state.js';

/** How long a user may stay at the provider's consent page (the sealed state's lifetime). */
export const FLOW_TTL_MS = 15 * 60_000;

/** How long the code given to the application may wait for its exchange (RFC 6749 §4.1.2: at most 10 minutes). */
const CODE_TTL_MS = 10 * 60_000;

/**
 * What travels sealed through the provider (short keys: it is a URL parameter), or in the hosted IMAP form's hidden
 * field.
 */
export interface FlowState {
  /** application id */
  a: string;
  /** the application's redirect URI */
  r: string;
  /** the application's state */
  s?: string | undefined;
  /** provider */
  p: string;
  /** PKCE challenge and method of the application */
  c?: string | undefined;
  m?: string | undefined;
  /** offline access asked */
  o: boolean;
  /** this service's PKCE verifier towards the provider */
  v: string;
  /** this service's callback URL (the redirect URI sent to the provider) */
  cb: string;
  /** the browser binding (the cookie's value) */
  b: string;
  /** expiry, Unix ms */
  x: number;
  /** admin consent */
  ac?: boolean | undefined;
  /** the hosted IMAP form's CSRF token (its posts carry it) */
  t?: string | undefined;
}

/** Adds OAuth parameters to a redirect URI, keeping its own query. */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

export function equalText(left: string, right: string): boolean {
  const a = Buffer.from(left);
  const b = Buffer.from(right);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** An OAuth error sent back to the application's redirect URI (RFC 6749 §4.1.2.1). */
export function errorStep(
  redirectUri: string,
  error: string,
  description: string,
  state: string | undefined,
): { location: string } {
  return { location: withParams(redirectUri, { error, error_description: description, state }) };
}

/** The sealed state opened, or undefined when it is not one of this service's or has expired. */
export function openFlow(state: OAuthState, sealed: string | undefined): FlowState | undefined {
  if (!sealed || sealed.length > 4096) return undefined;
  try {
    const flow = JSON.parse(state.secrets.open(sealed)) as FlowState;
    return flow.x > state.clock.now().getTime() ? flow : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Issues the application's code (one use, 10 minutes) for the grant a flow made, and answers the redirect URI that
 * carries it with the application's state.
 */
export async function issueCode(
  state: OAuthState,
  flow: FlowState,
  grantId: string,
  scope: string[],
  idToken: string | undefined,
): Promise<string> {
  const code = state.randomBytes(32).toString('base64url');
  const atMs = state.clock.now().getTime();
  await state.db.write((tx) =>
    insertIssuedToken(tx, code, {
      kind: 'code',
      applicationId: flow.a,
      grantId,
      redirectUri: flow.r,
      codeChallenge: flow.c ?? null,
      codeChallengeMethod: flow.m ?? null,
      offline: flow.o,
      idTokenSealed: idToken ? state.secrets.seal(idToken) : null,
      scope,
      expiresAt: atMs + CODE_TTL_MS,
      createdAt: atMs,
    }),
  );
  return withParams(flow.r, { code, state: flow.s });
}
