/**
 * docs/keys.md names, for every permission, the operations it allows: the table between its markers is written from
 * OPERATION_NEEDS (src/operations/permissions.ts), the one place each operation's permission is chosen. It fails when
 * the page is stale (`UPDATE_DOCS=1 npx vitest run test/docs/keys-doc.test.ts` rewrites the table).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATION_NEEDS, PERMISSIONS } from '../../src/index.js';

const PAGE = join(import.meta.dirname, '..', '..', 'docs', 'keys.md');
const BEGIN = '<!-- permissions: written from src/operations/permissions.ts by test/docs/keys-doc.test.ts -->\n';
const END = '<!-- permissions end -->\n';

/** The table: each permission with the operations any one of whose permissions it is; then those every key may call. */
function permissionTable(): string {
  const rows = PERMISSIONS.map((permission) => {
    const names = Object.entries(OPERATION_NEEDS)
      .filter(([, needs]) => needs === permission || (Array.isArray(needs) && needs.includes(permission)))
      .map(([name]) => `\`${name}\``)
      .sort();
    return `| \`${permission}\` | ${names.length > 0 ? names.join(', ') : '(the oversight issue: approvals)'} |`;
  });
  const anyKey = Object.entries(OPERATION_NEEDS)
    .filter(([, needs]) => needs === 'any')
    .map(([name]) => `\`${name}\``)
    .sort();
  return `| Permission | Operations it allows |\n|---|---|\n${rows.join('\n')}\n| (any key) | ${anyKey.join(', ')} |\n`;
}

describe('docs/keys.md', () => {
  it('lists the operations of every permission as src/operations/permissions.ts decides them', () => {
    const page = readFileSync(PAGE, 'utf8');
    const begin = page.indexOf(BEGIN);
    const end = page.indexOf(END);
    expect(begin, 'docs/keys.md has no permission table markers').toBeGreaterThanOrEqual(0);
    const fresh = `${page.slice(0, begin + BEGIN.length)}${permissionTable()}${page.slice(end)}`;
    if (process.env.UPDATE_DOCS === '1') writeFileSync(PAGE, fresh);
    expect(page, 'docs/keys.md is stale: UPDATE_DOCS=1 npx vitest run test/docs/keys-doc.test.ts').toBe(fresh);
  });
});
