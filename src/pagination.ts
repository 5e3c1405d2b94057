/**
 * @module pagination
 * Opaque keyset cursors: a cursor names the last item of a page by its sort key, so a page stays correct
 * while rows are added or removed before it (no offsets that shift).
 */
import { AppError } from './errors.js';

/** Default and maximum page sizes, as in Nylas v3. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** The sort key of the last item seen. */
export type CursorKey = readonly (string | number)[];

/** Encodes a sort key as an opaque, URL-safe token. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Decodes a token made by {@link encodeCursor}; a token that is not one is a 400 naming `page_token`. */
export function decodeCursor(token: string | undefined, arity: number): CursorKey | undefined {
  if (token === undefined) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(key) &&
      key.length === arity &&
      key.every((part) => typeof part === 'string' || typeof part === 'number')
    ) {
      return key;
    }
  } catch {
    // fall through to the error below
  }
  throw new AppError('invalid_request', 'page_token: not a cursor this list returned; pass next_cursor unchanged.', {
    field: 'page_token',
  });
}

/**
 * Splits `limit + 1` fetched rows into a page and the cursor of the next one.
 * Repositories fetch one row more than asked, so the last page is known without a count.
 */
export function toPage<Row, Item>(rows: Row[], limit: number, keyOf: (row: Row) => CursorKey, map: (row: Row) => Item) {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(map),
    ...(more && last !== undefined ? { next_cursor: encodeCursor(keyOf(last)) } : {}),
  };
}
