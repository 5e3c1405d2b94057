import { describe, expect, it } from 'vitest';
import { snippetOf, textToHtml, visibleText } from '../../../src/mime/normalize.js';

/** The snippet as defined: the whole text collapsed and trimmed, then cut (what snippetOf must equal). */
const wholeTextSnippet = (text: string, length = 100) => text.replace(/\s+/g, ' ').trim().slice(0, length);

describe('normalize: snippet, search text and text bodies', () => {
  it('cuts the same snippet from a prefix as from the whole text', () => {
    const texts = [
      '',
      '   ',
      'short text',
      '  \n\t leading whitespace, then words',
      'a'.repeat(99) + ' '.repeat(5_000) + 'b',
      'a'.repeat(99) + ' '.repeat(5_000),
      'a'.repeat(100) + '\n'.repeat(3_000) + 'b',
      ' \u00a0\u2028\ufeff'.repeat(2_000) + 'words after a long run of unicode space',
      'x '.repeat(300),
      `${'0'}${'X'.repeat(77)}\n`.repeat(127),
      'é🙂 '.repeat(60),
      'w'.repeat(400) + ' tail',
    ];
    for (const text of texts) {
      for (const length of [1, 100, 150])
        expect(snippetOf(text, length), JSON.stringify(text.slice(0, 40))).toBe(wholeTextSnippet(text, length));
    }
  });

  it('keeps the whitespace of the search text (the tokenizer splits at it) and bounds it', () => {
    expect(visibleText('one\n\ttwo  three', '')).toBe('one\n\ttwo  three');
    expect(visibleText('', '<p>one</p><p>two</p>')).toBe('one\ntwo');
    expect(visibleText('x'.repeat(300 * 1024), '').length).toBe(256 * 1024);
  });

  it('up-converts plain text to HTML with a <br> at every line break, CRLF or LF', () => {
    expect(textToHtml('a & b\nc <d>')).toBe('<div>a &amp; b<br>\nc &lt;d&gt;</div>');
    expect(textToHtml('one\r\ntwo\nthree\rfour\r\r\n')).toBe('<div>one<br>\ntwo<br>\nthree\rfour\r<br>\n</div>');
    expect(textToHtml('')).toBe('<div></div>');
  });
});
