/**
 * @module system/logger
 * The real logger: JSON lines on stderr.
 */
import type { Logger } from '../ports/logger.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

/** A JSON-lines logger on stderr (stdout stays free for the MCP stdio transport and CLI output). */
export function createLogger(level: keyof typeof LEVELS = 'info'): Logger {
  const threshold = LEVELS[level];
  const write =
    (name: Exclude<keyof typeof LEVELS, 'silent'>) => (message: string, fields?: Record<string, unknown>) => {
      if (LEVELS[name] < threshold) return;
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: name, message, ...fields })}\n`);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
