/**
 * @module config-types
 * The parsed configuration (`Config`), as `loadConfig` (./config.ts) returns it and every part of the service
 * receives it.
 */

export const ROLES = ['http', 'smtp', 'worker'] as const;

/** One part of a service process: the HTTP API (and `/mcp`), the inbound SMTP listener, the background work. */
export type Role = (typeof ROLES)[number];

/** The parsed configuration handed to every part of the service. */
export interface Config {
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  host: string;
  httpPort: number;
  smtpPort: number;
  /** Concurrent inbound SMTP connections in all; more are answered 421 at the greeting. */
  smtpMaxConnections: number;
  /** Concurrent inbound SMTP connections from one client (an IPv4 address or an IPv6 /64); more get 421. */
  smtpMaxConnectionsPerClient: number;
  /** Unknown mailboxes one SMTP session may try before every further RCPT TO gets 421 and the session ends. */
  smtpMaxUnknownRecipients: number;
  /** The header-section limit of received mail, as Postfix's `header_size_limit` (`AGENTPOST_MAX_HEADER_BYTES`); see src/mail/header-section.ts. */
  headerLimits: { maxHeaderBytes: number };
  /** Unknown mailboxes one SMTP client may try in an hour over all its sessions; past it every RCPT TO gets 421. */
  smtpMaxUnknownRecipientsPerClient: number;
  /**
   * SMTP submission for Agent Accounts (src/submission): a port with STARTTLS and one with implicit TLS, each off
   * while undefined (`0`: any free port), and the certificate files (both or neither; neither: a self-signed
   * certificate kept beside the database file).
   */
  submission: {
    port: number | undefined;
    tlsPort: number | undefined;
    certFile: string | undefined;
    keyFile: string | undefined;
  };
  /** Base URL clients use to reach the HTTP server (tracking links, ICS feeds). */
  publicUrl: string;
  /**
   * Whether `AGENTPOST_PUBLIC_URL` was given. When it was not, URLs handed to an HTTP client (upload URLs) use the
   * origin the client reached, since the default (`http://HOST:PORT`) is often not reachable from it.
   */
  publicUrlSet: boolean;
  apiKey: string | undefined;
  /** Domains registered, verified, for the default application at start. */
  domains: string[];
  /** Parent of trial subdomains: `anything.<trialDomain>` is usable at once, without DNS. */
  trialDomain: string;
  /** Host name published in MX records of custom domains. */
  mxHost: string;
  /** Relay for all outbound mail (`smtp://` or `smtps://`, credentials in the URL); unset: direct MX delivery. */
  smtpRelay: string | undefined;
  /** Port of direct (MX) delivery: 25, other values only for tests and unusual networks. */
  smtpDeliveryPort: number;
  /** Sender of the service's own emails (webhook alerts); default `postmaster@<mxHost>`. */
  systemFrom: string;
  /** Delays between delivery attempts of a deferred message, in ms; the last repeats (RFC 5321 4.5.4.1). */
  outboundRetrySchedule: number[];
  /** How long a message is retried before it fails for good, in ms (default 5 days). */
  outboundGiveUpMs: number;
  /**
   * Calendars a grant may have besides its primary, by its application's plan (`AGENTPOST_MAX_CALENDARS_TRIAL`,
   * `AGENTPOST_MAX_CALENDARS_PRODUCTION`; `AGENTPOST_MAX_CALENDARS`, the earlier single setting, is the default of both).
   */
  maxCalendars: { trial: number; production: number };
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /**
   * Lift the address policy (src/webhooks/address-policy.ts): webhooks may use `http` and private addresses, and
   * direct MX delivery may connect to private addresses. Tests and private networks only.
   */
  allowPrivateNetworks: boolean;
  /** Deadline of one webhook request (challenge or delivery), whole exchange; Nylas allows 10 s. */
  webhookTimeoutMs: number;
  /** Bounds of the HTTP server (Node's http.Server): header size and the deadlines that cut slow clients off. */
  http: {
    /** Request line plus headers, in bytes; more is answered 431 (414 for a long request line). */
    maxHeaderBytes: number;
    /** Time to receive the request line and headers, in ms. */
    headersTimeoutMs: number;
    /** Time to receive the whole request, body included, in ms. */
    requestTimeoutMs: number;
    /** Idle time of a kept-alive connection between requests, in ms. */
    keepAliveTimeoutMs: number;
  };
  /** Rate limits of `/v3` and `/mcp`, per process (0 turns one off). */
  rateLimits: {
    /** Requests a second per application on application-level routes (and `/mcp` calls that name no grant). */
    applicationPerSecond: number;
    /** Requests a second per grant on `/v3/grants/{grant_id}/…` routes (and `/mcp` calls that name a grant). */
    grantPerSecond: number;
    /** Multipart sends a second per grant. */
    multipartSendPerSecond: number;
    /** Failed authentications a minute per client address; past it, every request from it gets 429. */
    failedAuthPerMinute: number;
  };
  /** Days the access log keeps a row (src/access-log); the retention purge deletes older ones. */
  accessLogRetentionDays: number;
  /** Hours a send waits for approval before it expires as rejected (docs/oversight.md). */
  approvalExpiryHours: number;
  /** The event stream (`GET /v3/events/stream`, docs/webhooks.md#event-stream). */
  eventStream: {
    /** Hours a dispatched event stays in the outbox, so a stream can resume from a cursor that old. */
    retentionHours: number;
    /** Seconds between heartbeats of an idle stream (an SSE comment, a WebSocket ping). */
    heartbeatSeconds: number;
    /** Events a stream may fall behind the newest before it is closed (the client resumes from its cursor). */
    maxBehind: number;
  };
  /** Raw MIME bytes in one page of `fields=raw_mime` message lists (at least one message a page). */
  rawMimePageBytes: number;
  /**
   * Bytes of messages' wire JSON kept for lists (src/messages/message-json-cache.ts; 0: none). An entry is served only
   * while its message's revision is unchanged, so a kept form is never stale.
   */
  messageJsonCacheBytes: number;
  /**
   * The parts this process runs (`serve --roles`, `AGENTPOST_ROLES`; all by default): `http` listens for the API and
   * `/mcp`, `smtp` for inbound mail, `worker` runs the background work. Never empty; in the order of {@link ROLES}.
   */
  roles: readonly Role[];
  /** Longest wait of background workers between polls of the jobs and outbox tables. */
  workerPollMs: number;
  /** Connected IMAP/SMTP accounts (src/imap). */
  imap: {
    /** Longest wait for a TCP/TLS connection and the server's greeting, in ms. */
    connectTimeoutMs: number;
    /** Longest wait for one IMAP command's answer (or socket silence), in ms. */
    commandTimeoutMs: number;
    /** Most IMAP connections open at once to one server (host and port), over all accounts. */
    maxConnectionsPerServer: number;
    /** Days of mail the initial sync of a new account covers, newest first (a grant's `settings.sync_days` overrides). */
    syncDays: number;
    /**
     * How often every folder of an account is looked at for changes (a full sync pass), in ms: all of them when the
     * server has no IDLE; with IDLE, INBOX changes come at once and the other folders at this interval.
     */
    pollIntervalMs: number;
    /**
     * How long a worker process holds an account it syncs without renewing (renewed every third of it): several
     * worker processes on one database each sync other accounts, and a stopped process's accounts go to another
     * once their lease ran out (at once when it stopped cleanly).
     */
    leaseMs: number;
    /**
     * Whether the messages of an account's initial sync (its past) record `message.created` each. Default false: one
     * `grant.imap_sync_completed` announces them (Nylas v2 made these historical notifications a setting; v3 sends
     * none), and new mail after the connection records `message.created` as always.
     */
    historyEvents: boolean;
    /**
     * Whether an initial sync reads the server's answers to its large FETCHes on a thread of its own, over a
     * connection of its own (src/imap/fetch-thread.ts): `on`, `off`, or `auto` (the default): on with 4 or
     * more cores. The thread frees the event loop, but costs CPU of its own (a second connection, messages handed
     * between threads): on fewer cores than its threads it gains nothing (bench/imap-sync.bench.ts).
     */
    fetchThread: 'auto' | 'on' | 'off';
  };
  /**
   * The key that seals secrets at rest (src/secrets): passwords of connected accounts, DKIM private keys, webhook
   * secrets, the tracking signing key. Resolved at start-up by src/secrets/key-source.ts.
   */
  secrets: {
    /** `AGENTPOST_SECRET_KEY` (32 characters or more; the AES key is derived from it); unset, the key file holds it. */
    key: string | undefined;
    /**
     * `AGENTPOST_SECRET_KEY_FILE`: where the key is kept when the variable is unset (made, mode 0600, on a fresh
     * installation). Unset: `agentpost.key` beside the database file.
     */
    keyFile: string | undefined;
    /** `AGENTPOST_PREVIOUS_SECRET_KEYS`: earlier keys, still opening what they sealed until start-up seals it again (rotation). */
    previousKeys: string[];
  };
  /** Tracking, bounces and paused sending (src/deliverability). */
  deliverability: {
    /** Base URL of the tracking pixel and link redirects (`AGENTPOST_TRACKING_URL`, else the public URL); no trailing slash. */
    trackingUrl: string;
    /** A grant's sending pauses when hard bounces over recipients sent, in the window, reach this rate. */
    pauseBounceRate: number;
    /** A grant's sending pauses when complaints over recipients sent, in the window, reach this rate. */
    pauseComplaintRate: number;
    /** Rates are judged only once the grant sent to at least this many recipients in the window. */
    pauseMinSent: number;
    /** The rolling window of those rates, in whole UTC days (today and the days before it). */
    pauseWindowDays: number;
    /**
     * The thresholds applied to a sending domain's totals (all its grants and transactional sends): the
     * `AGENTPOST_DOMAIN_PAUSE_*` settings, each defaulting to the grant's.
     */
    domain: { pauseBounceRate: number; pauseComplaintRate: number; pauseMinSent: number; pauseWindowDays: number };
    /**
     * Daily recipient caps of a warm-up ramp, day 1 first (`AGENTPOST_WARMUP_SCHEDULE`); `off`: custom domains
     * registered through the API start without warm-up (a domain put on warm-up through the API then follows
     * {@link DEFAULT_WARMUP_SCHEDULE}).
     */
    warmUpSchedule: number[] | 'off';
  };
  /**
   * How long the authentication stage keeps a DNS answer (or a "no such record") it got, in ms; 0 keeps none. Bulk
   * senders repeat the same few domains, and a resolver that is slow to say "none" would otherwise cost every message.
   * SPF and DMARC results computed from those answers are kept as long, for the same inputs.
   */
  dnsCacheTtlMs: number;
  /**
   * The resolvers every DNS look-up of the service goes to (`AGENTPOST_DNS_SERVERS`: domain verification, MX
   * delivery, the authentication of received mail, webhook targets), in `node:dns` `setServers` form; empty: the
   * system's (`/etc/resolv.conf`, and getaddrinfo for host addresses).
   */
  dnsServers: string[];
  /** How long one DNS query waits for an answer before it is tried again (twice in all), in ms (`AGENTPOST_DNS_TIMEOUT`). */
  dnsTimeoutMs: number;
  /** The inbound spam stage (src/mail/stages/spam.ts), as a policy's `spam_detection` turns its checks on. */
  spam: {
    /** DNSBL zones a client's IP is looked up in (`use_list_dnsbl`). */
    dnsblZones: string[];
    /** rspamd's normal worker (its HTTP `checkv2` API); unset, no rspamd score. */
    rspamdUrl: string | undefined;
    /** Deadline of one rspamd check, in ms; past it the check fails and the message is deferred (451). */
    rspamdTimeoutMs: number;
  };
  /**
   * The model behind Smart Compose (src/compose), chosen by the operator; undefined when `AGENTPOST_AI_PROVIDER` is
   * unset (Smart Compose then answers 503). server/ai-text-generator.ts builds it with the AI SDK's providers.
   */
  ai: AiConfig | undefined;
  /** Longest wait for one Smart Compose generation (`AGENTPOST_AI_TIMEOUT`), in ms; past it the call answers 504. */
  aiTimeoutMs: number;
  /** Bearer token `GET /metrics` requires; unset, `/metrics` is off (404). */
  metricsToken: string | undefined;
  /** The dashboard (docs/dashboard.md): its mount path (`AGENTPOST_DASHBOARD_PATH`; undefined: off) and session length. */
  dashboard: { path: string | undefined; sessionSeconds: number };
  /** On SIGTERM/SIGINT (or `close()`), how long in-flight HTTP requests and SMTP transactions may take to finish, in ms. */
  shutdownTimeoutMs: number;
  /** `agentpost mcp`: a running service to call (else the MCP server runs embedded on the local database). */
  serviceUrl: string | undefined;
  /** `agentpost mcp`: bind every tool to this grant (id or email), so agents need not pass grant_id. */
  grantId: string | undefined;
  /** `agentpost mcp`: sending tools need a person's approval (elicitation, else a draft is saved instead). */
  requireApproval: boolean;
}

/** The model provider of Smart Compose: OpenAI, Anthropic, or any server that speaks OpenAI's chat completions API. */
export type AiProvider = 'openai' | 'anthropic' | 'openai-compatible';

/** The model Smart Compose uses (`AGENTPOST_AI_*`). */
export interface AiConfig {
  provider: AiProvider;
  /** The provider's model id, e.g. `gpt-4o-mini`, `claude-3-5-haiku-latest` or a local server's model name. */
  model: string;
  /** Sent as the provider's API key (required for openai and anthropic; optional for a local server). */
  apiKey: string | undefined;
  /** The API's base URL (required for openai-compatible; optional for the others, e.g. a proxy). No trailing slash. */
  baseUrl: string | undefined;
}
