/**
 * The per-server connection slots of connected accounts (src/imap/connection.ts): a bounded wait gives up
 * with a SlotWaitError and leaves the queue, so the slot goes to the next waiter and the count stays right.
 */
import { describe, expect, it } from 'vitest';
import { ServerSlots, SlotWaitError } from '../../../src/imap/connection.js';

describe('ServerSlots', () => {
  it('a bounded wait gives up when no slot frees in time, and leaves the queue as it was', async () => {
    const slots = new ServerSlots(1);
    const first = await slots.acquire('imap.example.test:993');
    const unbounded = slots.acquire('imap.example.test:993');
    await expect(slots.acquire('imap.example.test:993', 30)).rejects.toBeInstanceOf(SlotWaitError);
    expect(slots.waiting('imap.example.test:993')).toBe(1);
    // The slot passes to the waiter still queued, not to the one that gave up.
    first();
    const second = await unbounded;
    expect(slots.held('imap.example.test:993')).toBe(1);
    expect(slots.waiting('imap.example.test:993')).toBe(0);
    second();
    expect(slots.held('imap.example.test:993')).toBe(0);
    // Another server is never held up by this one.
    const other = await slots.acquire('mail.example.org:143', 30);
    other();
  });

  it('a bounded wait that gets its slot in time holds it like any other', async () => {
    const slots = new ServerSlots(1);
    const first = await slots.acquire('s:1');
    const waiting = slots.acquire('s:1', 1_000);
    setTimeout(first, 10);
    const release = await waiting;
    expect(slots.held('s:1')).toBe(1);
    release();
    expect(slots.held('s:1')).toBe(0);
  });
});
