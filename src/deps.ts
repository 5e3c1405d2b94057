/**
 * @module deps
 * What the core needs from the outside world, injected so tests control time, ids and I/O.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../storage/index.js';
import type { Config } from './config.js';

/** Source of the current time. Tests pass a fixed or steppable clock. */
export interface Clock {
  now(): Date;
}

/** Makes a new unique identifier. */
export type IdGenerator = () => string;

/** Random bytes (API keys, secrets, nonces); injectable so tests can be deterministic. */
export type RandomBytes = (size: number) => Buffer;

/** DNS look-ups the core makes (domain verification, MX delivery). Tests supply their own resolver. */
export interface DnsResolver {
  resolveTxt(hostname: string): Promise<string[][]>;
  resolveMx(hostname: string): Promise<{ exchange: string; priority: number }[]>;
}

/** Minimal structured logger. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
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
