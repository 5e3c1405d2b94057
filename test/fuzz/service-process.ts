/**
 * The service under fuzzing, in a process of its own (forked by hostile-input.test.ts), so that what is measured is
 * the service's event loop and heap, not the fuzzer's, and so that a crash is a process that exits. It answers its
 * parent over IPC:
 * - at start: `{ type: 'ready', url, smtpPort, apiKey }`;
 * - `{ type: 'delay' }` → `{ type: 'delay', maxMs, maxGapMs }`: since the last ask, the longest the event loop was
 *   blocked (`maxMs`: the main thread's own CPU time during the longest late timer), and the longest late timer itself
 *   (`maxGapMs`: wall time, which also counts time the process waited for a core that other programs held);
 * - `{ type: 'heap' }` → `{ type: 'heap', bytes }`: the heap in use after a full GC (the child runs with --expose-gc);
 * - `{ type: 'jobs' }` → `{ type: 'jobs', pending }`: invitation jobs not yet finished;
 * - `{ type: 'busy' }` → `{ type: 'busy', activeMs }`: the time the event loop has been busy since it started (the
 *   active time of its utilization, in ms: the main thread's CPU at a finer grain than /proc's 10 ms ticks, as long
 *   as it is not waiting for a core);
 * - `{ type: 'close' }`: closes the service and exits.
 */
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { INVITATIONS_JOB } from '../../src/mail/after-delivery.js';
import { startTestService } from '../helpers/service.js';

type Ask = { type: 'delay' | 'heap' | 'jobs' | 'busy' | 'close' };

// The rate limits are off: every input must reach the handlers (test/server/rate-limits.test.ts tests them).
const service = await startTestService({
  env: {
    AGENTPOST_RATE_LIMIT_APPLICATION: '0',
    AGENTPOST_RATE_LIMIT_GRANT: '0',
    AGENTPOST_RATE_LIMIT_MULTIPART_SEND: '0',
  },
});
/**
 * CPU time of this process's main thread (the event loop), in ms, from /proc (Linux; 10 ms ticks). A late timer is
 * a blocked event loop only as far as the main thread ran meanwhile: on two shared cores a process also waits for
 * a core, and that wait is not the service's doing.
 */
const STAT = `/proc/self/task/${process.pid}/stat`;
function mainThreadCpuMs(): number {
  const stat = readFileSync(STAT, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const PROBE_MS = 10;
let maxMs = 0;
let maxGapMs = 0;
let lastTick = performance.now();
let lastCpu = mainThreadCpuMs();
setInterval(() => {
  const now = performance.now();
  const cpu = mainThreadCpuMs();
  const gap = now - lastTick - PROBE_MS;
  if (gap > maxGapMs) maxGapMs = gap;
  // The main thread's CPU during the gap, less the tick's own share; at most the gap.
  const blocked = Math.min(gap, cpu - lastCpu - PROBE_MS);
  if (blocked > maxMs) maxMs = blocked;
  lastTick = now;
  lastCpu = cpu;
}, PROBE_MS);

process.on('message', (ask: Ask) => {
  void (async () => {
    if (ask.type === 'delay') {
      process.send?.({ type: 'delay', maxMs: Math.max(0, maxMs), maxGapMs });
      maxMs = 0;
      maxGapMs = 0;
    } else if (ask.type === 'busy') {
      process.send?.({ type: 'busy', activeMs: performance.eventLoopUtilization().active });
    } else if (ask.type === 'heap') {
      (globalThis as { gc?: () => void }).gc?.();
      process.send?.({ type: 'heap', bytes: process.memoryUsage().heapUsed });
    } else if (ask.type === 'jobs') {
      const pending = await service.core.deps.db.orm
        .select({ id: tables.jobs.id })
        .from(tables.jobs)
        .where(eq(tables.jobs.kind, INVITATIONS_JOB));
      process.send?.({ type: 'jobs', pending: pending.length });
    } else {
      await service.close();
      process.exit(0);
    }
  })();
});

process.send?.({ type: 'ready', url: service.url, smtpPort: service.smtpPort, apiKey: service.apiKey });
