/**
 * @module config
 * The only reader of `process.env`. `loadConfig(env)` parses the environment once with zod and
 * throws a {@link ConfigError} whose message names every variable that is wrong. The schema it parses with, every
 * setting with its default, is `EnvSchema` in ./config-schema.ts.
 */
import { isIP } from 'node:net';
import { type AiConfig, type AiProvider, type Config } from './config-types.js';
import { EnvSchema, SETTING_NAMES } from './config-schema.js';

export { ROLES, type AiConfig, type AiProvider, type Config, type Role } from './config-types.js';
export { DEFAULT_WARMUP_SCHEDULE, parseRoles, SETTING_NAMES, type SettingName } from './config-schema.js';

/** Variables with the prefix that belong to tools around Agentpost, not to the service (never warned about). */
const FOREIGN_SETTINGS = new Set(['AGENTPOST_BENCH_POSTFIX']);

/** An `AGENTPOST_*` variable Agentpost does not read, and the known name closest to it (if any is close). */
export interface UnknownSetting {
  name: string;
  suggestion: string | undefined;
}

/**
 * The `AGENTPOST_*` variables of `env` that Agentpost does not read: likely typos, which would otherwise leave a
 * setting at its default without a word. Each comes with the closest known name, when one is within a few edits.
 */
export function unknownSettings(env: Record<string, unknown>): UnknownSetting[] {
  const known = new Set<string>(SETTING_NAMES);
  return Object.keys(env)
    .filter((name) => name.startsWith('AGENTPOST_') && !known.has(name) && !FOREIGN_SETTINGS.has(name))
    .sort()
    .map((name) => {
      let best: { name: string; distance: number } | undefined;
      for (const candidate of SETTING_NAMES) {
        const distance = editDistance(name, candidate);
        if (!best || distance < best.distance) best = { name: candidate, distance };
      }
      // Close enough to be the same word mistyped: a third of the part after the prefix, at least 2 edits.
      const allowed = Math.max(2, Math.floor((name.length - 'AGENTPOST_'.length) / 3));
      return { name, suggestion: best && best.distance <= allowed ? best.name : undefined };
    });
}

/**
 * True when an npm script or `npx` started this process (npm sets `npm_command`). Such a process sits below a
 * shell that npm signals and that dies without passing the signal on; `agentpost serve` then watches its parent.
 */
export function startedByNpm(env: Record<string, string | undefined> = process.env): boolean {
  return typeof env.npm_command === 'string' && env.npm_command !== '';
}

/** The warning printed for an unknown setting. */
export function unknownSettingMessage({ name, suggestion }: UnknownSetting): string {
  return `${name} is not an Agentpost setting and is ignored${suggestion ? `; did you mean ${suggestion}?` : ' (see the configuration table in docs/configuration.md)'}`;
}

/** Levenshtein distance (insertions, deletions, substitutions), for the suggestions of {@link unknownSettings}. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Settings of the model, checked together: a provider needs a model, and the key or URL that provider needs. */
function aiConfigOf(value: {
  AGENTPOST_AI_PROVIDER?: AiProvider | undefined;
  AGENTPOST_AI_MODEL?: string | undefined;
  AGENTPOST_AI_API_KEY?: string | undefined;
  AGENTPOST_AI_BASE_URL?: string | undefined;
}): AiConfig | undefined {
  const provider = value.AGENTPOST_AI_PROVIDER;
  const problems: string[] = [];
  if (provider === undefined) {
    if (value.AGENTPOST_AI_MODEL !== undefined)
      problems.push('AGENTPOST_AI_MODEL: set AGENTPOST_AI_PROVIDER too (openai, anthropic or openai-compatible)');
  } else {
    if (value.AGENTPOST_AI_MODEL === undefined)
      problems.push(`AGENTPOST_AI_MODEL: required with AGENTPOST_AI_PROVIDER=${provider} (the provider's model id)`);
    if (provider !== 'openai-compatible' && value.AGENTPOST_AI_API_KEY === undefined)
      problems.push(`AGENTPOST_AI_API_KEY: required with AGENTPOST_AI_PROVIDER=${provider}`);
    if (provider === 'openai-compatible' && value.AGENTPOST_AI_BASE_URL === undefined)
      problems.push(
        'AGENTPOST_AI_BASE_URL: required with AGENTPOST_AI_PROVIDER=openai-compatible (e.g. http://127.0.0.1:11434/v1)',
      );
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  if (provider === undefined) return undefined;
  return {
    provider,
    model: value.AGENTPOST_AI_MODEL!,
    apiKey: value.AGENTPOST_AI_API_KEY,
    baseUrl: value.AGENTPOST_AI_BASE_URL?.replace(/\/+$/, ''),
  };
}

/** Thrown by {@link loadConfig}; its message lists each bad variable by name. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses the environment. Call once at process start and pass the result down.
 * @throws ConfigError naming each invalid variable, e.g. `AGENTPOST_HTTP_PORT: must be a whole number`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key.startsWith('AGENTPOST_') && value !== ''),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const value = parsed.data;
  // Node refuses a header deadline past the request deadline (the headers are part of the request).
  if (value.AGENTPOST_HTTP_HEADERS_TIMEOUT > value.AGENTPOST_HTTP_REQUEST_TIMEOUT) {
    throw new ConfigError(
      'Invalid configuration:\n  AGENTPOST_HTTP_HEADERS_TIMEOUT: must not be longer than AGENTPOST_HTTP_REQUEST_TIMEOUT',
    );
  }
  if ((value.AGENTPOST_TLS_CERT_FILE === undefined) !== (value.AGENTPOST_TLS_KEY_FILE === undefined)) {
    throw new ConfigError(
      'Invalid configuration:\n  AGENTPOST_TLS_CERT_FILE, AGENTPOST_TLS_KEY_FILE: set both (the certificate chain and its private key, PEM) or neither',
    );
  }
  const ai = aiConfigOf(value);
  // An IPv6 literal needs brackets in a URL (`http://[::1]:3000`).
  const urlHost = isIP(value.AGENTPOST_HOST) === 6 ? `[${value.AGENTPOST_HOST}]` : value.AGENTPOST_HOST;
  const publicUrl = (value.AGENTPOST_PUBLIC_URL ?? `http://${urlHost}:${value.AGENTPOST_HTTP_PORT}`).replace(
    /\/+$/,
    '',
  );
  const mxHost = value.AGENTPOST_MX_HOST ?? defaultMxHost(publicUrl, value.AGENTPOST_TRIAL_DOMAIN);
  return {
    databaseUrl: value.AGENTPOST_DATABASE_URL,
    databaseAuthToken: value.AGENTPOST_DATABASE_AUTH_TOKEN,
    host: value.AGENTPOST_HOST,
    httpPort: value.AGENTPOST_HTTP_PORT,
    smtpPort: value.AGENTPOST_SMTP_PORT,
    smtpMaxConnections: value.AGENTPOST_SMTP_MAX_CONNECTIONS,
    smtpMaxConnectionsPerClient: value.AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT,
    smtpMaxUnknownRecipients: value.AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS,
    headerLimits: { maxHeaderBytes: value.AGENTPOST_MAX_HEADER_BYTES },
    smtpMaxUnknownRecipientsPerClient: value.AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT,
    submission: {
      port: value.AGENTPOST_SUBMISSION_PORT,
      tlsPort: value.AGENTPOST_SUBMISSION_TLS_PORT,
      certFile: value.AGENTPOST_TLS_CERT_FILE,
      keyFile: value.AGENTPOST_TLS_KEY_FILE,
    },
    publicUrl,
    publicUrlSet: value.AGENTPOST_PUBLIC_URL !== undefined,
    apiKey: value.AGENTPOST_API_KEY,
    domains: value.AGENTPOST_DOMAINS,
    trialDomain: value.AGENTPOST_TRIAL_DOMAIN,
    mxHost,
    smtpRelay: value.AGENTPOST_SMTP_RELAY,
    smtpDeliveryPort: value.AGENTPOST_SMTP_DELIVERY_PORT,
    systemFrom: (value.AGENTPOST_SYSTEM_FROM ?? `postmaster@${mxHost}`).toLowerCase(),
    outboundRetrySchedule: value.AGENTPOST_OUTBOUND_RETRY_SCHEDULE,
    outboundGiveUpMs: value.AGENTPOST_OUTBOUND_GIVE_UP_AFTER,
    maxCalendars: {
      trial: value.AGENTPOST_MAX_CALENDARS_TRIAL ?? value.AGENTPOST_MAX_CALENDARS ?? 10,
      production: value.AGENTPOST_MAX_CALENDARS_PRODUCTION ?? value.AGENTPOST_MAX_CALENDARS ?? 100,
    },
    logLevel: value.AGENTPOST_LOG_LEVEL,
    allowPrivateNetworks: value.AGENTPOST_ALLOW_PRIVATE_NETWORKS ?? value.AGENTPOST_ALLOW_PRIVATE_WEBHOOKS ?? false,
    webhookTimeoutMs: value.AGENTPOST_WEBHOOK_TIMEOUT_MS,
    http: {
      maxHeaderBytes: value.AGENTPOST_HTTP_MAX_HEADER_BYTES,
      headersTimeoutMs: value.AGENTPOST_HTTP_HEADERS_TIMEOUT,
      requestTimeoutMs: value.AGENTPOST_HTTP_REQUEST_TIMEOUT,
      keepAliveTimeoutMs: value.AGENTPOST_HTTP_KEEP_ALIVE_TIMEOUT,
    },
    rateLimits: {
      applicationPerSecond: value.AGENTPOST_RATE_LIMIT_APPLICATION,
      grantPerSecond: value.AGENTPOST_RATE_LIMIT_GRANT,
      multipartSendPerSecond: value.AGENTPOST_RATE_LIMIT_MULTIPART_SEND,
      failedAuthPerMinute: value.AGENTPOST_RATE_LIMIT_FAILED_AUTH,
    },
    rawMimePageBytes: value.AGENTPOST_RAW_MIME_PAGE_BYTES,
    accessLogRetentionDays: value.AGENTPOST_ACCESS_LOG_RETENTION_DAYS,
    approvalExpiryHours: value.AGENTPOST_APPROVAL_EXPIRY_HOURS,
    eventStream: {
      retentionHours: value.AGENTPOST_EVENT_RETENTION_HOURS,
      heartbeatSeconds: value.AGENTPOST_EVENT_STREAM_HEARTBEAT_SECONDS,
      maxBehind: value.AGENTPOST_EVENT_STREAM_MAX_BEHIND,
    },
    messageJsonCacheBytes: value.AGENTPOST_MESSAGE_JSON_CACHE_BYTES,
    roles: value.AGENTPOST_ROLES,
    workerPollMs: value.AGENTPOST_WORKER_POLL_MS,
    dnsCacheTtlMs: value.AGENTPOST_DNS_CACHE_TTL,
    dnsServers: value.AGENTPOST_DNS_SERVERS,
    dnsTimeoutMs: value.AGENTPOST_DNS_TIMEOUT,
    spam: {
      dnsblZones: value.AGENTPOST_DNSBL_ZONES,
      rspamdUrl: value.AGENTPOST_RSPAMD_URL?.replace(/\/+$/, ''),
      rspamdTimeoutMs: value.AGENTPOST_RSPAMD_TIMEOUT,
    },
    ai,
    aiTimeoutMs: value.AGENTPOST_AI_TIMEOUT,
    metricsToken: value.AGENTPOST_METRICS_TOKEN,
    dashboard: {
      path: value.AGENTPOST_DASHBOARD_PATH === 'off' ? undefined : value.AGENTPOST_DASHBOARD_PATH,
      sessionSeconds: value.AGENTPOST_DASHBOARD_SESSION_HOURS * 3600,
    },
    shutdownTimeoutMs: value.AGENTPOST_SHUTDOWN_TIMEOUT,
    serviceUrl: value.AGENTPOST_URL?.replace(/\/+$/, ''),
    grantId: value.AGENTPOST_GRANT_ID,
    requireApproval: value.AGENTPOST_REQUIRE_APPROVAL,
    imap: {
      connectTimeoutMs: value.AGENTPOST_IMAP_CONNECT_TIMEOUT,
      commandTimeoutMs: value.AGENTPOST_IMAP_COMMAND_TIMEOUT,
      maxConnectionsPerServer: value.AGENTPOST_IMAP_MAX_CONNECTIONS_PER_SERVER,
      syncDays: value.AGENTPOST_IMAP_SYNC_DAYS,
      pollIntervalMs: value.AGENTPOST_IMAP_POLL_INTERVAL,
      leaseMs: value.AGENTPOST_IMAP_LEASE,
      historyEvents: value.AGENTPOST_IMAP_HISTORY_EVENTS,
      fetchThread: value.AGENTPOST_IMAP_FETCH_THREAD,
    },
    secrets: {
      key: value.AGENTPOST_SECRET_KEY,
      keyFile: value.AGENTPOST_SECRET_KEY_FILE,
      previousKeys: value.AGENTPOST_PREVIOUS_SECRET_KEYS,
    },
    deliverability: {
      trackingUrl: (value.AGENTPOST_TRACKING_URL ?? publicUrl).replace(/\/+$/, ''),
      pauseBounceRate: value.AGENTPOST_PAUSE_BOUNCE_RATE,
      pauseComplaintRate: value.AGENTPOST_PAUSE_COMPLAINT_RATE,
      pauseMinSent: value.AGENTPOST_PAUSE_MIN_SENT,
      pauseWindowDays: Math.max(1, Math.round(value.AGENTPOST_PAUSE_WINDOW / 86_400_000)),
      domain: {
        pauseBounceRate: value.AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE ?? value.AGENTPOST_PAUSE_BOUNCE_RATE,
        pauseComplaintRate: value.AGENTPOST_DOMAIN_PAUSE_COMPLAINT_RATE ?? value.AGENTPOST_PAUSE_COMPLAINT_RATE,
        pauseMinSent: value.AGENTPOST_DOMAIN_PAUSE_MIN_SENT ?? value.AGENTPOST_PAUSE_MIN_SENT,
        pauseWindowDays: Math.max(1, Math.round(value.AGENTPOST_PAUSE_WINDOW / 86_400_000)),
      },
      warmUpSchedule: value.AGENTPOST_WARMUP_SCHEDULE,
    },
  };
}

/** The public URL's host when it is a real name, else `mx.<trial domain>`. */
function defaultMxHost(publicUrl: string, trialDomain: string): string {
  const hostname = new URL(publicUrl).hostname;
  return hostname.includes('.') && isIP(hostname) === 0 ? hostname : `mx.${trialDomain}`;
}
