/**
 * @module access
 * Who is calling, and with what rights: the principal a face authenticated, the context an operation runs in, and the
 * details a refusal for a spent budget carries. Areas and operations both use these, so they live below both.
 */

/**
 * What a key may do, named by what it allows (docs/keys.md lists the operations of each). A key made without a list
 * has all of them within its scope.
 */
export const PERMISSIONS = [
  'mail.read',
  'mail.write',
  'mail.send',
  'drafts.write',
  'calendar.read',
  'calendar.write',
  'contacts.read',
  'contacts.write',
  'webhooks.manage',
  'admin',
  'keys.manage',
  'approvals.decide',
] as const;

/** One of {@link PERMISSIONS}. */
export type Permission = (typeof PERMISSIONS)[number];

/** A key's reach as stored and answered: absent or empty lists mean the whole application. */
export interface KeyScope {
  workspace_ids?: string[] | undefined;
  grant_ids?: string[] | undefined;
}

/** The key a principal authenticated with, for the access log and the provenance of sends. */
export interface PrincipalKey {
  id: string;
  name: string;
  /** The scope the key was made with (its grants are resolved into {@link Principal.grantIds}). */
  scope?: KeyScope | undefined;
  /** Unix seconds; absent, the key does not expire. */
  expiresAt?: number | undefined;
  /** Whether the key is marked as an agent's (its sends count as agent sends, docs/oversight.md). */
  agent?: boolean | undefined;
}

/** Who is calling: the application every query is scoped to, and what within it the caller may reach and do. */
export interface Principal {
  applicationId: string;
  /** How the caller proved it. */
  via: 'api_key' | 'service_account' | 'local';
  /** The API key, when {@link via} is `api_key`. */
  key?: PrincipalKey | undefined;
  /**
   * The grants this principal may reach (a key scoped to grants or workspaces, resolved when it authenticated);
   * undefined: every grant of the application, and the application's own objects (webhooks, policies, …).
   */
  grantIds?: ReadonlySet<string> | undefined;
  /** What it may do; undefined: everything. */
  permissions?: ReadonlySet<Permission> | undefined;
}

/** The face a call came through, for the access log and the provenance of sends. */
export type AccessFace = 'http' | 'mcp' | 'ai-sdk' | 'smtp' | 'dashboard' | 'review-link' | 'worker';

/** The agent host behind an MCP call: the `clientInfo` of its `initialize` and the session, when known. */
export interface ClientInfo {
  name?: string | undefined;
  version?: string | undefined;
  session?: string | undefined;
}

/** What a handler gets besides its input. */
export interface OperationContext {
  principal: Principal;
  requestId?: string | undefined;
  /** The face the call came through (absent: an in-process call, as from a background job). */
  face?: AccessFace | undefined;
  /** The MCP client and session, for calls through MCP. */
  client?: ClientInfo | undefined;
  /** The tool name, for calls through MCP or the AI SDK (the operation's name, or a composite tool's). */
  tool?: string | undefined;
  /** The client's network address, when the face knows it. */
  address?: string | undefined;
  /** The origin (`scheme://host:port`) an HTTP call reached, for URLs handed back to that client. */
  origin?: string | undefined;
  /** The `Idempotency-Key` header of an HTTP call, when sent. */
  idempotencyKey?: string | undefined;
  /**
   * Called when the answer is the one stored for an earlier request with the same Idempotency-Key (a replay: nothing
   * was done again). HTTP answers such a replay with the header `Idempotent-Response: true`, as Nylas does.
   */
  onIdempotentReplay?: (() => void) | undefined;
  /** Fires when the caller went away (the HTTP client disconnected): long work may stop. */
  signal?: AbortSignal | undefined;
}

/** `details` of a `rate_limited` AppError: how long to wait, sent as `Retry-After`. */
export interface RateLimitDetails {
  retryAfterSeconds: number;
}

/**
 * `details` of an `unauthorized` AppError whose key was known (revoked, expired): the access log records the refusal
 * against its application and key. Never sent to the client.
 */
export interface RefusedKey {
  applicationId: string;
  key: { id: string; name: string };
}
