/**
 * @module clock-scope
 * The test clock's scope (issue 40, item 8): while an operation of a test-mode application runs, or the test clock
 * runs what fell due, the core's clock (`core.deps.clock`, wrapped once by {@link scopedClock} in `createCore`) reads
 * that application's virtual time instead of the real one. Every area keeps reading `clock.now()` as before; only the
 * scope differs (an AsyncLocalStorage entered by the operation runner, src/operations/define-operation.ts).
 *
 * The virtual time is frozen for the length of one scope: a test clock moves only when told
 * (`POST /v3/test-clock/advance`). Background loops leave any scope ({@link outsideTestClock}), so the real worker
 * never reads a virtual time, and the job queue turns a virtual `run_at` into a real one (src/jobs/job-queue.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from './ports/clock.js';

/** A test-mode application's virtual time, as one scope sees it. */
export interface TestClockScope {
  readonly applicationId: string;
  /** Virtual unix milliseconds. */
  readonly at: number;
}

const scopes = new AsyncLocalStorage<TestClockScope>();

/** Marks a clock already wrapped, so `createCore` on a core's own deps does not wrap twice. */
const WRAPPED = Symbol('scoped clock');

/** `real` as seen through the test clock's scope: the scope's virtual time inside one, `real.now()` outside. */
export function scopedClock(real: Clock): Clock {
  if ((real as { [WRAPPED]?: true })[WRAPPED]) return real;
  return Object.assign(
    {
      now(): Date {
        const scope = scopes.getStore();
        return scope ? new Date(scope.at) : real.now();
      },
    },
    { [WRAPPED]: true as const },
  );
}

/** Runs `work` with the clock reading `scope.at` (for a test-mode application). */
export function runInTestClock<T>(scope: TestClockScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** The test clock's scope this code runs in, if any. */
export function currentTestClock(): TestClockScope | undefined {
  return scopes.getStore();
}

/** Runs `work` outside any test clock's scope (the clock reads real time), as background loops do. */
export function outsideTestClock<T>(work: () => T): T {
  return scopes.exit(work);
}
