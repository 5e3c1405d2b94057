/**
 * @module system/ids
 * The real identifier generators: random ids, and time-ordered ones for rows.
 */
import { randomBytes } from 'node:crypto';
import type { Clock, IdGenerator } from '../ports/clock.js';

/** Crockford's base32 alphabet: 32 symbols, so 5 random bits map to one without bias. */
const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random 26-character lowercase ids (130 bits), safe in paths, URLs and file names. */
export const randomId: IdGenerator = () => {
  const bytes = randomBytes(26);
  let id = '';
  for (const byte of bytes) id += ID_ALPHABET[byte & 31];
  return id;
};

/** Random bytes drawn ahead, so an id costs no call into the system's generator. */
const RANDOM_POOL_BYTES = 4096;

/**
 * Time-ordered 26-character ids, ULID-style in {@link randomId}'s alphabet: 10 characters of milliseconds (from
 * `clock`), then 16 random characters (80 bits). They stay opaque and unguessable, but ids made one after the
 * other sort together, so every index keyed by an id takes new rows on its last page instead of on a random one:
 * a message stored dirties a handful of pages rather than one per index.
 */
export function timeOrderedIds(clock: Clock): IdGenerator {
  let pool = randomBytes(RANDOM_POOL_BYTES);
  let offset = 0;
  return () => {
    if (offset + 16 > pool.length) {
      pool = randomBytes(RANDOM_POOL_BYTES);
      offset = 0;
    }
    let time = Math.max(0, Math.floor(clock.now().getTime()));
    let id = '';
    for (let index = 0; index < 10; index++) {
      id = ID_ALPHABET[time % 32]! + id;
      time = Math.floor(time / 32);
    }
    for (let index = 0; index < 16; index++) id += ID_ALPHABET[pool[offset++]! & 31];
    return id;
  };
}
