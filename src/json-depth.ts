/**
 * @module json-depth
 * A bound on the nesting of request JSON. `JSON.parse` is iterative, but `JSON.stringify` (JSON columns, logs) and
 * every hand-written walker recurse once per level: 5,000 nested objects overflow the stack and answer a 500. Each
 * face checks the depth once, without recursion, before anything walks the value.
 */
import { AppError } from './errors.js';

/**
 * Deepest nesting of objects and arrays accepted in a request. The deepest real input (an event's conferencing
 * phone numbers) is 4 levels; 64 leaves room for clients' own structures and is far below any stack limit.
 */
export const MAX_JSON_DEPTH = 64;

/** The 400 of a value nested deeper than {@link MAX_JSON_DEPTH}. */
export function tooDeep(field: string): AppError {
  return new AppError(
    'invalid_request',
    `${field}: JSON is nested more than ${MAX_JSON_DEPTH} levels deep; flatten the request.`,
    { field },
  );
}

/** True when `value` nests objects or arrays more than `limit` levels deep (an iterative walk: no recursion). */
export function exceedsJsonDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Throws a 400 naming `field` when `value` is nested deeper than {@link MAX_JSON_DEPTH}. */
export function assertJsonDepth(value: unknown, field = 'body'): void {
  if (exceedsJsonDepth(value)) throw tooDeep(field);
}
