/** The bodies of test/fixtures/agent/bodies, read once for the reading tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = join(import.meta.dirname, '../../fixtures/agent/bodies');

export function body(name: string): string {
  return readFileSync(join(folder, name), 'utf8');
}
