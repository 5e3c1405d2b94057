/**
 * `npm run bench -- reading-bodies`: bodies as a model reads them (src/reading). For the corpus of
 * test/fixtures/agent/bodies, the characters before and after and the time per body; the reference, measured in the
 * same run on the same input, is htmlparser2's tokenizer alone (what reading an HTML body cannot go below). Then, for
 * each hostile shape, the time at n, 4n and 16n and the ratio 16n/n (linear work gives about 16; quadratic 256).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from 'htmlparser2';
import { collapseQuotes, htmlToMarkdown, removeInvisibleCharacters, renderBody } from '../src/reading/index.js';

const corpus = join(fileURLToPath(new URL('.', import.meta.url)), '../test/fixtures/agent/bodies');

/** The median time of `runs` calls, in ms, after two warm-up calls. */
function time(work: () => unknown, runs = 7): number {
  work();
  work();
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  return times.sort((left, right) => left - right)[Math.floor(runs / 2)]!;
}

function tokenizeOnly(html: string): void {
  const noop = () => undefined;
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onattribdata: noop,
      onattribentity: noop,
      onattribend: noop,
      onattribname: noop,
      oncdata: noop,
      onclosetag: noop,
      oncomment: noop,
      ondeclaration: noop,
      onend: noop,
      onopentagend: noop,
      onopentagname: noop,
      onprocessinginstruction: noop,
      onselfclosingtag: noop,
      ontext: noop,
      ontextentity: noop,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}

/** Hostile shapes, each a function of a size n. */
const SHAPES: Record<string, { n: number; make: (n: number) => string; run: (input: string) => unknown }> = {
  'html nested unclosed <div>': {
    n: 10_000,
    make: (n) => '<div>'.repeat(n) + 'x',
    run: (input) => htmlToMarkdown(input),
  },
  'html unmatched close tags': {
    n: 5_000,
    make: (n) => '<div><span>'.repeat(n) + '</i>'.repeat(n),
    run: (input) => htmlToMarkdown(input),
  },
  'html nested tables': {
    n: 5_000,
    make: (n) => '<table><tr><td>cell '.repeat(n),
    run: (input) => htmlToMarkdown(input),
  },
  'html nested blockquotes and lists': {
    n: 5_000,
    make: (n) => '<blockquote><ul><li>item '.repeat(n),
    run: (input) => htmlToMarkdown(input),
  },
  'html long style attribute': {
    n: 2_000,
    make: (n) => `<p style="${'color:#fff;'.repeat(n)}background: ${'a '.repeat(n)}">t</p>`.repeat(20),
    run: (input) => htmlToMarkdown(input),
  },
  'html style block of rules': {
    n: 5_000,
    make: (n) => `<style>${'.c{display:none} '.repeat(n)}</style>${'<p class="c d e">x</p>'.repeat(n)}`,
    run: (input) => htmlToMarkdown(input),
  },
  'html links with long urls': {
    n: 1_000,
    make: (n) =>
      `<a href="https://t.example/click?url=https%3A%2F%2Fexample.com%2F${'a'.repeat(200)}">go</a>`.repeat(n),
    run: (input) => htmlToMarkdown(input),
  },
  'text quotes and answers alternating': {
    n: 5_000,
    make: (n) => 'On Mon, Oct 1, 2026 at 9:00 AM Al <a@x.example> wrote:\n' + '> question?\nanswer\n'.repeat(n),
    run: (input) => collapseQuotes(input),
  },
  'text long lines of markers': {
    n: 2_000,
    make: (n) => `${'*'.repeat(n)}a\n${'> '.repeat(n)}\n${'-'.repeat(n)} Original Message\n`.repeat(20),
    run: (input) => collapseQuotes(input),
  },
  'text zero-width characters': {
    n: 50_000,
    make: (n) => 'a\u200bb\u202e'.repeat(n),
    run: (input) => removeInvisibleCharacters(input),
  },
};

export async function run(): Promise<Record<string, number | string>> {
  await Promise.resolve();
  const figures: Record<string, number | string> = {};
  for (const name of [
    'marketing-fall-sale.html',
    'reply-inline-gmail.html',
    'reply-inline-outlook.html',
    'hidden-instructions.html',
    'data-table.html',
  ]) {
    const html = readFileSync(join(corpus, name), 'utf8');
    const rendered = renderBody({ html }, { format: 'markdown' });
    figures[`${name}: chars before`] = rendered.charsBefore;
    figures[`${name}: chars after (markdown)`] = rendered.charsAfter;
    figures[`${name}: hidden chars removed`] = rendered.hiddenTextRemoved;
    figures[`${name}: ms renderBody`] = time(() => renderBody({ html }, { format: 'markdown' }));
    figures[`${name}: ms tokenizer alone (reference)`] = time(() => tokenizeOnly(html));
  }
  for (const [name, shape] of Object.entries(SHAPES)) {
    const measured = [1, 4, 16].map((factor) => {
      const input = shape.make(shape.n * factor);
      return { chars: input.length, ms: time(() => shape.run(input), 3) };
    });
    figures[`${name}: ms at ${measured.map((entry) => entry.chars).join(' / ')} chars`] = measured
      .map((entry) => entry.ms.toFixed(1))
      .join(' / ');
    figures[`${name}: ratio 16n/n`] = measured[2]!.ms / Math.max(measured[0]!.ms, 0.01);
  }
  return figures;
}
