/**
 * Crash containment of the worker threads: a parser thread that overruns its deadline or dies is replaced, its
 * parse fails (the message is then stored raw, never dropped), and its owner is told; a checkpoint thread that dies
 * is replaced and reported; the health registry logs and counts each, and `/healthz` shows them.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWalCheckpointer, RESTART_DELAY_MS } from '../../storage/engine/wal-checkpointer.js';
import { createHealth } from '../../src/health.js';
import { createMimeParser } from '../../src/mime/parse-inbound.js';
import { createLogger } from '../../src/index.js';
import { startTestService, tempDir } from '../helpers/service.js';

/** A multipart message big enough that mailparser needs more than a millisecond or two for it. */
function largeMessage(): Buffer {
  const part = (index: number) =>
    ['--b', `Content-Type: text/html; charset=utf-8`, '', `<div>${'<p>word </p>'.repeat(20_000)}${index}</div>`].join(
      '\r\n',
    );
  return Buffer.from(
    [
      'From: a@example.com',
      'To: b@example.com',
      'Subject: big',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      ...Array.from({ length: 20 }, (_, index) => part(index)),
      '--b--',
      '',
    ].join('\r\n'),
  );
}

describe('worker threads that stop on their own are replaced and reported', () => {
  it('a parser thread that overruns its deadline is stopped and reported; its parse fails, the next one works', async () => {
    const crashes: string[] = [];
    const parser = createMimeParser({ workers: 1, timeoutMs: 5, onCrash: (reason) => crashes.push(reason) });
    try {
      const slow = await parser.parse(largeMessage());
      expect(slow.ok).toBe(false);
      expect(crashes).toEqual([expect.stringContaining('longer than 5 ms')]);
    } finally {
      await parser.close();
    }
    const healthy = createMimeParser({ workers: 1, onCrash: (reason) => crashes.push(reason) });
    try {
      const fine = await healthy.parse(Buffer.from('From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n'));
      expect(fine.ok).toBe(true);
      expect(crashes).toHaveLength(1);
    } finally {
      await healthy.close();
    }
  });

  it('a checkpoint thread that dies is started again, and each exit is reported until close', async () => {
    const dir = tempDir();
    const exits: string[] = [];
    // A file in a folder that does not exist: the thread cannot open its connection and dies at once, every time.
    const checkpointer = startWalCheckpointer(join(dir.path, 'missing', 'nowhere.db'), {
      onExit: (reason) => exits.push(reason),
    });
    try {
      const started = Date.now();
      while (exits.length < 2 && Date.now() - started < 10 * RESTART_DELAY_MS)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(exits.length).toBeGreaterThanOrEqual(2);
      expect(exits[0]).toMatch(/exit code/);
    } finally {
      await checkpointer.close();
    }
    const after = exits.length;
    await new Promise((resolve) => setTimeout(resolve, 2 * RESTART_DELAY_MS));
    expect(exits.length).toBe(after);
    dir.remove();
  });

  it('the health registry counts exits per thread and /healthz and /readyz show them', async () => {
    const lines: string[] = [];
    const logger = { ...createLogger('silent'), error: (message: string) => void lines.push(message) };
    const health = createHealth(logger, () => new Date('2026-11-24T12:00:00Z'));
    health.threadExited('mime parser', 'exit code 1');
    health.threadExited('mime parser', 'a parse took longer than 15000 ms');
    expect(health.threads()).toEqual({
      'mime parser': {
        exits: 2,
        lastExit: { at: '2026-11-24T12:00:00.000Z', reason: 'a parse took longer than 15000 ms' },
      },
    });
    expect(lines.some((line) => line.includes('worker thread stopped'))).toBe(true);

    const service = await startTestService();
    try {
      service.core.health.threadExited('mail writer', 'exit code 1');
      const body = (await (await fetch(`${service.url}/healthz`)).json()) as {
        status: string;
        threads: Record<string, { exits: number }>;
      };
      expect(body).toMatchObject({ status: 'ok', threads: { 'mail writer': { exits: 1 } } });
      // Readiness reports it too, and stays ready: the thread was replaced.
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', threads: { 'mail writer': { exits: 1 } } });
    } finally {
      await service.close();
    }
  });
});
