/**
 * @module applications/contracts
 * The applications area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
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
  created_at: number;
}

/** An API key's listing (never the key itself). */
export interface ApiKeyInfo {
  id: string;
  application_id: string;
  name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
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
  /** Creates an application with its default workspace and a first API key. */
  createApplication(input: { name: string; plan: Plan }): Promise<{
    application: ApplicationInfo;
    apiKey: string;
  }>;
  /** Every application. */
  listApplications(): Promise<ApplicationInfo[]>;
  /** The application with this id, or a 404. */
  getApplication: (applicationId: string) => Promise<ApplicationInfo>;
  /** Issues a new API key; the key is returned once and only its hash is kept. */
  createKey(
    applicationId: string,
    name?: string,
  ): Promise<{
    id: string;
    apiKey: string;
  }>;
  /** An application's keys, revoked ones included. */
  listKeys(applicationId: string): Promise<ApiKeyInfo[]>;
  /** Revokes a key at once; requests with it get 401 from then on. */
  revokeKey(applicationId: string, keyId: string): Promise<void>;
  /** Resolves a Bearer key to its application; anything else is a 401. */
  authenticateApiKey(key: string | undefined): Promise<Principal>;
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
