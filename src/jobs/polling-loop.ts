/**
 * @module jobs/polling-loop
 * A background loop that runs one step at a time, sleeps between steps, can be woken early, and stops cleanly
 * (the step in progress finishes first). The job worker and the outbox dispatcher are built on it.
 */
import { outsideTestClock } from '../clock-scope.js';
import type { Logger } from '../ports/index.js';

/** What a step asks for next: `true` run again at once; a number: sleep at most that many ms; `false`: a full interval. */
export type StepResult = boolean | number;

/** A running loop. */
export interface PollingLoop {
  /** Runs the next step now (with `woken = true`) instead of waiting for the interval. */
  wake(): void;
  /** Ends the sleep early without marking the step as woken (e.g. a worker slot became free). */
  nudge(): void;
  /** Stops after the current step; resolves when the loop has ended. */
  stop(): Promise<void>;
}

/** Options of {@link startPollingLoop}. */
export interface PollingLoopOptions {
  name: string;
  /** Longest sleep between steps, in real milliseconds. */
  intervalMs: number;
  logger: Logger;
  /** One unit of work. `woken` is true when {@link PollingLoop.wake} was called since the last step. */
  step: (woken: boolean) => Promise<StepResult>;
  /** Called when the loop starts and after every step, failed ones included: the heartbeat `/readyz` reads. */
  onBeat?: () => void;
}

/** Starts the loop at once. */
export function startPollingLoop({ name, intervalMs, logger, step, onBeat }: PollingLoopOptions): PollingLoop {
  let running = true;
  // The first step is not "woken": it looks before it writes, so an idle service makes no writes at all.
  let woken = false;
  let nudged = false;
  let endSleep: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      endSleep = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      clearTimeout(timer);
      endSleep = undefined;
    });

  onBeat?.();
  // Outside any test clock's scope (src/clock-scope.ts), even when started by a test-mode application's request:
  // the loop's steps read real time.
  const done = outsideTestClock(async () => {
    while (running) {
      const wasWoken = woken;
      woken = false;
      nudged = false;
      let next: StepResult = false;
      try {
        next = await step(wasWoken);
      } catch (error) {
        logger.error(`${name} step failed`, {
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
      onBeat?.();
      if (!running) break;
      // A wake or nudge that came while the step ran is not lost: run again instead of sleeping.
      if (next === true || woken || nudged) continue;
      await sleep(typeof next === 'number' ? Math.max(0, Math.min(next, intervalMs)) : intervalMs);
    }
  });

  return {
    wake() {
      woken = true;
      endSleep?.();
    },
    nudge() {
      nudged = true;
      endSleep?.();
    },
    async stop() {
      running = false;
      endSleep?.();
      await done;
    },
  };
}
