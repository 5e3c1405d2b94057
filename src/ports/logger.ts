/**
 * @module ports/logger
 * The structured logger of the core (the real one: `createLogger`, src/system/logger.ts).
 */

/** Minimal structured logger. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
