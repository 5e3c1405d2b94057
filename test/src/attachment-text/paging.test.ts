/**
 * Paging by tokens: pages stay within the budget (o200k_base), each cursor continues exactly where its page ended,
 * the pages put together are the whole text, and a cursor only works for the attachment and options it came from.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createAttachmentTextReader, type AttachmentTextReader } from '../../../src/attachment-text/index.js';
import { cutPage } from '../../../src/attachment-text/paging.js';
import { ENCODE_OPTIONS, loadTokenizer } from '../../../src/tokens/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/agent/attachments/${name}`, import.meta.url));

let reader: AttachmentTextReader;
beforeAll(async () => {
  reader = createAttachmentTextReader({ workers: 1 });
  await reader.warmUp();
}, 60_000);
afterAll(() => reader.close());

async function allPages(name: string, maxTokens: number, options: Record<string, unknown> = {}) {
  const bytes = fixture(name);
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await reader.extract(bytes, { filename: name, maxTokens, cursor, ...options });
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(500);
  } while (cursor);
  return pages;
}

describe('paging', () => {
  it('pages the CSV export within the budget; the pages put together are the whole text', async () => {
    const whole = await reader.extract(fixture('orders-export.csv'), {
      filename: 'orders-export.csv',
      maxTokens: 10_000_000,
    });
    expect(whole.truncated).toBeUndefined();
    const pages = await allPages('orders-export.csv', 5_000);
    expect(pages.length).toBeGreaterThan(30);
    expect(pages.map((page) => page.text).join('')).toBe(whole.text);
    for (const [index, page] of pages.entries()) {
      expect(page.page.tokens).toBeLessThanOrEqual(5_000);
      expect(countTokens(page.text, ENCODE_OPTIONS)).toBe(page.page.tokens);
      if (index > 0) expect(page.page.start).toBe(pages[index - 1]!.page.end);
      expect(page.metadata.tokens).toBe(whole.metadata.tokens);
      // Every page but the last ends with a whole table row.
      if (index < pages.length - 1) {
        expect(page.truncated).toBe(true);
        expect(page.text.endsWith('|\n')).toBe(true);
      } else expect(page.truncated).toBeUndefined();
    }
    // Most of each page's budget is used.
    expect(pages[0]!.page.tokens).toBeGreaterThan(4_500);
  });

  it('continues exactly at the cursor, whichever page is asked again', async () => {
    const bytes = fixture('contract.docx');
    const first = await reader.extract(bytes, { maxTokens: 60 });
    const second = await reader.extract(bytes, { maxTokens: 60, cursor: first.nextCursor });
    const secondAgain = await reader.extract(bytes, { maxTokens: 60, cursor: first.nextCursor });
    const whole = await reader.extract(bytes, { maxTokens: 100_000 });
    expect(second.text).toBe(secondAgain.text);
    expect(whole.text.startsWith(first.text + second.text)).toBe(true);
    expect(second.page.start).toBe(first.text.length);
  });

  it('pages a PDF and a presentation to their whole text, even with a budget of one token', async () => {
    for (const [name, budget] of [
      ['invoice.pdf', 37],
      ['roadmap.pptx', 1],
    ] as const) {
      const whole = await reader.extract(fixture(name), { filename: name, maxTokens: 100_000 });
      const pages = await allPages(name, budget);
      expect(pages.map((page) => page.text).join('')).toBe(whole.text);
      expect(pages.every((page) => page.text.length > 0)).toBe(true);
    }
  });

  it('refuses a cursor made for another attachment, other options, or that is not one', async () => {
    const first = await reader.extract(fixture('contract.docx'), { maxTokens: 50 });
    await expect(reader.extract(fixture('roadmap.pptx'), { cursor: first.nextCursor })).rejects.toMatchObject({
      reason: 'invalid_cursor',
      code: 'invalid_request',
    });
    await expect(
      reader.extract(fixture('contract.docx'), { cursor: first.nextCursor, maxCharacters: 100 }),
    ).rejects.toMatchObject({ reason: 'invalid_cursor' });
    await expect(reader.extract(fixture('contract.docx'), { cursor: 'not-a-cursor' })).rejects.toMatchObject({
      reason: 'invalid_cursor',
    });
    // A different page size is the same text: the cursor still continues it.
    const next = await reader.extract(fixture('contract.docx'), { maxTokens: 10, cursor: first.nextCursor });
    expect(next.page.start).toBe(first.page.end);
  });
});

describe('cutPage', () => {
  it('counts special-token strings as the text they are, and never splits a character', async () => {
    const tokenizer = await loadTokenizer();
    const text = 'Ignore this: <|endoftext|> and 😀😀😀 emoji 🇪🇺 flags\n'.repeat(50);
    let offset = 0;
    let joined = '';
    while (offset < text.length) {
      const page = cutPage(tokenizer, text.slice(offset), 7)!;
      expect(page.length).toBeGreaterThan(0);
      const piece = text.slice(offset, offset + page.length);
      expect(piece).not.toMatch(/[\uD800-\uDBFF]$/);
      joined += piece;
      offset += page.length;
    }
    expect(joined).toBe(text);
  });
});
