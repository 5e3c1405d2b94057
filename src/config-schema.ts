/**
 * @module config-schema
 * The settings' schema: every `AGENTPOST_*` variable Agentpost reads, with its default and the values it takes
 * ({@link EnvSchema}). ./config.ts parses the environment with it (`loadConfig`); ./config-docs.ts writes
 * docs/configuration.md from it.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { ROLES, type Role } from './config-types.js';

const portValue = () =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((value) => value >= 0 && value <= 65_535, 'must be between 0 and 65535')
    .meta({ values: 'a port, 0 to 65535' });
const port = (fallback: number) => portValue().default(fallback);

const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes')
  .meta({ values: '`true` or `false` (also `1`/`0`, `yes`/`no`)' });
const booleanFlag = (fallback: boolean) => flag.default(fallback);

/** A whole number from `min` to `max` (`unit` names it in the error). */
const wholeNumber = (unit: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number of ${unit}`)
    .transform(Number)
    .refine((value) => value >= min && value <= max, `must be between ${min} and ${max}`)
    .meta({ values: `a whole number of ${unit}, ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}` });

/** A rate from 0 to 1 (`0.05` is 5%). */
const rateValue = () =>
  z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a rate from 0 to 1, such as 0.05 for 5%')
    .transform(Number)
    .meta({ values: 'a rate from 0 to 1 (`0.05` is 5%)' });
const rate = (fallback: number) => rateValue().default(fallback);

/** A DNS name of two or more labels, lower-cased (`agents.example.com`). */
const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const domainName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(DOMAIN_NAME, 'must be a domain name such as agents.example.com')
  .meta({ values: 'a domain name' });

/** A comma-separated list of domain names; a bad entry is named in the error together with its value. */
const domainList = (fallback = '') =>
  z
    .string()
    .default(fallback)
    .transform((value, context) => {
      const items = value
        .split(',')
        .map((item) => item.trim().toLowerCase())
        .filter(Boolean);
      for (const item of items) {
        if (!DOMAIN_NAME.test(item))
          context.addIssue({
            code: 'custom',
            message: `${JSON.stringify(item)} is not a domain name (expected a comma-separated list such as agents.example.com,mail.example.org)`,
          });
      }
      return items;
    })
    .meta({ values: 'comma-separated domain names' });

/**
 * One resolver of `AGENTPOST_DNS_SERVERS` in the form `node:dns` `setServers` takes: an IPv4 address with an optional
 * `:port`, an IPv6 address bare or as `[address]:port`. Host names are refused (resolving them would need a resolver).
 */
function dnsServer(item: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(item);
  if (bracketed) {
    const [, address, portText] = bracketed as unknown as [string, string, string | undefined];
    if (isIP(address) !== 6 || (portText !== undefined && (Number(portText) < 1 || Number(portText) > 65_535)))
      return undefined;
    return portText ? `[${address}]:${portText}` : address;
  }
  if (isIP(item) === 6) return item;
  const v4 = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(item);
  if (!v4 || isIP(v4[1]!) !== 4) return undefined;
  if (v4[2] !== undefined && (Number(v4[2]) < 1 || Number(v4[2]) > 65_535)) return undefined;
  return item;
}

/** `90s`, `5m`, `1h`, `5d` or plain seconds → milliseconds. */
const DURATION = /^(\d+)(s|m|h|d)?$/;
const DURATION_UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * DURATION_UNITS[(match[2] ?? 's') as keyof typeof DURATION_UNITS];
}
const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, context) => {
      const ms = durationMs(value);
      if (ms === undefined || ms <= 0)
        context.addIssue({
          code: 'custom',
          message: `${JSON.stringify(value)} is not a duration (use 90s, 5m, 1h, 5d or seconds)`,
        });
      return ms ?? 0;
    })
    .meta({ values: 'a duration: `90s`, `5m`, `1h`, `5d`, or whole seconds' });
/** A comma-separated list of durations, e.g. the retry schedule `1m,5m,15m,30m,1h` (the last one repeats). */
const durationList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, context) => {
      const items = value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      const out: number[] = [];
      for (const item of items) {
        const ms = durationMs(item);
        if (ms === undefined || ms <= 0)
          context.addIssue({
            code: 'custom',
            message: `${JSON.stringify(item)} is not a duration (expected a comma-separated list such as 1m,5m,15m,30m,1h)`,
          });
        else out.push(ms);
      }
      if (items.length === 0)
        context.addIssue({ code: 'custom', message: 'give at least one duration, such as 1m,5m,15m,30m,1h' });
      return out;
    })
    .meta({ values: 'comma-separated durations (`s`, `m`, `h`, `d`)' });

/**
 * The default warm-up ramp of a new custom domain: recipients a day, day 1 first, over four weeks (28 days). It
 * starts at 50 and doubles every three or four days, up to 6,400; from day 29 on there is no cap.
 */
export const DEFAULT_WARMUP_SCHEDULE = [
  ...Array<number>(3).fill(50),
  ...Array<number>(4).fill(100),
  ...Array<number>(3).fill(200),
  ...Array<number>(4).fill(400),
  ...Array<number>(3).fill(800),
  ...Array<number>(4).fill(1_600),
  ...Array<number>(3).fill(3_200),
  ...Array<number>(4).fill(6_400),
];

/**
 * `AGENTPOST_WARMUP_SCHEDULE`: daily caps, day 1 first, comma-separated (`50,100,200`), at most 366 days; or `off`
 * (new custom domains start without warm-up). Unset: {@link DEFAULT_WARMUP_SCHEDULE}.
 */
const warmUpSchedule = z
  .string()
  .optional()
  .transform((value, context): number[] | 'off' => {
    if (value === undefined) return DEFAULT_WARMUP_SCHEDULE;
    if (value.trim().toLowerCase() === 'off') return 'off';
    const items = value.split(',').map((item) => item.trim());
    const caps: number[] = [];
    for (const item of items) {
      if (!/^\d+$/.test(item) || Number(item) < 1 || Number(item) > 1_000_000_000) {
        context.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)} is not a daily cap (expected off, or whole numbers of recipients from 1, day 1 first, comma-separated, such as 50,100,200,400)`,
        });
      } else caps.push(Number(item));
    }
    if (items.length > 366)
      context.addIssue({ code: 'custom', message: `gives ${items.length} days; a ramp has at most 366` });
    return caps;
  });

/**
 * DNSBLs asked about a client's IP when a policy turns `use_list_dnsbl` on: Spamhaus ZEN (SBL, XBL, PBL) and
 * SpamCop, the two lists most mail servers consult. Spamhaus refuses queries that come through large public
 * resolvers (it answers 127.255.255.x, which is ignored): run a local resolver, or name other zones.
 */
const DEFAULT_DNSBL_ZONES = 'zen.spamhaus.org,bl.spamcop.net';

/** The parts a service process can run (`agentpost serve --roles`, `AGENTPOST_ROLES`). */

/**
 * Parses a comma-separated list of roles (`http,smtp`): trimmed, lower-cased, duplicates dropped, in the order of
 * {@link ROLES}. Returns the roles, or a message naming the first bad entry (an empty list is bad too).
 */
export function parseRoles(text: string): { roles: Role[] } | { error: string } {
  const items = text
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
  const unknown = items.find((item) => !(ROLES as readonly string[]).includes(item));
  if (unknown !== undefined)
    return {
      error: `${JSON.stringify(unknown)} is not a role (expected a comma-separated subset of ${ROLES.join(', ')}, e.g. http,worker)`,
    };
  if (items.length === 0) return { error: `give at least one role of ${ROLES.join(', ')}` };
  return { roles: ROLES.filter((role) => items.includes(role)) };
}

/**
 * Every variable Agentpost reads, with its default. What each one means is in `SETTING_DOCS` (./config-docs.ts); both make
 * docs/configuration.md (`npm run docs:config`).
 */
export const EnvSchema = z.object({
  AGENTPOST_DATABASE_URL: z
    .string()
    .regex(/^(file:|libsql:|https?:|wss?:)/, 'must start with file:, libsql:, http(s): or ws(s):')
    .default('file:./data/agentpost.db'),
  AGENTPOST_DATABASE_AUTH_TOKEN: z.string().min(1).optional(),
  AGENTPOST_SECRET_KEY: z
    .string()
    .min(32, 'must be at least 32 characters (the key that seals secrets at rest is derived from it)')
    .optional(),
  AGENTPOST_SECRET_KEY_FILE: z.string().trim().min(1).optional(),
  AGENTPOST_PREVIOUS_SECRET_KEYS: z
    .string()
    .default('')
    .transform((value, context) => {
      const items = value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      items.forEach((item, index) => {
        if (item.length < 32)
          context.addIssue({
            code: 'custom',
            message: `entry ${index + 1} is shorter than 32 characters (expected a comma-separated list of earlier AGENTPOST_SECRET_KEY values)`,
          });
      });
      return items;
    }),
  AGENTPOST_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:-]+$/, 'must be a host name or IP address such as 127.0.0.1 or 0.0.0.0')
    .default('127.0.0.1'),
  AGENTPOST_HTTP_PORT: port(3000),
  AGENTPOST_SMTP_PORT: port(2525),
  AGENTPOST_SMTP_MAX_CONNECTIONS: wholeNumber('connections', 1, 1_000_000).default(10_000),
  AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: wholeNumber('connections', 1, 1_000_000).default(20),
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS: wholeNumber('recipients', 1, 1_000).default(3),
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT: wholeNumber('recipients an hour', 1, 1_000_000).default(30),
  AGENTPOST_MAX_HEADER_BYTES: wholeNumber('bytes', 1_024, 16 * 1024 * 1024).default(102_400),
  AGENTPOST_SUBMISSION_PORT: portValue().optional(),
  AGENTPOST_SUBMISSION_TLS_PORT: portValue().optional(),
  AGENTPOST_TLS_CERT_FILE: z.string().trim().min(1).optional(),
  AGENTPOST_TLS_KEY_FILE: z.string().trim().min(1).optional(),
  AGENTPOST_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://mail.example.com' })
    .optional(),
  AGENTPOST_API_KEY: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  AGENTPOST_DOMAINS: domainList(),
  AGENTPOST_TRIAL_DOMAIN: domainName.default('agentpost.localhost'),
  AGENTPOST_MX_HOST: domainName.optional(),
  AGENTPOST_SMTP_RELAY: z
    .url({
      protocol: /^smtps?$/,
      error: 'must be an smtp:// or smtps:// URL such as smtp://user:pass@relay.example.com:587',
    })
    .optional(),
  AGENTPOST_SMTP_DELIVERY_PORT: port(25),
  AGENTPOST_SYSTEM_FROM: z.email({ error: 'must be an email address such as postmaster@mail.example.com' }).optional(),
  AGENTPOST_OUTBOUND_RETRY_SCHEDULE: durationList('1m,5m,15m,30m,1h'),
  AGENTPOST_OUTBOUND_GIVE_UP_AFTER: duration('5d'),
  AGENTPOST_MAX_CALENDARS: z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).optional(),
  AGENTPOST_MAX_CALENDARS_TRIAL: wholeNumber('calendars', 0, 1_000_000).optional(),
  AGENTPOST_MAX_CALENDARS_PRODUCTION: wholeNumber('calendars', 0, 1_000_000).optional(),
  AGENTPOST_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  AGENTPOST_ALLOW_PRIVATE_NETWORKS: flag.optional(),
  /** The earlier name of AGENTPOST_ALLOW_PRIVATE_NETWORKS, still accepted. */
  AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: flag.optional(),
  AGENTPOST_WEBHOOK_TIMEOUT_MS: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of milliseconds')
    .transform(Number)
    .refine((value) => value >= 1 && value <= 60_000, 'must be between 1 and 60000')
    .default(10_000),
  AGENTPOST_URL: z
    .url({ protocol: /^https?$/, error: 'must be the http(s) URL of a running Agentpost, e.g. http://127.0.0.1:3000' })
    .optional(),
  AGENTPOST_GRANT_ID: z.string().min(1).max(320).optional(),
  AGENTPOST_REQUIRE_APPROVAL: booleanFlag(false),
  AGENTPOST_HTTP_MAX_HEADER_BYTES: wholeNumber('bytes', 1024, 1024 * 1024).default(16 * 1024),
  AGENTPOST_HTTP_HEADERS_TIMEOUT: duration('10s'),
  AGENTPOST_HTTP_REQUEST_TIMEOUT: duration('120s'),
  AGENTPOST_HTTP_KEEP_ALIVE_TIMEOUT: duration('5s'),
  AGENTPOST_RATE_LIMIT_APPLICATION: wholeNumber('requests a second', 0, 1_000_000).default(50),
  AGENTPOST_RATE_LIMIT_GRANT: wholeNumber('requests a second', 0, 1_000_000).default(200),
  AGENTPOST_RATE_LIMIT_MULTIPART_SEND: wholeNumber('requests a second', 0, 1_000_000).default(10),
  AGENTPOST_RATE_LIMIT_FAILED_AUTH: wholeNumber('failed attempts a minute', 0, 1_000_000).default(20),
  AGENTPOST_MESSAGE_JSON_CACHE_BYTES: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of bytes (0 turns the cache off)')
    .transform(Number)
    .default(64 * 1024 * 1024),
  AGENTPOST_RAW_MIME_PAGE_BYTES: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of bytes')
    .transform(Number)
    .refine((value) => value >= 1, 'must be at least 1')
    .default(10 * 1024 * 1024),
  AGENTPOST_METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters (it guards /metrics)')
    .max(256)
    .optional(),
  AGENTPOST_SHUTDOWN_TIMEOUT: duration('30s'),
  AGENTPOST_ACCESS_LOG_RETENTION_DAYS: wholeNumber('days', 1, 36_500).default(90),
  AGENTPOST_DASHBOARD_PATH: z
    .string()
    .trim()
    .regex(/^off$|^(\/[A-Za-z0-9._~-]+)+$/, 'must be off (no dashboard) or a path such as /dashboard')
    .default('/dashboard'),
  AGENTPOST_DASHBOARD_SESSION_HOURS: wholeNumber('hours', 1, 720).default(8),
  AGENTPOST_APPROVAL_EXPIRY_HOURS: wholeNumber('hours', 1, 8_760).default(24),
  AGENTPOST_EVENT_RETENTION_HOURS: wholeNumber('hours', 1, 8_760).default(24),
  AGENTPOST_EVENT_STREAM_HEARTBEAT_SECONDS: wholeNumber('seconds', 1, 3_600).default(15),
  AGENTPOST_EVENT_STREAM_MAX_BEHIND: wholeNumber('events', 10, 1_000_000).default(10_000),
  AGENTPOST_DNSBL_ZONES: domainList(DEFAULT_DNSBL_ZONES),
  AGENTPOST_RSPAMD_URL: z
    .url({
      protocol: /^https?$/,
      error: 'must be the http(s) URL of an rspamd normal worker, e.g. http://127.0.0.1:11333',
    })
    .optional(),
  AGENTPOST_RSPAMD_TIMEOUT: duration('10s'),
  AGENTPOST_DNS_SERVERS: z
    .string()
    .default('')
    .transform((value, context) => {
      const servers: string[] = [];
      for (const item of value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)) {
        const server = dnsServer(item);
        if (server === undefined)
          context.addIssue({
            code: 'custom',
            message: `${JSON.stringify(item)} is not a resolver address (expected a comma-separated list of IP[:port], such as 127.0.0.1:5353,[::1]:53,192.0.2.53)`,
          });
        else servers.push(server);
      }
      return servers;
    }),
  AGENTPOST_DNS_TIMEOUT: duration('5s'),
  AGENTPOST_DNS_CACHE_TTL: z
    .string()
    .default('60s')
    .transform((value, context) => {
      if (value.trim() === '0') return 0;
      const ms = durationMs(value);
      if (ms === undefined || ms <= 0)
        context.addIssue({
          code: 'custom',
          message: `${JSON.stringify(value)} is not a duration (use 0 to turn the cache off, or 30s, 5m)`,
        });
      return ms ?? 0;
    }),
  AGENTPOST_ROLES: z
    .string()
    .default(ROLES.join(','))
    .transform((value, context) => {
      const parsed = parseRoles(value);
      if ('error' in parsed) context.addIssue({ code: 'custom', message: parsed.error });
      return 'roles' in parsed ? parsed.roles : [];
    }),
  AGENTPOST_TRACKING_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://t.mail.example.com' })
    .optional(),
  AGENTPOST_PAUSE_BOUNCE_RATE: rate(0.05),
  AGENTPOST_PAUSE_COMPLAINT_RATE: rate(0.001),
  AGENTPOST_PAUSE_MIN_SENT: wholeNumber('recipients', 1, 1_000_000_000).default(50),
  AGENTPOST_PAUSE_WINDOW: duration('7d'),
  AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: rateValue().optional(),
  AGENTPOST_DOMAIN_PAUSE_COMPLAINT_RATE: rateValue().optional(),
  AGENTPOST_DOMAIN_PAUSE_MIN_SENT: wholeNumber('recipients', 1, 1_000_000_000).optional(),
  AGENTPOST_WARMUP_SCHEDULE: warmUpSchedule,
  AGENTPOST_IMAP_CONNECT_TIMEOUT: duration('15s'),
  AGENTPOST_IMAP_COMMAND_TIMEOUT: duration('60s'),
  AGENTPOST_IMAP_MAX_CONNECTIONS_PER_SERVER: wholeNumber('connections', 1, 10_000).default(8),
  AGENTPOST_IMAP_SYNC_DAYS: wholeNumber('days', 1, 36_500).default(90),
  AGENTPOST_IMAP_POLL_INTERVAL: duration('60s'),
  AGENTPOST_IMAP_LEASE: duration('30s'),
  AGENTPOST_IMAP_HISTORY_EVENTS: booleanFlag(false),
  AGENTPOST_IMAP_FETCH_THREAD: z.enum(['auto', 'on', 'off'], { error: 'must be auto, on or off' }).default('auto'),
  AGENTPOST_AI_PROVIDER: z
    .enum(['openai', 'anthropic', 'openai-compatible'], { error: 'must be openai, anthropic or openai-compatible' })
    .optional(),
  AGENTPOST_AI_MODEL: z.string().trim().min(1).max(200).optional(),
  AGENTPOST_AI_API_KEY: z.string().trim().min(1).max(4096).optional(),
  AGENTPOST_AI_BASE_URL: z
    .url({
      protocol: /^https?$/,
      error: 'must be the http(s) base URL of the model API, e.g. http://127.0.0.1:11434/v1',
    })
    .optional(),
  AGENTPOST_AI_TIMEOUT: duration('60s'),
  AGENTPOST_WORKER_POLL_MS: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of milliseconds')
    .transform(Number)
    .refine((value) => value >= 1 && value <= 60_000, 'must be between 1 and 60000')
    .default(1_000),
});

/** The name of a setting: every `AGENTPOST_*` variable Agentpost reads. */
export type SettingName = keyof z.input<typeof EnvSchema>;

/** Every setting's name, in the schema's order. */
export const SETTING_NAMES = Object.keys(EnvSchema.shape) as SettingName[];
