/**
 * @module mail/stages/evaluation-log
 * Rule-evaluation rows decided outside a message's transaction (at RCPT TO, or for a message nothing was stored
 * of): kept briefly and written in batches. The next message stored takes them into its own transaction (`take`);
 * whatever is left after {@link FLUSH_MS} is written by itself.
 */
import type { Database } from '../../../storage/index.js';
import { recordEvaluations, type EvaluationRow } from '../../admin/audit.js';
import type { Logger } from '../../deps.js';

/** Longest a row waits before it is written by itself, in milliseconds. */
const FLUSH_MS = 100;
/** Rows waiting at most; more are written at once. */
const MAX_WAITING = 500;

/** Creates the log. */
export function createEvaluationLog({ db, logger }: { db: Database; logger: Logger }) {
  let waiting: EvaluationRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const rows = waiting;
    waiting = [];
    if (rows.length === 0) return writing;
    writing = writing
      .then(() => db.write((tx) => recordEvaluations(tx, rows)))
      .catch((error: unknown) => logger.error('recording rule evaluations failed', { error: String(error), rows: rows.length }));
    return writing;
  }

  return {
    /** Keeps rows to write soon. */
    later(rows: readonly EvaluationRow[]): void {
      if (rows.length === 0) return;
      waiting.push(...rows);
      if (waiting.length >= MAX_WAITING) void flush();
      else if (!timer) {
        timer = setTimeout(() => void flush(), FLUSH_MS);
        timer.unref();
      }
    },
    /** The rows waiting, for a transaction about to be written (give them back with `later` if it fails). */
    take(): EvaluationRow[] {
      const rows = waiting;
      waiting = [];
      return rows;
    },
    /** Writes what waits; resolves when written (or the failure logged). */
    flush,
  };
}

export type EvaluationLog = ReturnType<typeof createEvaluationLog>;
