/**
 * @module ports/clock
 * Time, identifiers and randomness, injected so tests control them (src/system/ has the real ones).
 */

/** Source of the current time. Tests pass a fixed or steppable clock. */
export interface Clock {
  now(): Date;
}

/** Makes a new unique identifier. */
export type IdGenerator = () => string;

/** Random bytes (API keys, secrets, nonces); injectable so tests can be deterministic. */
export type RandomBytes = (size: number) => Buffer;
