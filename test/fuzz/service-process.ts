/**
 * The service under fuzzing, in a process of its own (forked by hostile-input.test.ts), so that what is measured is
 * the service's event loop and heap, not the fuzzer's, and so that a crash is a process that exits. It answers its
 * parent over IPC:
 * - at start: `{ type: 'ready', url, smtpPort, apiKey }`;
 * - `{ type: 'delay' }` → `{ type: 'delay', maxMs }`: the longest the event loop was blocked since the last ask;
 * - `{ type: 'heap' }` → `{ type: 'heap', bytes }`: the heap in use after a full GC (the child runs with --expose-gc);
 * - `{ type: 'jobs' }` → `{ type: 'jobs', pending }`: invitation jobs not yet finished;
 * - `{ type: 'close' }`: closes the service and exits.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { INVITATIONS_JOB } from '../../src/mail/after-delivery.js';
import { startTestService } from '../helpers/service.js';

type Ask = { type: 'delay' | 'heap' | 'jobs' | 'close' };

// The rate limits are off: every input must reach the handlers (test/server/rate-limits.test.ts tests them).
const service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_RATE_LIMIT_GRANT: '0', AGENTPOST_RATE_LIMIT_MULTIPART_SEND: '0' } });
let histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

process.on('message', (ask: Ask) => {
  void (async () => {
    if (ask.type === 'delay') {
      const maxMs = histogram.max / 1e6;
      histogram.disable();
      histogram = monitorEventLoopDelay({ resolution: 10 });
      histogram.enable();
      process.send?.({ type: 'delay', maxMs });
    } else if (ask.type === 'heap') {
      (globalThis as { gc?: () => void }).gc?.();
      process.send?.({ type: 'heap', bytes: process.memoryUsage().heapUsed });
    } else if (ask.type === 'jobs') {
      const pending = await service.core.deps.db.orm.select({ id: tables.jobs.id }).from(tables.jobs).where(eq(tables.jobs.kind, INVITATIONS_JOB));
      process.send?.({ type: 'jobs', pending: pending.length });
    } else {
      histogram.disable();
      await service.close();
      process.exit(0);
    }
  })();
});

process.send?.({ type: 'ready', url: service.url, smtpPort: service.smtpPort, apiKey: service.apiKey });
