/**
 * @module config-docs
 * The words of every setting (`SETTING_DOCS`) and the metadata docs/configuration.md is written from
 * (`settingsMetadata`, read by scripts/gen-config-docs.ts): the schema itself is `EnvSchema` in ./config-schema.ts,
 * which gives each setting's name, default and values.
 */
import { z } from 'zod';
import { EnvSchema, SETTING_NAMES, type SettingName } from './config-schema.js';
import { ROLES } from './config-types.js';

/** The sections of docs/configuration.md, in page order. */
export const SETTING_GROUPS = [
  'Database and secrets',
  'Listeners and addresses',
  'Applications and domains',
  'HTTP API',
  'Mail in',
  'Mail out',
  'Deliverability',
  'Webhooks and outbound addresses',
  'DNS',
  'Connected accounts',
  'Smart Compose',
  'Processes and logs',
  'agentpost mcp',
] as const;

/** A section of docs/configuration.md. */
export type SettingGroup = (typeof SETTING_GROUPS)[number];

/**
 * What docs/configuration.md says of one setting. Its name, default and values come from {@link EnvSchema} where the
 * schema knows them; this adds the words.
 */
export interface SettingDoc {
  /** The section it is listed in. */
  group: SettingGroup;
  /** What it does (Markdown; links are relative to docs/). */
  description: string;
  /** The default in words, only where the schema has none (it is computed at start, or follows another setting). */
  default?: string;
  /** The values it takes, only where the schema's helper does not say them itself. */
  values?: string;
}

/**
 * Every setting, described: the one place docs/configuration.md takes its words from (`npm run docs:config` writes
 * the page, and test/docs/configuration-doc.test.ts fails when the page is stale). A new setting in
 * {@link EnvSchema} needs an entry here, or the build fails.
 */
export const SETTING_DOCS: Record<SettingName, SettingDoc> = {
  AGENTPOST_DATABASE_URL: {
    group: 'Database and secrets',
    values: 'a `file:`, `libsql:`, `http(s):` or `ws(s):` URL',
    description:
      "The libSQL database: a `file:` path (WAL mode, 5 s busy timeout; a new file gets pages of 16 KB, which takes about a ninth off the mail writer's CPU a message; a file made before keeps its 4 KB), or a libSQL server (`libsql://`, `http(s)://`; `ws(s)://` is spoken over HTTP on the same address): see [On a libSQL server](operations.md#on-a-libsql-server-sqld-or-turso).",
  },
  AGENTPOST_DATABASE_AUTH_TOKEN: {
    group: 'Database and secrets',
    description: 'The auth token for a libSQL server.',
  },
  AGENTPOST_SECRET_KEY: {
    group: 'Database and secrets',
    default: 'the key file',
    values: '32 or more characters',
    description:
      'The key secrets are sealed with at rest (the AES-256 key is derived from it). Unset, the key file holds it. Required on a libSQL server unless `AGENTPOST_SECRET_KEY_FILE` is set; see [Secrets at rest](security.md#secrets-at-rest).',
  },
  AGENTPOST_SECRET_KEY_FILE: {
    group: 'Database and secrets',
    default: '`agentpost.key` beside the database file',
    values: 'a file path',
    description:
      'Where the key is kept when `AGENTPOST_SECRET_KEY` is unset; a fresh installation makes it (random, mode 0600).',
  },
  AGENTPOST_PREVIOUS_SECRET_KEYS: {
    group: 'Database and secrets',
    values: 'comma-separated keys of 32 or more characters',
    description:
      'Earlier keys, for a rotation: they still open what they sealed, and start-up seals it again with the current key.',
  },
  AGENTPOST_HOST: {
    group: 'Listeners and addresses',
    values: 'a host name or IP address',
    description: 'The address the HTTP and SMTP servers listen on.',
  },
  AGENTPOST_HTTP_PORT: {
    group: 'Listeners and addresses',
    description: 'The HTTP API port (`0`: any free port).',
  },
  AGENTPOST_SMTP_PORT: {
    group: 'Listeners and addresses',
    description: 'The inbound SMTP port (`0`: any free port).',
  },
  AGENTPOST_SMTP_MAX_CONNECTIONS: {
    group: 'Mail in',
    description: 'Inbound SMTP connections open at once; more are answered `421` at the greeting.',
  },
  AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: {
    group: 'Mail in',
    description:
      'Inbound SMTP connections open at once from one client (an IPv4 address, or an IPv6 /64); more are answered `421` at the greeting.',
  },
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS: {
    group: 'Mail in',
    description:
      'Unknown mailboxes one SMTP session may try (`550 5.1.1` each); the next `RCPT TO`, whatever its address, gets `421 4.7.0` and the connection closes (against mailbox enumeration).',
  },
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT: {
    group: 'Mail in',
    description:
      'Unknown mailboxes one SMTP client (an IPv4 address, or an IPv6 /64) may try in an hour over all its sessions; past it every `RCPT TO` from it gets `421 4.7.0` until the hour is over (reconnecting does not reset it).',
  },
  AGENTPOST_MAX_HEADER_BYTES: {
    group: 'Mail in',
    description:
      "The largest header section of a received message, in bytes (Postfix's `header_size_limit`). Mail over SMTP or delivered locally with a larger one is refused with `552 5.3.4`; a message fetched from a connected account, which cannot be refused, is kept with the fields past the limit discarded. See [mail in](mail-in.md#limits-of-the-header-section).",
  },
  AGENTPOST_SUBMISSION_PORT: {
    group: 'Listeners and addresses',
    default: 'off',
    description:
      'The SMTP submission port with STARTTLS (usually `587`; `0`: any free port): mail clients send as an Agent Account with an app password. Off while unset. See [SMTP submission](smtp-submission.md).',
  },
  AGENTPOST_SUBMISSION_TLS_PORT: {
    group: 'Listeners and addresses',
    default: 'off',
    description:
      'The SMTP submission port with implicit TLS (usually `465`; `0`: any free port). Off while unset. See [SMTP submission](smtp-submission.md).',
  },
  AGENTPOST_TLS_CERT_FILE: {
    group: 'Listeners and addresses',
    default: 'a self-signed certificate, made at the first start and kept beside the database file',
    values: 'a file path (PEM: the certificate, then its chain)',
    description:
      'The certificate the submission ports present; set together with `AGENTPOST_TLS_KEY_FILE`. Read again when either file changes (a renewal needs no restart).',
  },
  AGENTPOST_TLS_KEY_FILE: {
    group: 'Listeners and addresses',
    default: "the self-signed certificate's key",
    values: 'a file path (PEM)',
    description: 'The private key of `AGENTPOST_TLS_CERT_FILE`; set together with it.',
  },
  AGENTPOST_PUBLIC_URL: {
    group: 'Listeners and addresses',
    default: '`http://HOST:HTTP_PORT`',
    values: 'an http(s) URL',
    description:
      'The base URL clients use to reach the HTTP API, and of upload URLs (unset, those use the origin the client reached).',
  },
  AGENTPOST_API_KEY: {
    group: 'Applications and domains',
    default: 'generated at first start',
    values: '16 to 256 characters',
    description: "Fixes the default application's API key (idempotent across restarts).",
  },
  AGENTPOST_DOMAINS: {
    group: 'Applications and domains',
    description: 'Domains registered, already verified, to the default application at start.',
  },
  AGENTPOST_TRIAL_DOMAIN: {
    group: 'Applications and domains',
    description:
      'The parent of trial domains: any `name.<trial domain>` registered through the domains API is usable at once, without DNS records.',
  },
  AGENTPOST_MX_HOST: {
    group: 'Applications and domains',
    default: "the public URL's host when it is a name, else `mx.<trial domain>`",
    description:
      'The host name custom domains publish in MX and SPF records; also the authserv-id of the `Authentication-Results` header of received mail.',
  },
  AGENTPOST_SMTP_RELAY: {
    group: 'Mail out',
    values: 'an `smtp://` or `smtps://` URL (`smtp://user:pass@host:587`)',
    description:
      "The outbound relay. Unset: direct delivery to the recipients' MX hosts. See [Mail out](mail-out.md#relay-or-direct-delivery).",
  },
  AGENTPOST_SMTP_DELIVERY_PORT: {
    group: 'Mail out',
    description: 'The port of direct (MX) delivery when no relay is set (other values for tests and unusual networks).',
  },
  AGENTPOST_SYSTEM_FROM: {
    group: 'Mail out',
    default: '`postmaster@<MX host>`',
    values: 'an email address',
    description: "The sender of the service's own emails (webhook failure alerts).",
  },
  AGENTPOST_OUTBOUND_RETRY_SCHEDULE: {
    group: 'Mail out',
    description: 'Delays between delivery attempts of a temporarily failing recipient; the last one repeats.',
  },
  AGENTPOST_OUTBOUND_GIVE_UP_AFTER: {
    group: 'Mail out',
    description:
      'How long a message is retried before it fails for good (recorded on the message, `message.send_failed`).',
  },
  AGENTPOST_MAX_CALENDARS: {
    group: 'Applications and domains',
    values: 'a whole number',
    description:
      "The earlier single cap on calendars besides a grant's primary one: when set, the default of `AGENTPOST_MAX_CALENDARS_TRIAL` and `AGENTPOST_MAX_CALENDARS_PRODUCTION`.",
  },
  AGENTPOST_MAX_CALENDARS_TRIAL: {
    group: 'Applications and domains',
    default: '`AGENTPOST_MAX_CALENDARS`, else `10`',
    description: "Calendars a grant may have besides its primary one when its application's plan is `trial`.",
  },
  AGENTPOST_MAX_CALENDARS_PRODUCTION: {
    group: 'Applications and domains',
    default: '`AGENTPOST_MAX_CALENDARS`, else `100`',
    description: "The same when its application's plan is `production`.",
  },
  AGENTPOST_LOG_LEVEL: {
    group: 'Processes and logs',
    description: 'What is logged (JSON lines on stderr); the access log is written at `info`, so `warn` turns it off.',
  },
  AGENTPOST_ALLOW_PRIVATE_NETWORKS: {
    group: 'Webhooks and outbound addresses',
    default: '`false`',
    description:
      'Lifts the [outbound address policy](security.md#outbound-addresses-webhooks-and-direct-mx-delivery) (tests and private networks only): webhooks may use `http` and private, loopback or reserved addresses, and direct MX delivery may connect to them.',
  },
  AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: {
    group: 'Webhooks and outbound addresses',
    default: '`false`',
    description:
      'The earlier name of `AGENTPOST_ALLOW_PRIVATE_NETWORKS`, still accepted; `AGENTPOST_ALLOW_PRIVATE_NETWORKS` wins when both are set.',
  },
  AGENTPOST_WEBHOOK_TIMEOUT_MS: {
    group: 'Webhooks and outbound addresses',
    values: 'milliseconds, 1 to 60,000',
    description:
      'The deadline of one webhook delivery. The challenge of a new or reactivated webhook has its own 10-second deadline, as the specification fixes it, whatever this is.',
  },
  AGENTPOST_URL: {
    group: 'agentpost mcp',
    values: 'an http(s) URL',
    description:
      '`agentpost mcp` only: a running service to call (with `AGENTPOST_API_KEY`); unset, the MCP server runs embedded on the local database. See [MCP](mcp.md).',
  },
  AGENTPOST_GRANT_ID: {
    group: 'agentpost mcp',
    values: 'a grant id or email address',
    description: '`agentpost mcp` only: binds every tool to this mailbox, so agents need not pass `grant_id`.',
  },
  AGENTPOST_REQUIRE_APPROVAL: {
    group: 'agentpost mcp',
    description:
      "`agentpost mcp` only: `send_message` and `send_draft` need a person's approval (MCP elicitation; a draft is saved instead when the client cannot ask). Over HTTP: `/mcp?require_approval=true`; AI SDK: `createAgentpostTools({ requireApproval: true })`.",
  },
  AGENTPOST_HTTP_MAX_HEADER_BYTES: {
    group: 'HTTP API',
    description:
      "Request line plus headers of one HTTP request (Node's `maxHeaderSize`, set explicitly); more is answered 431, or 414 when the request line alone is too long.",
  },
  AGENTPOST_HTTP_HEADERS_TIMEOUT: {
    group: 'HTTP API',
    description: 'Time a client has to send the request line and headers; a slower one gets 408 and is disconnected.',
  },
  AGENTPOST_HTTP_REQUEST_TIMEOUT: {
    group: 'HTTP API',
    description: 'Time a client has to send a whole request, body included (at least the header timeout).',
  },
  AGENTPOST_HTTP_KEEP_ALIVE_TIMEOUT: {
    group: 'HTTP API',
    description: 'How long an idle kept-alive connection stays open between requests.',
  },
  AGENTPOST_RATE_LIMIT_APPLICATION: {
    group: 'HTTP API',
    description:
      'Requests a second per application on application-level routes (`0`: no limit); see [Rate limits](security.md#rate-limits).',
  },
  AGENTPOST_RATE_LIMIT_GRANT: {
    group: 'HTTP API',
    description:
      'Requests a second per grant on `/v3/grants/{grant_id}/…` and on `/mcp` calls that name a grant (`0`: no limit).',
  },
  AGENTPOST_RATE_LIMIT_MULTIPART_SEND: {
    group: 'HTTP API',
    description: 'Multipart (`multipart/form-data`) sends a second per grant (`0`: no limit).',
  },
  AGENTPOST_RATE_LIMIT_FAILED_AUTH: {
    group: 'HTTP API',
    description:
      'Failed authentications a minute per client address before it gets 429 for every request (`0`: no limit; set it behind a reverse proxy).',
  },
  AGENTPOST_MESSAGE_JSON_CACHE_BYTES: {
    group: 'HTTP API',
    values: 'bytes; `0` turns it off',
    description:
      "Bytes of message JSON kept in memory to answer message lists (64 MB). An entry is used only while its message's revision in the database is unchanged, so lists never show a stale message; see [How lists are served](http-api.md#how-message-lists-are-served).",
  },
  AGENTPOST_RAW_MIME_PAGE_BYTES: {
    group: 'HTTP API',
    values: 'bytes, at least 1',
    description: 'Raw MIME bytes in one page of a `fields=raw_mime` message list (10 MB; at least one message a page).',
  },
  AGENTPOST_METRICS_TOKEN: {
    group: 'Processes and logs',
    values: '16 to 256 characters',
    description:
      'Turns on `GET /metrics` (Prometheus), which then needs `Authorization: Bearer <token>`; unset, `/metrics` answers 404. See [Metrics](operations.md#metrics).',
  },
  AGENTPOST_DASHBOARD_PATH: {
    group: 'HTTP API',
    values: '`off`, or a path such as `/dashboard`',
    description:
      'Where the HTTP role serves the dashboard (sign in with an API key; its scope and permissions apply to every page); `off` turns the dashboard off. See [Dashboard](dashboard.md).',
  },
  AGENTPOST_DASHBOARD_SESSION_HOURS: {
    group: 'HTTP API',
    description:
      'Hours a dashboard session lasts after sign-in; then the person signs in again with the key. See [Dashboard](dashboard.md#sessions).',
  },
  AGENTPOST_ACCESS_LOG_RETENTION_DAYS: {
    group: 'HTTP API',
    description:
      'Days the access log keeps a row (one per operation call on every face, and per refused authentication; `GET /v3/access-log`); older rows are deleted by the retention purge of the worker role. See [Access log](keys.md#access-log).',
  },
  AGENTPOST_APPROVAL_EXPIRY_HOURS: {
    group: 'HTTP API',
    description:
      'Hours a send held for approval waits (oversight modes `gated_send` and `gated_all`, the untrusted-read gate, the runaway guards); past it the request expires as rejected and `approval.decided` is sent. See [Oversight](oversight.md#the-approval-queue).',
  },
  AGENTPOST_EVENT_RETENTION_HOURS: {
    group: 'HTTP API',
    description:
      'Hours an event stays in the outbox once webhooks took it, and so how far back a client of the event stream can resume with its cursor (`Last-Event-ID`); an older cursor answers 410 `cursor_expired`. See [Webhooks](webhooks.md#the-event-stream).',
  },
  AGENTPOST_EVENT_STREAM_HEARTBEAT_SECONDS: {
    group: 'HTTP API',
    description:
      'Seconds between heartbeats of an idle event stream (an SSE comment line, a WebSocket ping), so proxies keep it open. See [Webhooks](webhooks.md#the-event-stream).',
  },
  AGENTPOST_EVENT_STREAM_MAX_BEHIND: {
    group: 'HTTP API',
    description:
      'Events a client of the event stream may fall behind the newest (it does not read) before the service closes its stream; the client resumes from its last cursor. Memory is bounded either way. See [Webhooks](webhooks.md#the-event-stream).',
  },
  AGENTPOST_SHUTDOWN_TIMEOUT: {
    group: 'Processes and logs',
    description:
      'On SIGTERM/SIGINT (or `close()` when embedded), how long HTTP requests and SMTP transactions under way may take to finish before they are cut off; see [Shutdown](operations.md#shutdown).',
  },
  AGENTPOST_DNSBL_ZONES: {
    group: 'Mail in',
    description:
      "DNSBL zones the inbound spam stage asks about the client's IP when a policy sets `spam_detection.use_list_dnsbl`; see [Authentication and spam](mail-in.md#authentication-and-spam). Spamhaus refuses queries that come through large public resolvers: run a local resolver, or name other zones.",
  },
  AGENTPOST_RSPAMD_URL: {
    group: 'Mail in',
    values: 'an http(s) URL',
    description:
      "rspamd's normal worker (`http://127.0.0.1:11333`): every received message is scored with its HTTP `checkv2` API; unset, no rspamd.",
  },
  AGENTPOST_RSPAMD_TIMEOUT: {
    group: 'Mail in',
    description:
      'The deadline of one rspamd check; an rspamd that does not answer in time, or answers an error, defers the message (`451 4.3.0`).',
  },
  AGENTPOST_DNS_SERVERS: {
    group: 'DNS',
    default: "the system's resolvers",
    values: 'comma-separated `IP[:port]` (`127.0.0.1:5353,[::1]:53,192.0.2.53`); host names are refused',
    description:
      "The resolvers every DNS look-up of the service goes to: domain verification, MX delivery, the relay's host name, SPF/DKIM/DMARC/ARC and DNSBL checks of received mail, webhook targets, connected accounts' IMAP and SMTP servers. Host addresses (A/AAAA) are then asked of them too, not of `/etc/hosts`. See [DNS resolvers](operations.md#dns-resolvers).",
  },
  AGENTPOST_DNS_TIMEOUT: {
    group: 'DNS',
    description:
      'How long one DNS query waits for an answer before it is asked again (twice in all; c-ares doubles the wait the second time).',
  },
  AGENTPOST_DNS_CACHE_TTL: {
    group: 'DNS',
    values: 'a duration, or `0` to keep none',
    description:
      'How long the authentication stage keeps a DNS answer, or a "no such record", it got (SPF, DKIM keys, DMARC), and for as long the SPF result of a client IP, HELO name and MAIL FROM and the DMARC result of a From address with the same SPF, DKIM and ARC outcomes; temporary failures are never kept.',
  },
  AGENTPOST_ROLES: {
    group: 'Processes and logs',
    values: `a comma-separated, non-empty subset of ${ROLES.map((role) => `\`${role}\``).join(', ')}`,
    description:
      "The parts `agentpost serve` runs (`--roles` on the command line wins): `http` (the API, `/mcp`, health and metrics), `smtp` (the inbound listener), `worker` (outbox dispatcher, job worker, webhook delivery, connected accounts' sync, retention purge and policy upkeep); an unknown name stops the start. See [Scale-out](scale-out.md).",
  },
  AGENTPOST_TRACKING_URL: {
    group: 'Listeners and addresses',
    default: '`AGENTPOST_PUBLIC_URL`',
    values: 'an http(s) URL',
    description:
      "The base URL of the open pixel and link redirects put in tracked messages (`<url>/t/o/…`, `<url>/t/l/…`); it must reach this service's HTTP port. See [Open and click tracking](mail-out.md#open-and-click-tracking).",
  },
  AGENTPOST_PAUSE_BOUNCE_RATE: {
    group: 'Deliverability',
    description:
      "A grant's sending pauses when its hard bounces over recipients sent, in the window, reach this rate; see [Paused sending](mail-out.md#paused-sending).",
  },
  AGENTPOST_PAUSE_COMPLAINT_RATE: {
    group: 'Deliverability',
    description: "A grant's sending pauses when its complaints over recipients sent, in the window, reach this rate.",
  },
  AGENTPOST_PAUSE_MIN_SENT: {
    group: 'Deliverability',
    description: 'Rates are judged only once the grant sent to at least this many recipients in the window.',
  },
  AGENTPOST_PAUSE_WINDOW: {
    group: 'Deliverability',
    description: "The rolling window of those rates, in whole UTC days ending today (a domain's rates use it too).",
  },
  AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_BOUNCE_RATE`',
    description:
      "A sending domain's sending (every grant on it) pauses when the hard bounces of everything sent from it, over recipients sent, in the window, reach this rate; see [Reputation per sending domain](mail-out.md#reputation-per-sending-domain).",
  },
  AGENTPOST_DOMAIN_PAUSE_COMPLAINT_RATE: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_COMPLAINT_RATE`',
    description: "The same for the domain's complaint rate.",
  },
  AGENTPOST_DOMAIN_PAUSE_MIN_SENT: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_MIN_SENT`',
    description: "A domain's rates are judged only once it sent to at least this many recipients in the window.",
  },
  AGENTPOST_WARMUP_SCHEDULE: {
    group: 'Deliverability',
    default: '28 days, `50` → `6400`',
    values:
      '`off`, or daily recipient caps, day 1 first, comma-separated (`50,100,200,400`; at most 366 days, each from 1)',
    description:
      'The warm-up ramp of a new custom domain; past the last day there is no cap. `off`: custom domains registered through the API start without warm-up (`warm_up: true` then puts one on the default ramp). See [Warm-up](mail-out.md#warm-up).',
  },
  AGENTPOST_IMAP_CONNECT_TIMEOUT: {
    group: 'Connected accounts',
    description:
      'The longest wait for an IMAP or SMTP server to accept the connection and greet; connecting an account (`POST /v3/connect/custom`) answers a 400 by then when a server is unreachable or silent. See [Connected accounts](connected-accounts.md#connecting-a-mailbox).',
  },
  AGENTPOST_IMAP_COMMAND_TIMEOUT: {
    group: 'Connected accounts',
    description: 'The longest silence of a server while a command waits for its answer.',
  },
  AGENTPOST_IMAP_MAX_CONNECTIONS_PER_SERVER: {
    group: 'Connected accounts',
    description:
      'IMAP connections one process opens to one server (host and port) at once, over all its accounts; an account idling (IDLE) gives its connection up while others wait for one.',
  },
  AGENTPOST_IMAP_SYNC_DAYS: {
    group: 'Connected accounts',
    description:
      "Days of mail the initial sync of a new account covers (newest first; by INTERNALDATE); an account's `settings.sync_days` overrides it.",
  },
  AGENTPOST_IMAP_POLL_INTERVAL: {
    group: 'Connected accounts',
    description:
      'How often every folder is looked at for changes (a full sync pass); with IDLE, INBOX changes are seen at once and the other folders at this interval.',
  },
  AGENTPOST_IMAP_LEASE: {
    group: 'Connected accounts',
    description:
      'How long a worker process holds an account it syncs without renewing (it renews every third of it). With several worker processes on one database each account is synced by one of them; the accounts of a process that stops cleanly go to another at once, those of one that died once its leases ran out.',
  },
  AGENTPOST_IMAP_HISTORY_EVENTS: {
    group: 'Connected accounts',
    description:
      "Whether the messages of an account's initial sync (its mail from before it was connected) record `message.created` each. Off, one `grant.imap_sync_completed` announces them, as Nylas v3 sends no notifications for a mailbox's past; new mail after the connection records `message.created` either way.",
  },
  AGENTPOST_IMAP_FETCH_THREAD: {
    group: 'Connected accounts',
    description:
      "Whether an initial sync's large FETCHes run on a thread of their own, over a second connection to the server (when a connection slot is free; else on the account's own). `auto` turns them on with 4 cores or more. It takes imapflow's reading of the answers off the event loop; the threads (a core each beyond three, at most four) are kept while the service runs, so their code stays compiled. On fewer cores a sync is no faster with them (measured on 2; see [Benchmarks](benchmarks.md#imap-sync)).",
  },
  AGENTPOST_AI_PROVIDER: {
    group: 'Smart Compose',
    description:
      "The model provider of [Smart Compose](smart-compose.md); `openai-compatible` is any server that speaks OpenAI's chat completions API, a local one included. Unset, Smart Compose answers 503.",
  },
  AGENTPOST_AI_MODEL: {
    group: 'Smart Compose',
    values: 'a model id (`gpt-4o-mini`, `claude-3-5-haiku-latest`, `llama3.1`, …)',
    description: "The provider's model id; required with a provider.",
  },
  AGENTPOST_AI_API_KEY: {
    group: 'Smart Compose',
    description: "The provider's API key; required for `openai` and `anthropic`, optional for `openai-compatible`.",
  },
  AGENTPOST_AI_BASE_URL: {
    group: 'Smart Compose',
    default: "the provider's own",
    values: 'an http(s) URL (`http://127.0.0.1:11434/v1` for a local server)',
    description: "The API's base URL; required for `openai-compatible`, optional for the others (a proxy).",
  },
  AGENTPOST_AI_TIMEOUT: {
    group: 'Smart Compose',
    description:
      'The longest wait for one Smart Compose generation, the whole answer (streamed or not); past it the call answers 504.',
  },
  AGENTPOST_WORKER_POLL_MS: {
    group: 'Processes and logs',
    values: 'milliseconds, 1 to 60,000',
    description:
      'The longest pause of the background workers between looks at the jobs and outbox tables. A worker in the process that accepted a change starts on it at once; one in another process finds it at its next poll.',
  },
};

/** One setting as docs/configuration.md lists it: its name, the words of {@link SETTING_DOCS} and what the schema knows. */
export interface SettingMetadata {
  name: SettingName;
  group: SettingGroup;
  /** The default, as Markdown (undefined: none). */
  default: string | undefined;
  /** The values it takes, as Markdown (undefined: any text). */
  values: string | undefined;
  description: string;
}

/** The parts of a zod schema the metadata reads: its kind, its default, its enum values, the schema it wraps. */
interface SchemaLayer {
  _zod: {
    def: {
      type: string;
      defaultValue?: unknown;
      entries?: Record<string, string>;
      innerType?: SchemaLayer;
      in?: SchemaLayer;
    };
  };
}

/** A setting's schema and every schema it wraps (default, optional, the input side of a transform), outermost first. */
function schemaLayers(schema: SchemaLayer): SchemaLayer[] {
  const layers: SchemaLayer[] = [];
  for (let layer: SchemaLayer | undefined = schema; layer; layer = layer._zod.def.innerType ?? layer._zod.def.in)
    layers.push(layer);
  return layers;
}

/** The schema's own default, as Markdown; an empty default is none. */
function schemaDefault(layers: SchemaLayer[]): string | undefined {
  const withDefault = layers.find((layer) => layer._zod.def.type === 'default');
  const value: unknown = withDefault?._zod.def.defaultValue;
  if (value === undefined || value === '') return undefined;
  // A string, number or boolean as written; anything else (a list) as its JSON.
  const text =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);
  return `\`${text}\``;
}

/** The values the schema states: a helper's `values` (see `port`, `wholeNumber`, `duration`…), else an enum's. */
function schemaValues(layers: SchemaLayer[]): string | undefined {
  for (const layer of layers) {
    const stated = z.globalRegistry.get(layer as unknown as z.ZodType)?.values;
    if (typeof stated === 'string') return stated;
    const entries = layer._zod.def.type === 'enum' ? Object.values(layer._zod.def.entries ?? {}) : [];
    if (entries.length > 0) return entries.map((entry) => `\`${entry}\``).join(', ');
  }
  return undefined;
}

/**
 * Every setting with its default, values and words, in the schema's order: what scripts/gen-config-docs.ts writes
 * into docs/configuration.md.
 * @throws Error when a setting's default is given both by the schema and by {@link SETTING_DOCS}.
 */
export function settingsMetadata(): SettingMetadata[] {
  return SETTING_NAMES.map((name) => {
    const doc = SETTING_DOCS[name];
    const layers = schemaLayers(EnvSchema.shape[name]);
    const fromSchema = schemaDefault(layers);
    if (fromSchema !== undefined && doc.default !== undefined) {
      throw new Error(
        `${name}: its default is in the schema (${fromSchema}); remove the default of its SETTING_DOCS entry`,
      );
    }
    return {
      name,
      group: doc.group,
      default: doc.default ?? fromSchema,
      values: doc.values ?? schemaValues(layers),
      description: doc.description,
    };
  });
}
