/**
 * @module applications/contracts
 * The applications area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { KeyScope, Permission, Principal } from '../access.js';
import type {
  ApplicationDetails,
  CreateRedirectUriInput,
  RedirectUri,
  UpdateApplicationInput,
  UpdateRedirectUriInput,
} from '../schemas/applications.js';

/** What createApplicationDetailsService() returns (src/applications/application-details.ts). */
export interface ApplicationDetailsService {
  /** The calling application's details, with its redirect URIs as `callback_uris`. */
  details(principal: Principal): Promise<ApplicationDetails>;
  listRedirectUris: (principal: Principal) => Promise<RedirectUri[]>;
  findRedirectUri(principal: Principal, id: string): Promise<RedirectUri>;
  createRedirectUri(principal: Principal, input: CreateRedirectUriInput): Promise<RedirectUri>;
  updateRedirectUri(principal: Principal, input: UpdateRedirectUriInput): Promise<RedirectUri>;
  destroyRedirectUri(principal: Principal, id: string): Promise<void>;
  /**
   * Updates the calling application (`PATCH /v3/applications`): each part given replaces that part whole; the
   * redirect URIs given are the whole new list. Answers the details as they are then.
   */
  update(principal: Principal, input: UpdateApplicationInput): Promise<ApplicationDetails>;
}

/** An application's plan. */
export type Plan = 'trial' | 'production';

/** An application as the CLI shows it. */
export interface ApplicationInfo {
  id: string;
  name: string;
  plan: Plan;
  is_default: boolean;
  /** A test-mode application (`apps create --test`): its clock moves only when told (docs/testing-agents.md). */
  test_mode: boolean;
  created_at: number;
}

/** An API key's listing (never the key itself). */
export interface ApiKeyInfo {
  id: string;
  application_id: string;
  name: string;
  prefix: string;
  /** What the key reaches; `{}`: the whole application. */
  scope: KeyScope;
  /** What it may do (every permission for a key made without a list). */
  permissions: Permission[];
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
  /** The key that made it (null: the CLI, the bootstrap or AGENTPOST_API_KEY). */
  created_by: string | null;
  revoked_at: number | null;
  /** An agent's key: its sends are agent sends (docs/oversight.md). */
  agent: boolean;
}

/** What a new key is made with (issue 36): each absent field inherits the creating key's (all, for the CLI). */
export interface KeyOptions {
  name?: string | undefined;
  scope?: KeyScope | undefined;
  permissions?: readonly Permission[] | undefined;
  /** Unix seconds. */
  expiresAt?: number | undefined;
  /** An agent's key (absent: the creator's; a key made by an agent's key is an agent's too). */
  agent?: boolean | undefined;
  /** The principal making the key: the new key may be no wider than it (absent: the CLI or bootstrap). */
  creator?: Principal | undefined;
}

/**
 * A service account's credentials file, in the form Nylas hands out (`name`, `type`, `private_key_id`,
 * `private_key`, `organization_id`, `region`). The SDK's `ServiceAccountSigner` takes
 * `{ privateKeyPem: private_key, privateKeyId: private_key_id }`.
 */
export interface ServiceAccountCredentials {
  name: string;
  type: 'service_account';
  /** Sent as `X-Nylas-Kid`. */
  private_key_id: string;
  /** PKCS#8 PEM; only this file holds it (the service keeps the public half). */
  private_key: string;
  /** The application, as Domain objects call it. */
  organization_id: string;
  application_id: string;
  region: 'us';
}

/** Headers of a service-account-signed request. */
export interface SignedRequest {
  keyId: string;
  timestamp: string;
  nonce: string;
  signature: string;
  method: string;
  path: string;
  body: string | undefined;
}

/** A dashboard session (docs/dashboard.md): its id (the cookie's value, never stored), CSRF token and key's principal. */
export interface DashboardSession {
  sessionId: string;
  /** The token every dashboard form carries (derived from the session id). */
  csrf: string;
  /** The signing-in key's principal, as of this request. */
  principal: Principal;
  /** Unix seconds. */
  expiresAt: number;
}

/** What createApplicationService() returns (src/applications/application-service.ts): applications, their API keys and service accounts, and authentication of requests. */
export interface ApplicationService {
  /**
   * First-start bootstrap: makes the default application and its key when the database is empty, and makes
   * `AGENTPOST_API_KEY` a valid key of it. Returns the key when one was generated (to be printed once).
   */
  ensureDefaultApplication(): Promise<{
    application: ApplicationInfo;
    generatedKey?: string;
  }>;
  /** The default application's id. */
  defaultApplicationId(): Promise<string>;
  /**
   * Creates an application with its default workspace and a first API key; `testMode`: a test-mode application, whose
   * clock starts at the real time of its creation and then moves only when told ({@link advanceTestClock}).
   */
  createApplication(input: { name: string; plan: Plan; testMode?: boolean | undefined }): Promise<{
    application: ApplicationInfo;
    apiKey: string;
  }>;
  /** Every application. */
  listApplications(): Promise<ApplicationInfo[]>;
  /**
   * A test-mode application's virtual time (unix ms), or undefined for a production application (remembered: an
   * application never changes mode, so a production application costs no read after its first).
   */
  testClockOf(applicationId: string): Promise<number | undefined>;
  /**
   * Moves a test-mode application's clock to `at` (unix ms): false when it stands later already (never backwards) or
   * the application is not in test mode.
   */
  advanceTestClock(applicationId: string, at: number): Promise<boolean>;
  /** The application with this id, or a 404. */
  getApplication: (applicationId: string) => Promise<ApplicationInfo>;
  /**
   * Issues a new API key; the key is returned once and only its hash is kept. With a creator, the key may be no
   * wider than it (scope, permissions, expiry): a 403 names what is wider.
   */
  createKey(applicationId: string, options?: KeyOptions): Promise<{ id: string; apiKey: string; info: ApiKeyInfo }>;
  /** An application's keys, revoked ones included; a viewer narrower than the application sees the keys it made. */
  listKeys(applicationId: string, viewer?: Principal): Promise<ApiKeyInfo[]>;
  /** One key as {@link listKeys} shows it to the viewer, or a 404. */
  getKey(applicationId: string, keyId: string, viewer?: Principal): Promise<ApiKeyInfo>;
  /** Revokes a key at once (one the viewer may see); requests with it get 401 from then on. */
  revokeKey(applicationId: string, keyId: string, viewer?: Principal): Promise<void>;
  /**
   * Resolves a Bearer key to its application, the grants it reaches and its permissions; a missing, unknown,
   * revoked or expired key is a 401.
   */
  authenticateApiKey(key: string | undefined): Promise<Principal>;
  /**
   * Signs in to the dashboard with an API key (a 401 when the key is not valid): a session of `lifetimeSeconds`,
   * stored as the SHA-256 of its id with the key's id (never the key). `replacing`: the id of the session the
   * browser had, deleted in the same write (a new sign-in never leaves the old session usable).
   */
  openDashboardSession(key: string, lifetimeSeconds: number, replacing?: string): Promise<DashboardSession>;
  /** The session with this id as of now; undefined when unknown, expired, or its key is revoked or expired. */
  resumeDashboardSession(sessionId: string): Promise<DashboardSession | undefined>;
  /** Signs a dashboard session out. */
  closeDashboardSession(sessionId: string): Promise<void>;
  /**
   * Issues a service account: an RSA key pair whose public half is kept. The private key is returned once,
   * in the form the `nylas` SDK's `ServiceAccountSigner` takes (`privateKeyPem`, `privateKeyId`).
   */
  createServiceAccount(applicationId: string): Promise<ServiceAccountCredentials>;
  /**
   * Verifies a service-account signature: known key id, timestamp within five minutes, a nonce never seen
   * before (remembered until the window passes), and an RSA-SHA256 signature over the canonical request.
   */
  authenticateSignedRequest(request: SignedRequest): Promise<Principal>;
}
