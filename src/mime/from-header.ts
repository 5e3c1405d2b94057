/**
 * @module mime/from-header
 * The address of a From header as sent, for the checks that must see what the sender wrote.
 */

/**
 * The first address of a From header as sent (`Name <a@b>`, `a@b`, with comments and quoted names); empty when there
 * is none. Quoted strings and comments are removed first, so a display name cannot pose as the address.
 */
export function fromHeaderAddress(value: string): string {
  const plain = value.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\((?:[^()\\]|\\.)*\)/g, ' ');
  const first = plain.split(',')[0] ?? '';
  const angle = /<([^<>]*)>/.exec(first);
  const address = (angle ? angle[1]! : first).trim();
  return address.includes('@') ? address.replace(/\s+/g, '').toLowerCase() : '';
}
