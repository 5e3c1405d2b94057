/**
 * Tool results fence text from outside as data, between markers random per result (⟦x⟧…⟦/x⟧, tools/fence.ts): a
 * model reads through them. A program comparing that text takes the markers out first.
 */
export function unfence<T>(value: T): T {
  if (typeof value === 'string') return value.replace(/⟦\/?[0-9a-f]{8}⟧/g, '') as T;
  if (Array.isArray(value)) return value.map(unfence) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, unfence(field)])) as T;
  return value;
}
