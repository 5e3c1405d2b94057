/**
 * @module jobs
 * The front door of src/jobs/: what other areas, the operations and the faces use of it.
 */
export type {
  ClaimOptions,
  Job,
  JobInput,
  JobOutcome,
  JobQueue,
  OrderedClaimOptions,
  OrderedJob,
  Settlement,
} from './contracts.js';
export { createJobQueue, enqueueJob, jobRowOf } from './job-queue.js';
export { earlierJobRunAt } from './job-store.js';
export { startPollingLoop, type PollingLoop } from './polling-loop.js';
export {
  createWorker,
  defaultBackoffMs,
  type JobContext,
  type JobHandler,
  type Worker,
  type WorkerOptions,
} from './worker.js';
