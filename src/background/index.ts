/**
 * @module background
 * The front door of src/background/: what other areas, the operations and the faces use of it.
 */
export type { PurgeResult, Retention, RetentionOptions } from './contracts.js';
export { runDueTimers, startBackgroundWork, type BackgroundOptions, type BackgroundWork } from './background.js';
export {
  advanceTestClock,
  DUE_RUNNERS,
  notTestMode,
  type AdvanceResult,
  type DueRunner,
  type DueRunOptions,
} from './test-clock.js';
