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
    .default(fallback);

const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .transform((value) => value === 'true' || value === '1' || value === 'yes')
    .default(fallback);

const domainName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name such as agents.example.com');

/** Every variable Agentpost reads, with its default. The README's configuration table mirrors it. */
const EnvSchema = z.object({
  AGENTPOST_DATABASE_URL: z
    .string()
    .regex(/^(file:|libsql:|https?:|wss?:)/, 'must start with file:, libsql:, http(s): or ws(s):')
    .default('file:./data/agentpost.db'),
  AGENTPOST_DATABASE_AUTH_TOKEN: z.string().min(1).optional(),
  AGENTPOST_HOST: z.string().min(1).default('127.0.0.1'),
  AGENTPOST_HTTP_PORT: port(3000),
  AGENTPOST_SMTP_PORT: port(2525),
  AGENTPOST_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  AGENTPOST_API_KEY: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  AGENTPOST_DOMAINS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean))
    .pipe(z.array(domainName)),
  AGENTPOST_TRIAL_DOMAIN: domainName.default('agentpost.localhost'),
  AGENTPOST_MX_HOST: domainName.optional(),
  AGENTPOST_SMTP_RELAY: z.url({ protocol: /^smtps?$/ }).optional(),
  AGENTPOST_MAX_CALENDARS: z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).default(10),
  AGENTPOST_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: booleanFlag(false),
});

/** The parsed configuration handed to every part of the service. */
export interface Config {
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  host: string;
  httpPort: number;
  smtpPort: number;
  /** Base URL clients use to reach the HTTP server (tracking links, ICS feeds). */
  publicUrl: string;
  apiKey: string | undefined;
  /** Domains registered, verified, for the default application at start. */
  domains: string[];
  /** Parent of trial subdomains: `anything.<trialDomain>` is usable at once, without DNS. */
  trialDomain: string;
  /** Host name published in MX records of custom domains. */
  mxHost: string;
  smtpRelay: string | undefined;
  maxCalendars: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  allowPrivateWebhooks: boolean;
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
  const publicUrl = (value.AGENTPOST_PUBLIC_URL ?? `http://${value.AGENTPOST_HOST}:${value.AGENTPOST_HTTP_PORT}`).replace(/\/+$/, '');
  return {
    databaseUrl: value.AGENTPOST_DATABASE_URL,
    databaseAuthToken: value.AGENTPOST_DATABASE_AUTH_TOKEN,
    host: value.AGENTPOST_HOST,
    httpPort: value.AGENTPOST_HTTP_PORT,
    smtpPort: value.AGENTPOST_SMTP_PORT,
    publicUrl,
    apiKey: value.AGENTPOST_API_KEY,
    domains: value.AGENTPOST_DOMAINS,
    trialDomain: value.AGENTPOST_TRIAL_DOMAIN,
    mxHost: value.AGENTPOST_MX_HOST ?? defaultMxHost(publicUrl, value.AGENTPOST_TRIAL_DOMAIN),
    smtpRelay: value.AGENTPOST_SMTP_RELAY,
    maxCalendars: value.AGENTPOST_MAX_CALENDARS,
    logLevel: value.AGENTPOST_LOG_LEVEL,
    allowPrivateWebhooks: value.AGENTPOST_ALLOW_PRIVATE_WEBHOOKS,
  };
}

/** The public URL's host when it is a real name, else `mx.<trial domain>`. */
function defaultMxHost(publicUrl: string, trialDomain: string): string {
  const hostname = new URL(publicUrl).hostname;
  return hostname.includes('.') && isIP(hostname) === 0 ? hostname : `mx.${trialDomain}`;
}
