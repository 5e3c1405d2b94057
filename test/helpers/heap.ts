/**
 * The live heap, for tests that bound what the service holds: garbage awaiting collection is not held, and counting
 * it makes a bound depend on when V8 chose to collect.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full garbage collection on demand, whether or not this process was started with --expose-gc. */
export function fullCollection(): () => void {
  const gc = global.gc;
  if (typeof gc === 'function') return () => gc();
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The bytes held after a full collection: the JavaScript heap and the buffers outside it. */
export function liveBytes(collect: () => void): number {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
