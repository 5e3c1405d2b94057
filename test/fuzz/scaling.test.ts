/**
 * The scaling watchdog: every generator of hostile input (./hostile-generators.ts) is run at sizes n, 4n and 16n
 * against the real service in a process of its own (./service-process.ts): messages over its SMTP listener (and, for
 * some, a read of the stored message over HTTP), requests to its HTTP API, and the report readers it runs on its event
 * loop called directly. For each size it takes the least of a few runs of the main thread's busy time (the service's
 * event loop for the first two kinds, this process's CPU for the third). It fails when:
 * - the cost grows super-linearly: more than 32 times from n to 16n (linear is 16; quadratic 256). Costs under a floor
 *   at 16n are not measurable against the noise of a service that does other work meanwhile, and pass;
 * - any one input blocks the service's event loop for more than 250 ms of main-thread CPU at the largest size (for a
 *   message read back, its read too at the sizes of `npm test`; at the 40 MB cap its read, one serialization of the
 *   whole body as JSON, is reported and not held to it);
 * - an input is answered with a reset or a 5xx other than the refusals the service documents (552 5.3.4 for a header
 *   section over its limit).
 * Issue 33: a header field folded over 100,000 lines held the event loop for 25 s (mailauth's header reader was
 * quadratic); the fuzz watchdog's edits, which repeat a line at most 400 times, never reached where the cost shows.
 *
 * `npm test` runs the sizes of `sizes.test`; `npm run fuzz` (FUZZ_SCALE=limit) runs up to each generator's limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { createMailbox, sendRaw } from '../helpers/mail.js';
import { Nylas } from '../helpers/service.js';
import { GENERATORS, type Generator } from './hostile-generators.js';
import { startServiceProcess, type ServiceProcess } from './service-client.js';

const SCALE: 'test' | 'limit' =
  process.env.FUZZ_SCALE === 'limit' || process.env.FUZZ_RUNS !== undefined ? 'limit' : 'test';
/** Runs at each size; the least is kept (a run the machine slowed is not the input's doing). */
const RUNS = 3;
/** Growth allowed from n to 16n: twice linear. */
const MAX_GROWTH = 32;
/** Below this cost at 16n (ms), growth is noise, not a trend. */
const FLOOR_MS = 30;
/** The longest the event loop may be blocked by one input. */
const MAX_BLOCK_MS = 250;

const DOMAIN = 'scaling.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;

describe('the cost of hostile input grows linearly with its size', () => {
  let service: ServiceProcess;
  let grantId: string;
  const table: string[] = [];

  beforeAll(async () => {
    service = await startServiceProcess();
    grantId = await createMailbox(
      {
        url: service.url,
        apiKey: service.apiKey,
        nylas: new Nylas({ apiKey: service.apiKey, apiUri: service.url, timeout: 30 }),
      },
      AGENT,
    );
  });

  afterAll(async () => {
    console.log(
      `scaling watchdog (${SCALE} sizes; main-thread ms at n, 4n, 16n; growth n→16n; worst block at 16n):\n${table.join('\n')}`,
    );
    await service?.close();
  });

  const busy = async () => (await service.ask<{ activeMs: number }>('busy')).activeMs;
  /** One API call of a generator, answered below 500. */
  async function call(what: string, target: { method: string; path: string; body?: string }): Promise<number> {
    const response = await request(service.url, target.method, target.path, {
      key: service.apiKey,
      ...(target.body ? { body: target.body, headers: { 'content-type': 'application/json' } } : {}),
    });
    expect(response.status, `${what}: ${response.text.slice(0, 300)}`).toBeLessThan(500);
    return response.status;
  }

  /** The attachment ids of a stored message, in order. */
  async function attachmentsOf(messageId: string): Promise<string[]> {
    const response = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${messageId}`, {
      key: service.apiKey,
    });
    return ((response.body as { data?: { attachments?: { id: string }[] } }).data?.attachments ?? []).map(
      (attachment) => attachment.id,
    );
  }

  /**
   * One input of size `n`: its cost (ms of main-thread time) and the longest block of the event loop it caused; for a
   * message read back, the longest block of that read apart (`readBlockMs`).
   */
  async function once(generator: Generator, n: number): Promise<{ ms: number; blockMs: number; readBlockMs?: number }> {
    if (generator.kind === 'parser') {
      const before = process.cpuUsage();
      await generator.run(n);
      const used = process.cpuUsage(before);
      return { ms: (used.user + used.system) / 1000, blockMs: 0 };
    }
    await service.ask('delay');
    const started = await busy();
    if (generator.kind === 'smtp') {
      const reply = await sendRaw(service.smtpPort, 'sender@example.com', [AGENT], generator.message(n, AGENT));
      expect(reply.code === 250 || reply.text.includes('5.3.4'), `${generator.name} at ${n}: ${reply.text}`).toBe(true);
      const stored = /stored as (\S+)/.exec(reply.text)?.[1];
      if (generator.read && stored) {
        const { maxMs: ingestBlockMs } = await service.ask<{ maxMs: number }>('delay');
        const attachmentIds = generator.readsAttachment ? await attachmentsOf(stored) : [];
        if (generator.readsAttachment)
          expect(attachmentIds, `${generator.name} at ${n}: no attachment`).toHaveLength(1);
        const status = await call(`${generator.name} read at ${n}`, generator.read(grantId, stored, attachmentIds));
        // An attachment is read (200) or refused naming why (422: unreadable, zip_bomb, timeout), never lost (404).
        if (generator.readsAttachment) expect([200, 422], `${generator.name} read at ${n}`).toContain(status);
        const ms = (await busy()) - started;
        const { maxMs: readBlockMs } = await service.ask<{ maxMs: number }>('delay');
        return { ms, blockMs: ingestBlockMs, readBlockMs };
      }
    } else {
      await call(`${generator.name} at ${n}`, generator.request(n, grantId));
    }
    const ms = (await busy()) - started;
    const { maxMs } = await service.ask<{ maxMs: number }>('delay');
    return { ms, blockMs: maxMs };
  }

  for (const generator of GENERATORS) {
    it(`${generator.name} (${generator.kind})`, { timeout: 180_000 }, async () => {
      const base = SCALE === 'limit' ? generator.sizes.limit : generator.sizes.test;
      // Warm-up at the smallest size: the first input of a kind compiles its code paths.
      await once(generator, base);
      const costs: number[] = [];
      let blockMs = 0;
      let readBlockMs: number | undefined;
      for (const n of [base, 4 * base, 16 * base]) {
        let least = Infinity;
        for (let run = 0; run < RUNS; run++) {
          const result = await once(generator, n);
          least = Math.min(least, result.ms);
          if (n === 16 * base) blockMs = Math.max(blockMs, result.blockMs);
          if (n === 16 * base && result.readBlockMs !== undefined)
            readBlockMs = Math.max(readBlockMs ?? 0, result.readBlockMs);
        }
        costs.push(least);
      }
      const growth = costs[2]! / Math.max(costs[0]!, 0.5);
      table.push(
        `  ${generator.name.padEnd(34)} n=${String(base).padEnd(8)} ${costs.map((cost) => cost.toFixed(1).padStart(8)).join(' ')}   ×${growth.toFixed(1).padStart(5)}   block ${blockMs.toFixed(0)} ms${readBlockMs === undefined ? '' : `, its read ${readBlockMs.toFixed(0)} ms`}`,
      );
      if (costs[2]! >= FLOOR_MS)
        expect(
          growth,
          `${generator.name}: ${costs.map((cost) => cost.toFixed(1)).join(' → ')} ms from n=${base} to 16n`,
        ).toBeLessThanOrEqual(MAX_GROWTH);
      expect(blockMs, `${generator.name} at 16n blocked the event loop for ${blockMs.toFixed(0)} ms`).toBeLessThan(
        MAX_BLOCK_MS,
      );
      // The read of a stored message answers its whole body as JSON, in one serialization: at the sizes of npm test
      // it is held to the same bound; at the 40 MB cap (npm run fuzz) it is reported, not held (see docs/security.md).
      if (readBlockMs !== undefined && SCALE === 'test')
        expect(
          readBlockMs,
          `reading ${generator.name} at 16n blocked the event loop for ${readBlockMs.toFixed(0)} ms`,
        ).toBeLessThan(MAX_BLOCK_MS);
    });
  }
});
