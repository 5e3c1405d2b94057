/**
 * @module config
 * The only reader of `process.env`. `loadConfig(env)` parses the environment once with zod and
 * throws a {@link ConfigError} whose message names every variable that is wrong.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

const port = (fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((value) => value >= 0 && value <= 65_535, 'must be between 0 and 65535')
    .meta({ values: 'a port, 0 to 65535' })
    .default(fallback);

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
        if (!DOMAIN_NAME.test(item)) context.addIssue({ code: 'custom', message: `${JSON.stringify(item)} is not a domain name (expected a comma-separated list such as agents.example.com,mail.example.org)` });
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
    if (isIP(address) !== 6 || (portText !== undefined && (Number(portText) < 1 || Number(portText) > 65_535))) return undefined;
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
      if (ms === undefined || ms <= 0) context.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not a duration (use 90s, 5m, 1h, 5d or seconds)` });
      return ms ?? 0;
    })
    .meta({ values: 'a duration: `90s`, `5m`, `1h`, `5d`, or whole seconds' });
/** A comma-separated list of durations, e.g. the retry schedule `1m,5m,15m,30m,1h` (the last one repeats). */
const durationList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, context) => {
      const items = value.split(',').map((item) => item.trim()).filter(Boolean);
      const out: number[] = [];
      for (const item of items) {
        const ms = durationMs(item);
        if (ms === undefined || ms <= 0) context.addIssue({ code: 'custom', message: `${JSON.stringify(item)} is not a duration (expected a comma-separated list such as 1m,5m,15m,30m,1h)` });
        else out.push(ms);
      }
      if (items.length === 0) context.addIssue({ code: 'custom', message: 'give at least one duration, such as 1m,5m,15m,30m,1h' });
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
        context.addIssue({ code: 'custom', message: `${JSON.stringify(item)} is not a daily cap (expected off, or whole numbers of recipients from 1, day 1 first, comma-separated, such as 50,100,200,400)` });
      } else caps.push(Number(item));
    }
    if (items.length > 366) context.addIssue({ code: 'custom', message: `gives ${items.length} days; a ramp has at most 366` });
    return caps;
  });

/**
 * DNSBLs asked about a client's IP when a policy turns `use_list_dnsbl` on: Spamhaus ZEN (SBL, XBL, PBL) and
 * SpamCop, the two lists most mail servers consult. Spamhaus refuses queries that come through large public
 * resolvers (it answers 127.255.255.x, which is ignored): run a local resolver, or name other zones.
 */
const DEFAULT_DNSBL_ZONES = 'zen.spamhaus.org,bl.spamcop.net';

/** The parts a service process can run (`agentpost serve --roles`, `AGENTPOST_ROLES`). */
export const ROLES = ['http', 'smtp', 'worker'] as const;

/** One part of a service process: the HTTP API (and `/mcp`), the inbound SMTP listener, the background work. */
export type Role = (typeof ROLES)[number];

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
  if (unknown !== undefined) return { error: `${JSON.stringify(unknown)} is not a role (expected a comma-separated subset of ${ROLES.join(', ')}, e.g. http,worker)` };
  if (items.length === 0) return { error: `give at least one role of ${ROLES.join(', ')}` };
  return { roles: ROLES.filter((role) => items.includes(role)) };
}

/**
 * Every variable Agentpost reads, with its default. What each one means is in {@link SETTING_DOCS}; both make
 * docs/configuration.md (`npm run docs:config`).
 */
const EnvSchema = z.object({
  AGENTPOST_DATABASE_URL: z
    .string()
    .regex(/^(file:|libsql:|https?:|wss?:)/, 'must start with file:, libsql:, http(s): or ws(s):')
    .default('file:./data/agentpost.db'),
  AGENTPOST_DATABASE_AUTH_TOKEN: z.string().min(1).optional(),
  AGENTPOST_SECRET_KEY: z.string().min(32, 'must be at least 32 characters (the key that seals secrets at rest is derived from it)').optional(),
  AGENTPOST_SECRET_KEY_FILE: z.string().trim().min(1).optional(),
  AGENTPOST_PREVIOUS_SECRET_KEYS: z
    .string()
    .default('')
    .transform((value, context) => {
      const items = value.split(',').map((item) => item.trim()).filter(Boolean);
      items.forEach((item, index) => {
        if (item.length < 32) context.addIssue({ code: 'custom', message: `entry ${index + 1} is shorter than 32 characters (expected a comma-separated list of earlier AGENTPOST_SECRET_KEY values)` });
      });
      return items;
    }),
  AGENTPOST_HOST: z.string().regex(/^[A-Za-z0-9.:-]+$/, 'must be a host name or IP address such as 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  AGENTPOST_HTTP_PORT: port(3000),
  AGENTPOST_SMTP_PORT: port(2525),
  AGENTPOST_SMTP_MAX_CONNECTIONS: wholeNumber('connections', 1, 1_000_000).default(10_000),
  AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: wholeNumber('connections', 1, 1_000_000).default(20),
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS: wholeNumber('recipients', 1, 1_000).default(3),
  AGENTPOST_SMTP_MAX_UNKNOWN_RECIPIENTS_PER_CLIENT: wholeNumber('recipients an hour', 1, 1_000_000).default(30),
  AGENTPOST_MAX_HEADER_BYTES: wholeNumber('bytes', 1_024, 16 * 1024 * 1024).default(102_400),
  AGENTPOST_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://mail.example.com' }).optional(),
  AGENTPOST_API_KEY: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  AGENTPOST_DOMAINS: domainList(),
  AGENTPOST_TRIAL_DOMAIN: domainName.default('agentpost.localhost'),
  AGENTPOST_MX_HOST: domainName.optional(),
  AGENTPOST_SMTP_RELAY: z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL such as smtp://user:pass@relay.example.com:587' }).optional(),
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
  AGENTPOST_WEBHOOK_TIMEOUT_MS: z.string().regex(/^\d+$/, 'must be a whole number of milliseconds').transform(Number).refine((value) => value >= 1 && value <= 60_000, 'must be between 1 and 60000').default(10_000),
  AGENTPOST_URL: z.url({ protocol: /^https?$/, error: 'must be the http(s) URL of a running Agentpost, e.g. http://127.0.0.1:3000' }).optional(),
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
  AGENTPOST_MESSAGE_JSON_CACHE_BYTES: z.string().regex(/^\d+$/, 'must be a whole number of bytes (0 turns the cache off)').transform(Number).default(64 * 1024 * 1024),
  AGENTPOST_RAW_MIME_PAGE_BYTES: z.string().regex(/^\d+$/, 'must be a whole number of bytes').transform(Number).refine((value) => value >= 1, 'must be at least 1').default(10 * 1024 * 1024),
  AGENTPOST_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (it guards /metrics)').max(256).optional(),
  AGENTPOST_SHUTDOWN_TIMEOUT: duration('30s'),
  AGENTPOST_DNSBL_ZONES: domainList(DEFAULT_DNSBL_ZONES),
  AGENTPOST_RSPAMD_URL: z.url({ protocol: /^https?$/, error: 'must be the http(s) URL of an rspamd normal worker, e.g. http://127.0.0.1:11333' }).optional(),
  AGENTPOST_RSPAMD_TIMEOUT: duration('10s'),
  AGENTPOST_DNS_SERVERS: z
    .string()
    .default('')
    .transform((value, context) => {
      const servers: string[] = [];
      for (const item of value.split(',').map((entry) => entry.trim()).filter(Boolean)) {
        const server = dnsServer(item);
        if (server === undefined) context.addIssue({ code: 'custom', message: `${JSON.stringify(item)} is not a resolver address (expected a comma-separated list of IP[:port], such as 127.0.0.1:5353,[::1]:53,192.0.2.53)` });
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
      if (ms === undefined || ms <= 0) context.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not a duration (use 0 to turn the cache off, or 30s, 5m)` });
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
  AGENTPOST_TRACKING_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://t.mail.example.com' }).optional(),
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
  AGENTPOST_AI_PROVIDER: z.enum(['openai', 'anthropic', 'openai-compatible'], { error: 'must be openai, anthropic or openai-compatible' }).optional(),
  AGENTPOST_AI_MODEL: z.string().trim().min(1).max(200).optional(),
  AGENTPOST_AI_API_KEY: z.string().trim().min(1).max(4096).optional(),
  AGENTPOST_AI_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be the http(s) base URL of the model API, e.g. http://127.0.0.1:11434/v1' }).optional(),
  AGENTPOST_AI_TIMEOUT: duration('60s'),
  AGENTPOST_WORKER_POLL_MS: z.string().regex(/^\d+$/, 'must be a whole number of milliseconds').transform(Number).refine((value) => value >= 1 && value <= 60_000, 'must be between 1 and 60000').default(1_000),
});

/** The name of a setting: every `AGENTPOST_*` variable Agentpost reads. */
export type SettingName = keyof z.input<typeof EnvSchema>;

/** Every setting's name, in the schema's order. */
export const SETTING_NAMES = Object.keys(EnvSchema.shape) as SettingName[];

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
      'The libSQL database: a `file:` path (WAL mode, 5 s busy timeout; a new file gets pages of 16 KB, which takes about a ninth off the mail writer\'s CPU a message; a file made before keeps its 4 KB), or a libSQL server (`libsql://`, `http(s)://`; `ws(s)://` is spoken over HTTP on the same address): see [On a libSQL server](operations.md#on-a-libsql-server-sqld-or-turso).',
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
    description: 'Where the key is kept when `AGENTPOST_SECRET_KEY` is unset; a fresh installation makes it (random, mode 0600).',
  },
  AGENTPOST_PREVIOUS_SECRET_KEYS: {
    group: 'Database and secrets',
    values: 'comma-separated keys of 32 or more characters',
    description: 'Earlier keys, for a rotation: they still open what they sealed, and start-up seals it again with the current key.',
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
    description: 'Inbound SMTP connections open at once from one client (an IPv4 address, or an IPv6 /64); more are answered `421` at the greeting.',
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
  AGENTPOST_PUBLIC_URL: {
    group: 'Listeners and addresses',
    default: '`http://HOST:HTTP_PORT`',
    values: 'an http(s) URL',
    description: 'The base URL clients use to reach the HTTP API, and of upload URLs (unset, those use the origin the client reached).',
  },
  AGENTPOST_API_KEY: {
    group: 'Applications and domains',
    default: 'generated at first start',
    values: '16 to 256 characters',
    description: 'Fixes the default application\'s API key (idempotent across restarts).',
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
    default: 'the public URL\'s host when it is a name, else `mx.<trial domain>`',
    description: 'The host name custom domains publish in MX and SPF records; also the authserv-id of the `Authentication-Results` header of received mail.',
  },
  AGENTPOST_SMTP_RELAY: {
    group: 'Mail out',
    values: 'an `smtp://` or `smtps://` URL (`smtp://user:pass@host:587`)',
    description: 'The outbound relay. Unset: direct delivery to the recipients\' MX hosts. See [Mail out](mail-out.md#relay-or-direct-delivery).',
  },
  AGENTPOST_SMTP_DELIVERY_PORT: {
    group: 'Mail out',
    description: 'The port of direct (MX) delivery when no relay is set (other values for tests and unusual networks).',
  },
  AGENTPOST_SYSTEM_FROM: {
    group: 'Mail out',
    default: '`postmaster@<MX host>`',
    values: 'an email address',
    description: 'The sender of the service\'s own emails (webhook failure alerts).',
  },
  AGENTPOST_OUTBOUND_RETRY_SCHEDULE: {
    group: 'Mail out',
    description: 'Delays between delivery attempts of a temporarily failing recipient; the last one repeats.',
  },
  AGENTPOST_OUTBOUND_GIVE_UP_AFTER: {
    group: 'Mail out',
    description: 'How long a message is retried before it fails for good (recorded on the message, `message.send_failed`).',
  },
  AGENTPOST_MAX_CALENDARS: {
    group: 'Applications and domains',
    values: 'a whole number',
    description: 'The earlier single cap on calendars besides a grant\'s primary one: when set, the default of `AGENTPOST_MAX_CALENDARS_TRIAL` and `AGENTPOST_MAX_CALENDARS_PRODUCTION`.',
  },
  AGENTPOST_MAX_CALENDARS_TRIAL: {
    group: 'Applications and domains',
    default: '`AGENTPOST_MAX_CALENDARS`, else `10`',
    description: 'Calendars a grant may have besides its primary one when its application\'s plan is `trial`.',
  },
  AGENTPOST_MAX_CALENDARS_PRODUCTION: {
    group: 'Applications and domains',
    default: '`AGENTPOST_MAX_CALENDARS`, else `100`',
    description: 'The same when its application\'s plan is `production`.',
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
    description: 'The earlier name of `AGENTPOST_ALLOW_PRIVATE_NETWORKS`, still accepted; `AGENTPOST_ALLOW_PRIVATE_NETWORKS` wins when both are set.',
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
    description: '`agentpost mcp` only: a running service to call (with `AGENTPOST_API_KEY`); unset, the MCP server runs embedded on the local database. See [MCP](mcp.md).',
  },
  AGENTPOST_GRANT_ID: {
    group: 'agentpost mcp',
    values: 'a grant id or email address',
    description: '`agentpost mcp` only: binds every tool to this mailbox, so agents need not pass `grant_id`.',
  },
  AGENTPOST_REQUIRE_APPROVAL: {
    group: 'agentpost mcp',
    description:
      '`agentpost mcp` only: `send_message` and `send_draft` need a person\'s approval (MCP elicitation; a draft is saved instead when the client cannot ask). Over HTTP: `/mcp?require_approval=true`; AI SDK: `createAgentpostTools({ requireApproval: true })`.',
  },
  AGENTPOST_HTTP_MAX_HEADER_BYTES: {
    group: 'HTTP API',
    description:
      'Request line plus headers of one HTTP request (Node\'s `maxHeaderSize`, set explicitly); more is answered 431, or 414 when the request line alone is too long.',
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
    description: 'Requests a second per application on application-level routes (`0`: no limit); see [Rate limits](security.md#rate-limits).',
  },
  AGENTPOST_RATE_LIMIT_GRANT: {
    group: 'HTTP API',
    description: 'Requests a second per grant on `/v3/grants/{grant_id}/…` and on `/mcp` calls that name a grant (`0`: no limit).',
  },
  AGENTPOST_RATE_LIMIT_MULTIPART_SEND: {
    group: 'HTTP API',
    description: 'Multipart (`multipart/form-data`) sends a second per grant (`0`: no limit).',
  },
  AGENTPOST_RATE_LIMIT_FAILED_AUTH: {
    group: 'HTTP API',
    description: 'Failed authentications a minute per client address before it gets 429 for every request (`0`: no limit; set it behind a reverse proxy).',
  },
  AGENTPOST_MESSAGE_JSON_CACHE_BYTES: {
    group: 'HTTP API',
    values: 'bytes; `0` turns it off',
    description:
      'Bytes of message JSON kept in memory to answer message lists (64 MB). An entry is used only while its message\'s revision in the database is unchanged, so lists never show a stale message; see [How lists are served](http-api.md#how-message-lists-are-served).',
  },
  AGENTPOST_RAW_MIME_PAGE_BYTES: {
    group: 'HTTP API',
    values: 'bytes, at least 1',
    description: 'Raw MIME bytes in one page of a `fields=raw_mime` message list (10 MB; at least one message a page).',
  },
  AGENTPOST_METRICS_TOKEN: {
    group: 'Processes and logs',
    values: '16 to 256 characters',
    description: 'Turns on `GET /metrics` (Prometheus), which then needs `Authorization: Bearer <token>`; unset, `/metrics` answers 404. See [Metrics](operations.md#metrics).',
  },
  AGENTPOST_SHUTDOWN_TIMEOUT: {
    group: 'Processes and logs',
    description:
      'On SIGTERM/SIGINT (or `close()` when embedded), how long HTTP requests and SMTP transactions under way may take to finish before they are cut off; see [Shutdown](operations.md#shutdown).',
  },
  AGENTPOST_DNSBL_ZONES: {
    group: 'Mail in',
    description:
      'DNSBL zones the inbound spam stage asks about the client\'s IP when a policy sets `spam_detection.use_list_dnsbl`; see [Authentication and spam](mail-in.md#authentication-and-spam). Spamhaus refuses queries that come through large public resolvers: run a local resolver, or name other zones.',
  },
  AGENTPOST_RSPAMD_URL: {
    group: 'Mail in',
    values: 'an http(s) URL',
    description: 'rspamd\'s normal worker (`http://127.0.0.1:11333`): every received message is scored with its HTTP `checkv2` API; unset, no rspamd.',
  },
  AGENTPOST_RSPAMD_TIMEOUT: {
    group: 'Mail in',
    description: 'The deadline of one rspamd check; an rspamd that does not answer in time, or answers an error, defers the message (`451 4.3.0`).',
  },
  AGENTPOST_DNS_SERVERS: {
    group: 'DNS',
    default: 'the system\'s resolvers',
    values: 'comma-separated `IP[:port]` (`127.0.0.1:5353,[::1]:53,192.0.2.53`); host names are refused',
    description:
      'The resolvers every DNS look-up of the service goes to: domain verification, MX delivery, the relay\'s host name, SPF/DKIM/DMARC/ARC and DNSBL checks of received mail, webhook targets, connected accounts\' IMAP and SMTP servers. Host addresses (A/AAAA) are then asked of them too, not of `/etc/hosts`. See [DNS resolvers](operations.md#dns-resolvers).',
  },
  AGENTPOST_DNS_TIMEOUT: {
    group: 'DNS',
    description: 'How long one DNS query waits for an answer before it is asked again (twice in all; c-ares doubles the wait the second time).',
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
      'The parts `agentpost serve` runs (`--roles` on the command line wins): `http` (the API, `/mcp`, health and metrics), `smtp` (the inbound listener), `worker` (outbox dispatcher, job worker, webhook delivery, connected accounts\' sync, retention purge and policy upkeep); an unknown name stops the start. See [Scale-out](scale-out.md).',
  },
  AGENTPOST_TRACKING_URL: {
    group: 'Listeners and addresses',
    default: '`AGENTPOST_PUBLIC_URL`',
    values: 'an http(s) URL',
    description:
      'The base URL of the open pixel and link redirects put in tracked messages (`<url>/t/o/…`, `<url>/t/l/…`); it must reach this service\'s HTTP port. See [Open and click tracking](mail-out.md#open-and-click-tracking).',
  },
  AGENTPOST_PAUSE_BOUNCE_RATE: {
    group: 'Deliverability',
    description: 'A grant\'s sending pauses when its hard bounces over recipients sent, in the window, reach this rate; see [Paused sending](mail-out.md#paused-sending).',
  },
  AGENTPOST_PAUSE_COMPLAINT_RATE: {
    group: 'Deliverability',
    description: 'A grant\'s sending pauses when its complaints over recipients sent, in the window, reach this rate.',
  },
  AGENTPOST_PAUSE_MIN_SENT: {
    group: 'Deliverability',
    description: 'Rates are judged only once the grant sent to at least this many recipients in the window.',
  },
  AGENTPOST_PAUSE_WINDOW: {
    group: 'Deliverability',
    description: 'The rolling window of those rates, in whole UTC days ending today (a domain\'s rates use it too).',
  },
  AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_BOUNCE_RATE`',
    description:
      'A sending domain\'s sending (every grant on it) pauses when the hard bounces of everything sent from it, over recipients sent, in the window, reach this rate; see [Reputation per sending domain](mail-out.md#reputation-per-sending-domain).',
  },
  AGENTPOST_DOMAIN_PAUSE_COMPLAINT_RATE: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_COMPLAINT_RATE`',
    description: 'The same for the domain\'s complaint rate.',
  },
  AGENTPOST_DOMAIN_PAUSE_MIN_SENT: {
    group: 'Deliverability',
    default: '`AGENTPOST_PAUSE_MIN_SENT`',
    description: 'A domain\'s rates are judged only once it sent to at least this many recipients in the window.',
  },
  AGENTPOST_WARMUP_SCHEDULE: {
    group: 'Deliverability',
    default: '28 days, `50` → `6400`',
    values: '`off`, or daily recipient caps, day 1 first, comma-separated (`50,100,200,400`; at most 366 days, each from 1)',
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
    description: 'Days of mail the initial sync of a new account covers (newest first; by INTERNALDATE); an account\'s `settings.sync_days` overrides it.',
  },
  AGENTPOST_IMAP_POLL_INTERVAL: {
    group: 'Connected accounts',
    description: 'How often every folder is looked at for changes (a full sync pass); with IDLE, INBOX changes are seen at once and the other folders at this interval.',
  },
  AGENTPOST_IMAP_LEASE: {
    group: 'Connected accounts',
    description:
      'How long a worker process holds an account it syncs without renewing (it renews every third of it). With several worker processes on one database each account is synced by one of them; the accounts of a process that stops cleanly go to another at once, those of one that died once its leases ran out.',
  },
  AGENTPOST_IMAP_HISTORY_EVENTS: {
    group: 'Connected accounts',
    description:
      'Whether the messages of an account\'s initial sync (its mail from before it was connected) record `message.created` each. Off, one `grant.imap_sync_completed` announces them, as Nylas v3 sends no notifications for a mailbox\'s past; new mail after the connection records `message.created` either way.',
  },
  AGENTPOST_IMAP_FETCH_THREAD: {
    group: 'Connected accounts',
    description:
      'Whether an initial sync\'s large FETCHes run on a thread of their own, over a second connection to the server (when a connection slot is free; else on the account\'s own). `auto` turns them on with 4 cores or more. It takes imapflow\'s reading of the answers off the event loop; the threads (a core each beyond three, at most four) are kept while the service runs, so their code stays compiled. On fewer cores a sync is no faster with them (measured on 2; see [Benchmarks](benchmarks.md#imap-sync)).',
  },
  AGENTPOST_AI_PROVIDER: {
    group: 'Smart Compose',
    description:
      'The model provider of [Smart Compose](smart-compose.md); `openai-compatible` is any server that speaks OpenAI\'s chat completions API, a local one included. Unset, Smart Compose answers 503.',
  },
  AGENTPOST_AI_MODEL: {
    group: 'Smart Compose',
    values: 'a model id (`gpt-4o-mini`, `claude-3-5-haiku-latest`, `llama3.1`, …)',
    description: 'The provider\'s model id; required with a provider.',
  },
  AGENTPOST_AI_API_KEY: {
    group: 'Smart Compose',
    description: 'The provider\'s API key; required for `openai` and `anthropic`, optional for `openai-compatible`.',
  },
  AGENTPOST_AI_BASE_URL: {
    group: 'Smart Compose',
    default: 'the provider\'s own',
    values: 'an http(s) URL (`http://127.0.0.1:11434/v1` for a local server)',
    description: 'The API\'s base URL; required for `openai-compatible`, optional for the others (a proxy).',
  },
  AGENTPOST_AI_TIMEOUT: {
    group: 'Smart Compose',
    description: 'The longest wait for one Smart Compose generation, the whole answer (streamed or not); past it the call answers 504.',
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
  _zod: { def: { type: string; defaultValue?: unknown; entries?: Record<string, string>; innerType?: SchemaLayer; in?: SchemaLayer } };
}

/** A setting's schema and every schema it wraps (default, optional, the input side of a transform), outermost first. */
function schemaLayers(schema: SchemaLayer): SchemaLayer[] {
  const layers: SchemaLayer[] = [];
  for (let layer: SchemaLayer | undefined = schema; layer; layer = layer._zod.def.innerType ?? layer._zod.def.in) layers.push(layer);
  return layers;
}

/** The schema's own default, as Markdown; an empty default is none. */
function schemaDefault(layers: SchemaLayer[]): string | undefined {
  const withDefault = layers.find((layer) => layer._zod.def.type === 'default');
  const value = withDefault?._zod.def.defaultValue;
  return value === undefined || value === '' ? undefined : `\`${String(value)}\``;
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
    const layers = schemaLayers(EnvSchema.shape[name] as unknown as SchemaLayer);
    const fromSchema = schemaDefault(layers);
    if (fromSchema !== undefined && doc.default !== undefined) {
      throw new Error(`${name}: its default is in the schema (${fromSchema}); remove the default of its SETTING_DOCS entry`);
    }
    return { name, group: doc.group, default: doc.default ?? fromSchema, values: doc.values ?? schemaValues(layers), description: doc.description };
  });
}

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

/** Settings of the model, checked together: a provider needs a model, and the key or URL that provider needs. */
function aiConfigOf(value: { AGENTPOST_AI_PROVIDER?: AiProvider | undefined; AGENTPOST_AI_MODEL?: string | undefined; AGENTPOST_AI_API_KEY?: string | undefined; AGENTPOST_AI_BASE_URL?: string | undefined }): AiConfig | undefined {
  const provider = value.AGENTPOST_AI_PROVIDER;
  const problems: string[] = [];
  if (provider === undefined) {
    if (value.AGENTPOST_AI_MODEL !== undefined) problems.push('AGENTPOST_AI_MODEL: set AGENTPOST_AI_PROVIDER too (openai, anthropic or openai-compatible)');
  } else {
    if (value.AGENTPOST_AI_MODEL === undefined) problems.push(`AGENTPOST_AI_MODEL: required with AGENTPOST_AI_PROVIDER=${provider} (the provider's model id)`);
    if (provider !== 'openai-compatible' && value.AGENTPOST_AI_API_KEY === undefined) problems.push(`AGENTPOST_AI_API_KEY: required with AGENTPOST_AI_PROVIDER=${provider}`);
    if (provider === 'openai-compatible' && value.AGENTPOST_AI_BASE_URL === undefined) problems.push('AGENTPOST_AI_BASE_URL: required with AGENTPOST_AI_PROVIDER=openai-compatible (e.g. http://127.0.0.1:11434/v1)');
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  if (provider === undefined) return undefined;
  return { provider, model: value.AGENTPOST_AI_MODEL!, apiKey: value.AGENTPOST_AI_API_KEY, baseUrl: value.AGENTPOST_AI_BASE_URL?.replace(/\/+$/, '') };
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
  const present = Object.fromEntries(Object.entries(env).filter(([key, value]) => key.startsWith('AGENTPOST_') && value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const value = parsed.data;
  // Node refuses a header deadline past the request deadline (the headers are part of the request).
  if (value.AGENTPOST_HTTP_HEADERS_TIMEOUT > value.AGENTPOST_HTTP_REQUEST_TIMEOUT) {
    throw new ConfigError('Invalid configuration:\n  AGENTPOST_HTTP_HEADERS_TIMEOUT: must not be longer than AGENTPOST_HTTP_REQUEST_TIMEOUT');
  }
  const ai = aiConfigOf(value);
  // An IPv6 literal needs brackets in a URL (`http://[::1]:3000`).
  const urlHost = isIP(value.AGENTPOST_HOST) === 6 ? `[${value.AGENTPOST_HOST}]` : value.AGENTPOST_HOST;
  const publicUrl = (value.AGENTPOST_PUBLIC_URL ?? `http://${urlHost}:${value.AGENTPOST_HTTP_PORT}`).replace(/\/+$/, '');
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
