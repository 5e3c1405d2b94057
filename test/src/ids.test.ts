/** The service's id generator: opaque 26-character ids that sort by the time they were made. */
import { describe, expect, it } from 'vitest';
import { timeOrderedIds, type Clock } from '../../src/index.js';

function steppingClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => new Date(now),
    advance(ms) {
      now += ms;
    },
  };
}

describe('timeOrderedIds', () => {
  it('makes 26 lowercase base32 characters, unique, that sort in the order of the clock', () => {
    const clock = steppingClock(Date.parse('2026-11-22T03:00:00Z'));
    const next = timeOrderedIds(clock);
    const ids: string[] = [];
    const times = new Set<number>();
    for (let index = 0; index < 3000; index++) {
      times.add(clock.now().getTime());
      ids.push(next());
      if (index % 7 === 0) clock.advance(1);
    }
    for (const id of ids) expect(id).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Ids of different milliseconds sort by time (within one millisecond the random part decides).
    const prefixes = ids.map((id) => id.slice(0, 10));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(times.size);
  });

  it('keeps 80 random bits after the time: two generators on one clock never agree', () => {
    const clock = steppingClock(0);
    const a = timeOrderedIds(clock);
    const b = timeOrderedIds(clock);
    const first = a();
    expect(first.slice(0, 10)).toBe('0000000000');
    const suffixes = new Set<string>();
    for (let index = 0; index < 2000; index++) {
      suffixes.add(a().slice(10));
      suffixes.add(b().slice(10));
    }
    expect(suffixes.size).toBe(4000);
  });

  it('encodes the milliseconds themselves, so the time part can be read back', () => {
    const at = Date.parse('2031-05-06T07:08:09.010Z');
    const id = timeOrderedIds(steppingClock(at))();
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    const decoded = [...id.slice(0, 10)].reduce((value, character) => value * 32 + alphabet.indexOf(character), 0);
    expect(decoded).toBe(at);
  });
});
