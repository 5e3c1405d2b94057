/**
 * @module mail/stages/evaluation-log
 * Rule-evaluation rows decided outside a message's transaction (at RCPT TO, or for a message nothing was stored
 * of): kept briefly and written in batches. The next message stored takes them into its own transaction (`take`);
 * a row still waiting {@link FLUSH_MS} after it came is written by itself, with the rows waiting then. Under a steady
 * stream of mail every row rides with a message, and no transaction of its own (a commit that waits on the disk on
 * this thread) is made.
 */
import type { Database } from '../../../storage/index.js';
import { recordEvaluations, type EvaluationRow } from '../../admin/index.js';
import type { Logger } from '../../ports/index.js';
import type { EvaluationLog } from '../contracts.js';

/** Longest a row waits before it is written by itself, in milliseconds. */
const FLUSH_MS = 100;
/** Rows waiting at most; more are written at once. */
const MAX_WAITING = 500;

/** Creates the log. */
export function createEvaluationLog({ db, logger }: { db: Database; logger: Logger }): EvaluationLog {
  let waiting: EvaluationRow[] = [];
  /** When the oldest row waiting came (performance.now()). */
  let oldestAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  function arm(delay: number): void {
    timer = setTimeout(due, delay);
    timer.unref();
  }

  /** The timer: writes the rows waiting once the oldest has waited long enough; rows taken meanwhile reset the wait. */
  function due(): void {
    timer = undefined;
    if (waiting.length === 0) return;
    const waited = performance.now() - oldestAt;
    if (waited < FLUSH_MS) arm(FLUSH_MS - waited);
    else void flush();
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const rows = waiting;
    waiting = [];
    if (rows.length === 0) return writing;
    writing = writing
      .then(() => db.write((tx) => recordEvaluations(tx, rows)))
      .catch((error: unknown) =>
        logger.error('recording rule evaluations failed', { error: String(error), rows: rows.length }),
      );
    return writing;
  }

  return {
    /** Keeps rows to write soon. */
    later(rows: readonly EvaluationRow[]): void {
      if (rows.length === 0) return;
      if (waiting.length === 0) oldestAt = performance.now();
      waiting.push(...rows);
      if (waiting.length >= MAX_WAITING) void flush();
      else if (!timer) arm(FLUSH_MS);
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

export type { EvaluationLog } from '../contracts.js';
