/**
 * @module attachment-text/pool
 * One or two worker threads (extract-worker.ts) that do the reading, reused across calls. Each request runs with a
 * deadline and under the thread's heap cap (`resourceLimits`): a request that overruns its deadline terminates its
 * thread (the next request starts another) and fails with `timeout`; one that exhausts the heap fails with
 * `too_large`; a thread that dies otherwise fails its request with `unreadable`. The process never goes down with
 * it. Threads start on first use through storage/engine/worker-module.ts (compiled JavaScript in dist/, the TypeScript
 * sources under tsx or vitest), and keep the process alive only while they have work.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker, workerModule } from '../../storage/engine/worker-module.js';
import type { AttachmentTextErrorReason } from './contracts.js';
import { AttachmentTextError } from './errors.js';
import type { WorkerReply, WorkerRequest } from './extract-worker.js';

const WORKER_MODULE = workerModule(import.meta.url, 'extract-worker');

/** A request without its id (the pool numbers them). */
export type PoolRequest = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id'> : never) : never;

/** Options of {@link createPool}. */
export interface PoolOptions {
  workers: number;
  maxHeapMb: number;
}

/** Runs requests on the threads. */
export interface Pool {
  run<T>(request: PoolRequest, timeoutMs: number, transfer?: ArrayBuffer[]): Promise<T>;
  close(): Promise<void>;
}

interface Job {
  id: number;
  request: PoolRequest;
  transfer: ArrayBuffer[];
  timeoutMs: number;
  queuedAt: number;
  resolve(value: unknown): void;
  reject(error: AttachmentTextError): void;
}

interface Slot {
  worker: Worker | undefined;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Creates the pool. */
export function createPool(options: PoolOptions): Pool {
  const slots: Slot[] = Array.from({ length: Math.min(2, Math.max(1, options.workers)) }, () => ({
    worker: undefined,
    job: undefined,
    timer: undefined,
  }));
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function settle(slot: Slot, outcome: { value: unknown } | { error: AttachmentTextError }) {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    slot.worker?.unref();
    if (job) {
      if ('error' in outcome) job.reject(outcome.error);
      else job.resolve(outcome.value);
    }
    dispatch();
  }

  function discard(slot: Slot) {
    const worker = slot.worker;
    if (!worker) return;
    slot.worker = undefined;
    worker.removeAllListeners();
    worker.on('error', () => undefined);
    void worker.terminate();
  }

  function spawn(slot: Slot): Worker {
    const worker = startWorker(WORKER_MODULE, {
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb, maxYoungGenerationSizeMb: 32 },
    });
    worker.on('message', (reply: WorkerReply) => {
      if (slot.worker !== worker || slot.job?.id !== reply.id) return;
      settle(
        slot,
        reply.ok
          ? { value: reply.value }
          : { error: new AttachmentTextError(reply.reason as AttachmentTextErrorReason, reply.message) },
      );
    });
    const died = (error: AttachmentTextError) => {
      if (slot.worker !== worker) return;
      discard(slot);
      if (slot.job) settle(slot, { error });
    };
    worker.on('error', (error: Error & { code?: string }) =>
      died(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new AttachmentTextError(
              'too_large',
              `Reading the attachment needs more memory than an extraction may use (${options.maxHeapMb} MB).`,
            )
          : new AttachmentTextError('unreadable', `The attachment reader stopped (${error.message.slice(0, 200)}).`),
      ),
    );
    worker.on('exit', (code) =>
      died(new AttachmentTextError('unreadable', `The attachment reader stopped (exit code ${code}).`)),
    );
    slot.worker = worker;
    return worker;
  }

  function dispatch() {
    for (const slot of slots) {
      if (slot.job || queue.length === 0 || closed) continue;
      const job = queue.shift()!;
      // Time spent waiting for a thread counts against the deadline too.
      const remaining = job.timeoutMs - (performance.now() - job.queuedAt);
      if (remaining <= 0) {
        job.reject(timeout(job.timeoutMs));
        continue;
      }
      const worker = slot.worker ?? spawn(slot);
      worker.ref();
      slot.job = job;
      slot.timer = setTimeout(() => {
        discard(slot);
        settle(slot, { error: timeout(job.timeoutMs) });
      }, remaining);
      worker.postMessage({ ...job.request, id: job.id }, job.transfer);
    }
  }

  return {
    run<T>(request: PoolRequest, timeoutMs: number, transfer: ArrayBuffer[] = []) {
      return new Promise<T>((resolve, reject) => {
        if (closed) return reject(new AttachmentTextError('unreadable', 'The attachment reader is closed.'));
        queue.push({
          id: nextId++,
          request,
          transfer,
          timeoutMs,
          queuedAt: performance.now(),
          resolve: resolve,
          reject,
        });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0))
        job.reject(new AttachmentTextError('unreadable', 'The attachment reader is closed.'));
      await Promise.all(
        slots.map(async (slot) => {
          const worker = slot.worker;
          slot.worker = undefined;
          if (slot.job)
            settle(slot, { error: new AttachmentTextError('unreadable', 'The attachment reader is closed.') });
          if (worker) {
            worker.removeAllListeners();
            worker.on('error', () => undefined);
            await worker.terminate();
          }
        }),
      );
    },
  };
}

function timeout(ms: number): AttachmentTextError {
  return new AttachmentTextError(
    'timeout',
    `Reading the attachment took longer than ${ms} ms and was stopped; it may be damaged or built to be slow.`,
  );
}
