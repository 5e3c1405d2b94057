/**
 * @module deps
 * What the core needs from the outside world, injected so tests control time, ids and I/O.
 */
import type { SecretBox } from './secrets/secret-box.js';
import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Database } from '../storage/index.js';
import type { Config } from './config.js';
import type { SmtpClient } from './mail/outbound-smtp.js';
import type { InboundStages } from './mail/stages/inbound-pipeline.js';

/** Source of the current time. Tests pass a fixed or steppable clock. */
export interface Clock {
  now(): Date;
}

/** Makes a new unique identifier. */
export type IdGenerator = () => string;

/** Random bytes (API keys, secrets, nonces); injectable so tests can be deterministic. */
export type RandomBytes = (size: number) => Buffer;

/**
 * Every DNS look-up the core makes (domain verification, MX delivery and the relay's address, the authentication and
 * DNSBL checks of received mail, webhook targets). `server/main.ts` builds it with {@link systemDns} from
 * `AGENTPOST_DNS_SERVERS`; tests supply their own resolver.
 */
export interface DnsResolver {
  resolveTxt(hostname: string): Promise<string[][]>;
  resolveMx(hostname: string): Promise<{ exchange: string; priority: number }[]>;
  /**
   * The addresses a host name connects to, as the operating system resolves them (getaddrinfo: hosts file, then
   * DNS). Webhook delivery checks every one before connecting and then connects to the checked address only.
   */
  lookup(hostname: string): Promise<{ address: string; family: 4 | 6 }[]>;
  /**
   * Any record type, as `node:dns` `resolve(hostname, rrtype)` answers it (`A`/`AAAA`/`PTR`: strings, `TXT`: string
   * arrays, `MX`: exchange and priority). The mail authentication (SPF, DKIM, DMARC, ARC) and DNSBL look-ups use it;
   * absent, they fall back to the methods above (TXT, MX, and A/AAAA through `lookup`). Failures reject with the
   * `node:dns` codes (`ENOTFOUND`/`ENODATA`: no such record; anything else: a temporary error).
   */
  resolve?(hostname: string, rrtype: string): Promise<unknown[]>;
}

/** Options of {@link systemDns}. */
export interface SystemDnsOptions {
  /**
   * Resolvers to ask (`AGENTPOST_DNS_SERVERS`, in `setServers` form: `127.0.0.1:5353`, `[::1]:53`). Given, every
   * look-up goes to them, host addresses too (`lookup` asks them for A and AAAA instead of calling getaddrinfo, so
   * neither `/etc/hosts` nor `/etc/resolv.conf` is read; `localhost` names are loopback, RFC 6761). Empty: the system's.
   */
  servers?: readonly string[] | undefined;
  /** How long one query waits before it is tried again (twice in all), in ms; default c-ares' own (5 s, 4 tries). */
  timeoutMs?: number | undefined;
}

/** A `node:dns`-style error (`code` is one of its codes: `ENOTFOUND`, `ENODATA`, `ESERVFAIL`, `ETIMEOUT`, …). */
function dnsError(code: string, syscall: string, hostname: string): Error & { code: string } {
  return Object.assign(new Error(`${syscall} ${code} ${hostname}`), { code, syscall, hostname });
}

/**
 * The real resolver: DNS queries through `node:dns` (to `servers` when given, see {@link SystemDnsOptions}), `lookup`
 * through getaddrinfo unless servers are given.
 */
export function systemDns(options: SystemDnsOptions = {}): DnsResolver {
  const servers = options.servers ?? [];
  const resolver = options.timeoutMs !== undefined ? new Resolver({ timeout: options.timeoutMs, tries: 2 }) : new Resolver();
  if (servers.length > 0) resolver.setServers([...servers]);
  const systemLookup = async (hostname: string) =>
    (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? (6 as const) : (4 as const) }));
  /** A and AAAA from the configured resolvers; one kind missing is fine, both missing is ENOTFOUND. */
  const resolverLookup = async (hostname: string): Promise<{ address: string; family: 4 | 6 }[]> => {
    const literal = isIP(hostname);
    if (literal !== 0) return [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length > 0) return found;
    // Both failed: a temporary error (SERVFAIL, timeout) wins over "no such record", so callers retry instead of giving up.
    const codes = [v4, v6].map((outcome) => (outcome.status === 'rejected' ? String((outcome.reason as { code?: string })?.code ?? '') : 'ENODATA'));
    const trouble = codes.find((code) => code !== 'ENODATA' && code !== 'ENOTFOUND');
    throw dnsError(trouble ?? (codes.includes('ENOTFOUND') ? 'ENOTFOUND' : 'ENODATA'), 'queryA', hostname);
  };
  return {
    resolveTxt: (hostname) => resolver.resolveTxt(hostname),
    resolveMx: (hostname) => resolver.resolveMx(hostname),
    resolve: (hostname, rrtype) => resolver.resolve(hostname, rrtype) as Promise<unknown[]>,
    lookup: servers.length > 0 ? resolverLookup : systemLookup,
  };
}

/** An operational email the service itself sends (webhook failure alerts), plain text. */
export interface SystemEmail {
  to: string[];
  subject: string;
  text: string;
}

/**
 * Sends the service's own operational emails. The outbound mail path implements it; until it is wired, the
 * default ({@link loggingNotifier}) only logs what would have been sent. Tests record what was sent.
 */
export interface Notifier {
  send(email: SystemEmail): Promise<void>;
}

/** A {@link Notifier} that writes each email to the log instead of sending it. */
export function loggingNotifier(logger: Logger): Notifier {
  return {
    async send(email) {
      logger.warn('system email (no outbound mail configured)', { to: email.to, subject: email.subject, text: email.text });
    },
  };
}

/** One outbound HTTP request to a third-party endpoint (webhook challenge or delivery). */
export interface OutboundHttpRequest {
  url: URL;
  /**
   * The address the core resolved and checked. The connection goes to it and nowhere else (no second DNS
   * look-up, so a rebinding name cannot swap in another address); TLS still verifies `url.hostname`.
   */
  address: { address: string; family: 4 | 6 };
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Uint8Array | undefined;
  /** The whole exchange (connect, send, response body) must finish within this many milliseconds. */
  timeoutMs: number;
  /** Response body bytes kept at most; the rest is discarded. */
  maxResponseBytes: number;
}

/** The answer to an {@link OutboundHttpRequest}. Redirects are returned as they are, never followed. */
export interface OutboundHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A `fetch`-like HTTP client for requests to third-party endpoints. It rejects on network errors and timeouts.
 * The default is `nodeHttpRequester` (src/webhooks/http-client.ts).
 */
export type HttpRequester = (request: OutboundHttpRequest) => Promise<OutboundHttpResponse>;

/** Minimal structured logger. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How an SMTP reply was reached: the greeting, or the answer to MAIL FROM, RCPT TO or the message data. */
export type SmtpStage = 'greeting' | 'mail' | 'rcpt' | 'data';

/**
 * What the core reports for monitoring (`GET /metrics`). The server records it with prom-client
 * (server/metrics.ts); the core only calls these methods, so it never depends on a metrics library. Counts
 * read from the database (queue depth, jobs by state) are taken by the server at scrape time instead.
 */
export interface Metrics {
  /** An inbound SMTP connection was accepted by the listener (whatever its greeting). */
  smtpSession(): void;
  /** An inbound SMTP reply: `code` 220/250 accept, 4xx/5xx refuse, at `stage`. */
  smtpReply(stage: SmtpStage, code: number): void;
  /** Seconds from the end of a message's data to its reply (parse, store, durable commit). */
  ingestSeconds(seconds: number): void;
  /** One delivery attempt of an outbound message to one recipient, by route and result. */
  outboundAttempt(route: 'local' | 'remote', outcome: 'delivered' | 'deferred' | 'failed'): void;
  /** One webhook POST: `lagSeconds` from the event's commit to this attempt's end. */
  webhookDelivery(outcome: 'delivered' | 'failed', lagSeconds: number): void;
  /** One run of a background job, by kind, with its outcome and duration. */
  jobRun(kind: string, outcome: 'done' | 'retry' | 'give_up', seconds: number): void;
  /**
   * One Smart Compose call of a grant that reached the model, by outcome, with the tokens the model read (`input`)
   * and wrote (`output`) as the provider reported them (0 when it reported none, or failed before answering).
   */
  smartCompose(grantId: string, outcome: SmartComposeOutcome, usage: TextUsage): void;
}

/**
 * How a Smart Compose call ended: a suggestion; the provider's rate limit, the timeout, another provider error; or
 * `cancelled`, the caller went away before the end.
 */
export type SmartComposeOutcome = 'ok' | 'rate_limited' | 'timeout' | 'provider_error' | 'cancelled';

/** The default {@link Metrics}: records nothing. */
export const noMetrics: Metrics = {
  smtpSession() {},
  smtpReply() {},
  ingestSeconds() {},
  outboundAttempt() {},
  webhookDelivery() {},
  jobRun() {},
  smartCompose() {},
};

/** One message of a conversation with a model: what the user asked, or what the model answered before. */
export interface TextMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A request to a {@link TextGenerator}: instructions (`system`) kept apart from the conversation (`messages`). */
export interface TextGenerationRequest {
  /** The instructions; never built from untrusted text. */
  system: string;
  messages: TextMessage[];
  /** Most tokens the model may write. */
  maxOutputTokens: number;
  /** Aborts the generation (the deadline, or the client going away). */
  signal: AbortSignal;
}

/** Tokens a generation consumed, as the provider reported them (undefined: not reported). */
export interface TextUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** One part of a streamed generation: a piece of text, then, last, the usage. */
export type TextStreamPart = { type: 'delta'; text: string } | { type: 'finish'; usage: TextUsage };

/**
 * What a model provider failed with, classified so the core can answer for it: `rate_limit` (the provider's 429),
 * `timeout`, anything else `provider`. `message` is the provider's own; `retryAfterSeconds` its `Retry-After`.
 */
export class TextGenerationError extends Error {
  override readonly name = 'TextGenerationError';
  constructor(
    readonly kind: 'rate_limit' | 'timeout' | 'provider',
    message: string,
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A text-generation model (Smart Compose). The core never imports a model SDK: server/ai-text-generator.ts implements
 * this with the AI SDK's providers, from the `AGENTPOST_AI_*` settings. Both methods reject (or the stream throws)
 * with a {@link TextGenerationError}, or with the abort reason once `signal` fired.
 */
export interface TextGenerator {
  /** Provider and model, for logs (`openai-compatible:llama3.1`). */
  readonly model: string;
  /** The whole answer at once. */
  generate(request: TextGenerationRequest): Promise<{ text: string; usage: TextUsage }>;
  /** The answer as it is generated: deltas, then one `finish` part. */
  stream(request: TextGenerationRequest): AsyncIterable<TextStreamPart>;
}

/** Everything `createCore` takes. */
export interface CoreDeps {
  db: Database;
  config: Config;
  clock: Clock;
  newId: IdGenerator;
  randomBytes: RandomBytes;
  dns: DnsResolver;
  logger: Logger;
  /** Operational emails (webhook failure alerts). Default: {@link loggingNotifier}. */
  notifier?: Notifier | undefined;
  /** Outbound HTTP to webhook endpoints. Default: `nodeHttpRequester`. */
  http?: HttpRequester | undefined;
  /** SMTP client of outbound delivery (relay or MX). Default: a pooled nodemailer client (src/mail/outbound-smtp.ts). */
  smtp?: SmtpClient | undefined;
  /** Monitoring counters (`GET /metrics`). Default: {@link noMetrics}. */
  metrics?: Metrics | undefined;
  /** The model of Smart Compose (server/ai-text-generator.ts builds it from `AGENTPOST_AI_*`). Default: none (503). */
  text?: TextGenerator | undefined;
  /** The authentication and spam stages of inbound mail (src/mail/stages/contracts.ts). Default: none (skipped). */
  inboundStages?: InboundStages | undefined;
  /**
   * Seals secrets at rest (src/secrets/secret-box.ts): connected accounts' passwords, DKIM private keys, webhook
   * secrets, the tracking signing key. `server/main.ts` opens it with `openSecretBox` (src/secrets/key-source.ts:
   * `AGENTPOST_SECRET_KEY`, else the key file, checked against the database); embedders do the same, tests may
   * pass `createSecretBox(<32+ characters>)`.
   */
  secrets: SecretBox;
}

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };

/** Crockford's base32 alphabet: 32 symbols, so 5 random bits map to one without bias. */
const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random 26-character lowercase ids (130 bits), safe in paths, URLs and file names. */
export const randomId: IdGenerator = () => {
  const bytes = randomBytes(26);
  let id = '';
  for (const byte of bytes) id += ID_ALPHABET[byte & 31];
  return id;
};

/** Random bytes drawn ahead, so an id costs no call into the system's generator. */
const RANDOM_POOL_BYTES = 4096;

/**
 * Time-ordered 26-character ids, ULID-style in {@link randomId}'s alphabet: 10 characters of milliseconds (from
 * `clock`), then 16 random characters (80 bits). They stay opaque and unguessable, but ids made one after the
 * other sort together, so every index keyed by an id takes new rows on its last page instead of on a random one:
 * a message stored dirties a handful of pages rather than one per index.
 */
export function timeOrderedIds(clock: Clock): IdGenerator {
  let pool = randomBytes(RANDOM_POOL_BYTES);
  let offset = 0;
  return () => {
    if (offset + 16 > pool.length) {
      pool = randomBytes(RANDOM_POOL_BYTES);
      offset = 0;
    }
    let time = Math.max(0, Math.floor(clock.now().getTime()));
    let id = '';
    for (let index = 0; index < 10; index++) {
      id = ID_ALPHABET[time % 32]! + id;
      time = Math.floor(time / 32);
    }
    for (let index = 0; index < 16; index++) id += ID_ALPHABET[pool[offset++]! & 31];
    return id;
  };
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

/** A JSON-lines logger on stderr (stdout stays free for the MCP stdio transport and CLI output). */
export function createLogger(level: keyof typeof LEVELS = 'info'): Logger {
  const threshold = LEVELS[level];
  const write = (name: Exclude<keyof typeof LEVELS, 'silent'>) => (message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[name] < threshold) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: name, message, ...fields })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** Seconds since the epoch, the unit of every timestamp on the wire. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
