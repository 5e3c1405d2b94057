/**
 * Reads take turns with the event loop (server/read-turns.ts): one read a turn, I/O looked at between two reads, and
 * reads back to back when the loop has nothing else to do.
 */
import { describe, expect, it } from 'vitest';
import { createReadTurns } from '../../server/read-turns.js';

describe('read turns', () => {
  it('runs one read a turn: what the loop has to do between two reads runs between them', async () => {
    const turns = createReadTurns();
    const order: string[] = [];
    const reads = Array.from({ length: 3 }, async (_, index) => {
      const turn = await turns.take();
      order.push(`read ${index}`);
      // Other work that arrives during this read (an SMTP command, a result of the writer thread).
      setImmediate(() => order.push(`other after ${index}`));
      turn.end();
    });
    await Promise.all(reads);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['read 0', 'other after 0', 'read 1', 'other after 1', 'read 2', 'other after 2']);
  });

  it('gives other work twice the time the last read took while the loop is busy (reads take a third)', async () => {
    let now = 0;
    const turns = createReadTurns(() => now);
    const first = await turns.take();
    now = 10;
    first.end();
    // The end is timed once the turn's promise jobs (the response's write) are done.
    await new Promise((resolve) => process.nextTick(resolve));
    // Other work took 2 ms before the next turn: the loop is busy, so the next read waits until twice the read's 10 ms have passed.
    now = 12;
    let started = false;
    const second = Promise.resolve(turns.take()).then((turn) => {
      started = true;
      return turn;
    });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(false);
    now = 25;
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(false);
    now = 31;
    (await second).end();
    expect(started).toBe(true);
  });

  it('holds reads to their share only while mail is flowing through the process', async () => {
    let now = 0;
    let flowing = false;
    const turns = createReadTurns(
      () => now,
      () => flowing,
    );
    const first = await turns.take();
    now = 10;
    first.end();
    await new Promise((resolve) => process.nextTick(resolve));
    // 2 ms of other work (writing the last response, parsing the next requests), but no mail: the next read goes at once.
    now = 12;
    const second = await turns.take();
    now = 22;
    second.end();
    await new Promise((resolve) => process.nextTick(resolve));
    // Mail starts flowing: the same gap now makes the loop busy, and the next read waits its turn.
    flowing = true;
    now = 24;
    let started = false;
    const third = Promise.resolve(turns.take()).then((turn) => {
      started = true;
      return turn;
    });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(false);
    now = 43;
    (await third).end();
    expect(started).toBe(true);
  });

  it('runs reads back to back when nothing else is waiting', async () => {
    let now = 0;
    const turns = createReadTurns(() => now);
    for (let read = 0; read < 5; read++) {
      const turn = await turns.take();
      // A read of 10 ms, and the next turn 0.1 ms after it: nothing else ran, the next read goes at once.
      now += 10;
      turn.end();
      await new Promise((resolve) => process.nextTick(resolve));
      now += 0.1;
    }
    expect(now).toBeCloseTo(50.5);
    expect(turns.waiting()).toBe(0);
  });

  it('gives a read its turn at once, without waiting for the loop, while no mail flows and no read waits', async () => {
    let flowing = false;
    const turns = createReadTurns(undefined, () => flowing);
    const free = turns.take();
    expect(free).not.toBeInstanceOf(Promise);
    (free as { end(): void }).end();
    // Mail flows: reads wait for their turn, and a read that comes while one waits queues behind it even once mail stops.
    flowing = true;
    const order: string[] = [];
    const waiting = Promise.resolve(turns.take()).then((turn) => (order.push('first'), turn.end()));
    flowing = false;
    const behind = turns.take();
    expect(behind).toBeInstanceOf(Promise);
    await Promise.all([waiting, Promise.resolve(behind).then((turn) => (order.push('second'), turn.end()))]);
    expect(order).toEqual(['first', 'second']);
    expect(turns.take()).not.toBeInstanceOf(Promise);
  });
});
