/**
 * @module calendar/ical-worker
 * Runs in a worker thread (see ical-bounded.ts, started by storage/engine/worker-module.ts): parses untrusted iCalendar with
 * the codec of ical.ts, off the event loop, and returns its plain result. The thread is started with a heap cap and
 * killed at a deadline, so whatever the codec's limits miss costs one thread, never the process.
 */
import { parentPort } from 'node:worker_threads';
import { parseICalendar, type ParsedCalendar, type Result } from './ical.js';

if (parentPort) {
  const port = parentPort;
  port.on('message', (job: { id: number; text: string; defaultTimeZone?: string }) => {
    let result: Result<ParsedCalendar>;
    try {
      result = parseICalendar(job.text, job.defaultTimeZone ? { defaultTimeZone: job.defaultTimeZone } : {});
    } catch (error) {
      // parseICalendar does not throw; this is a bug, reported as a failed parse all the same.
      result = {
        ok: false,
        error: `the iCalendar parser failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300),
      };
    }
    port.postMessage({ id: job.id, result });
  });
  port.postMessage({ ready: true });
}
