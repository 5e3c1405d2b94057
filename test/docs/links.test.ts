/**
 * Every relative link in README.md and docs/ resolves: the file exists, and an anchor names a heading of the page
 * it points into (GitHub's heading ids). Links to the web (http, https, mailto) are not followed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const pages = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

/** The page's text outside fenced code blocks, where links and headings count. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's id for a heading: its text lower-cased, punctuation dropped, spaces as hyphens; repeats get -1, -2… */
function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** The targets of inline links and images, code spans left out. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      targets.push(match[1]!);
  }
  return targets;
}

describe('relative links in README.md and docs/', () => {
  it('finds the pages', () => {
    expect(pages.length).toBeGreaterThan(10);
  });

  it.each(pages.map((page) => relative(root, page)))('%s: every relative link resolves', (page) => {
    const path = join(root, page);
    const broken: string[] = [];
    for (const target of linkTargets(readFileSync(path, 'utf8'))) {
      if (/^(https?:|mailto:)/i.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? path : resolve(dirname(path), decodeURIComponent(file));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (
        anchor !== undefined &&
        anchor !== '' &&
        resolved.endsWith('.md') &&
        !headingIds(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))
      ) {
        broken.push(`${target}: no heading with that id in ${relative(root, resolved)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
