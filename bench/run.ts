/**
 * `npm run bench`: runs every bench/*.bench.ts (or those named on the command line) and prints each
 * figure beside its reference, measured in the same run. Benchmarks never run in `npm test`.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** Benches folded into another, by their old name: `attachment-text` is now a part of `agent-reads`. */
const RENAMED: Record<string, string> = { 'attachment-text': 'agent-reads' };
const wanted = process.argv.slice(2).map((name) => RENAMED[name] ?? name);
const files = readdirSync(here)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.includes(name)))
  .sort();

for (const file of files) {
  const module = (await import(pathToFileURL(join(here, file)).href)) as {
    run: () => Promise<Record<string, number | string>>;
  };
  process.stdout.write(`\n## ${file}\n`);
  const started = performance.now();
  const figures = await module.run();
  for (const [name, value] of Object.entries(figures)) {
    process.stdout.write(
      `  ${name.padEnd(56)} ${typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: 2 }) : value}\n`,
    );
  }
  process.stdout.write(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}
