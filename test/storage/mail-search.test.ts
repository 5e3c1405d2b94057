import { describe, expect, it } from 'vitest';
import { toFtsQuery } from '../../storage/index.js';

describe('toFtsQuery', () => {
  it.each([
    ['moth', '"moth"'],
    ['engine ada', '"engine" "ada"'],
    ['"notes on the engine"', '"notes on the engine"'],
    ['comp*', '"comp"*'],
    ['subject:notes', 'subject : "notes"'],
    ['from:alan@bletchley.example', 'addresses : "alan@bletchley.example"'],
    ['moth OR bombe', '"moth" OR "bombe"'],
    // A leading OR is a word; a trailing one is dropped.
    ['OR moth OR', '"OR" "moth"'],
  ])('%s → %s', (query, expected) => {
    expect(toFtsQuery(query)).toBe(expected);
  });

  it('quotes operators and punctuation, so no FTS5 syntax survives', () => {
    const result = toFtsQuery('NEAR( "unbalanced * ^ - AND x')!;
    for (const term of result.split(' ')) expect(term).toMatch(/^"([^"]|"")*"\*?$/);
  });

  it('returns undefined when nothing is searchable', () => {
    expect(toFtsQuery('')).toBeUndefined();
    expect(toFtsQuery('   ')).toBeUndefined();
    expect(toFtsQuery('*** --- ""')).toBeUndefined();
  });

  it('doubles quotes inside terms', () => {
    expect(toFtsQuery('say"hi')).toBe('"say""hi"');
  });
});
