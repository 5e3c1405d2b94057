// @ts-check
/**
 * @module calendar/ical-worker
 * Runs in a worker thread (see ical-bounded.ts): parses untrusted iCalendar with the codec of ical.ts, off the
 * event loop, and returns its plain result. The thread is started with a heap cap and killed at a deadline, so
 * whatever the codec's limits miss costs one thread, never the process.
 *
 * Plain JavaScript, like mail/parse-worker.js: a worker thread gets no TypeScript loader from vitest or from
 * `tsx` in the parent. The codec is imported as `./ical.js`, which is there once the sources are compiled; when
 * running from the TypeScript sources it is not, and tsx is registered in this thread to load `./ical.ts`.
 */
import { parentPort } from 'node:worker_threads';

/** @returns {Promise<{ parseICalendar: (text: string, options?: { defaultTimeZone?: string }) => unknown }>} */
async function loadCodec() {
  try {
    return await import('./ical.js');
  } catch (error) {
    const code = error && typeof error === 'object' && 'code' in error ? error.code : undefined;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const { register } = await import('tsx/esm/api');
    register();
    return import('./ical.ts');
  }
}

if (parentPort) {
  const port = parentPort;
  const codec = await loadCodec();
  port.on('message', (/** @type {{ id: number, text: string, defaultTimeZone?: string }} */ job) => {
    let result;
    try {
      result = codec.parseICalendar(job.text, job.defaultTimeZone ? { defaultTimeZone: job.defaultTimeZone } : {});
    } catch (error) {
      // parseICalendar does not throw; this is a bug, reported as a failed parse all the same.
      result = { ok: false, error: `the iCalendar parser failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300) };
    }
    port.postMessage({ id: job.id, result });
  });
  port.postMessage({ ready: true });
}
