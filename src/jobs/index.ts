/**
 * @module jobs
 * The front door of src/jobs/: what other areas, the operations and the faces use of it.
 */
export {
  createJobQueue,
  enqueueJob,
  jobRowOf,
  type ClaimOptions,
  type Job,
  type JobInput,
  type JobOutcome,
  type JobQueue,
  type OrderedJob,
  type Settlement,
} from './job-queue.js';
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
