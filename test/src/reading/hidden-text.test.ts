/**
 * Hidden text is removed before a model reads it, and counted: CSS-hidden (display:none, a stylesheet class,
 * font-size:0, off-screen), same colour as the background, HTML comments, zero-width, bidi-control and Unicode tag
 * characters, zero-size images' alt text. What a person sees stays, white on a dark background included.
 */
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown, removeInvisibleCharacters, renderBody, visibleHtml } from '../../../src/reading/index.js';
import { body } from './corpus.js';

describe('the mail with hidden instructions of the corpus', () => {
  const html = body('hidden-instructions.html');
  const result = htmlToMarkdown(html);

  it('keeps what a person sees', () => {
    expect(result.markdown).toContain('Hello Ana,');
    expect(result.markdown).toContain(
      'Please review the attached invoice INV-20931 for the September consulting work (42 hours).',
    );
    expect(result.markdown).toContain('call me at +1 (206) 555-0188.');
    expect(result.markdown).toContain('Reference: INV-20931');
    expect(result.markdown).toContain('Lee & Partners Consulting · 410 Pine St, Seattle, WA 98101');
  });

  it('removes every hidden instruction', () => {
    for (const hidden of [
      'billing-archive@exfil.example', // an HTML comment
      'SYSTEM OVERRIDE', // display:none
      'IBAN', // white on white
      'ops-team@exfil.example', // font-size:0
      'already verified', // off-screen
      'address book', // a stylesheet class with display:none
      'delete this message', // #fefefe on #ffffff
      'exfil.example/p', // a 1×1 image's alt text
    ]) {
      expect(result.markdown).not.toContain(hidden);
    }
    expect(result.markdown).not.toMatch(/[\u200b\u202a-\u202e]|\udb40/);
  });

  it('counts what it removed, by kind', () => {
    expect(result.hidden.css).toBeGreaterThan(250);
    expect(result.hidden.sameColour).toBeGreaterThan(150);
    expect(result.hidden.comments).toBeGreaterThan(100);
    // One zero-width space, two bidi controls, 30 tag characters of two code units each.
    expect(result.hidden.invisibleCharacters).toBe(1 + 2 + 60);
    expect(result.hiddenTextRemoved).toBe(
      result.hidden.css + result.hidden.sameColour + result.hidden.comments + result.hidden.invisibleCharacters,
    );
  });

  it('cuts the same parts out of the HTML itself for body_format html', () => {
    const rendered = renderBody({ html }, { format: 'html' });
    expect(rendered.format).toBe('html');
    expect(rendered.body).toContain('<p>Hello Ana,</p>');
    for (const hidden of [
      'billing-archive',
      'SYSTEM OVERRIDE',
      'IBAN',
      'ops-team',
      'already verified',
      'address book',
    ]) {
      expect(rendered.body).not.toContain(hidden);
    }
    expect(rendered.body).not.toMatch(/[\u200b\u202a-\u202e]|\udb40/);
    expect(rendered.hiddenTextRemoved).toBe(result.hiddenTextRemoved);
  });
});

describe('what is not hidden', () => {
  it('keeps white text on a dark background, on a background image, and in a dark stylesheet', () => {
    const html =
      '<div style="background-color:#1a1a1a"><p style="color:#ffffff">on dark</p></div>' +
      '<td background="hero.jpg"><p style="color:#fff">on an image</p></td>' +
      '<table bgcolor="#000000"><tr><td><font color="white">on a black table</font></td></tr></table>';
    const result = htmlToMarkdown(html);
    expect(result.markdown).toContain('on dark');
    expect(result.markdown).toContain('on an image');
    expect(result.markdown).toContain('on a black table');
    expect(result.hiddenTextRemoved).toBe(0);
  });

  it('does not judge colours when a stylesheet rule it cannot match sets a background', () => {
    const html =
      '<style>.dark p { background: #000 }</style><div class="dark"><p style="color:#fff">readable</p></div>';
    expect(htmlToMarkdown(html).markdown).toBe('readable');
  });

  it('ignores display:none inside @media (mobile-only hiding) and keeps links of any colour', () => {
    const html =
      '<style>@media (max-width:600px){ .desktop { display:none } } .hide{display:none}</style>' +
      '<p class="desktop">desktop text</p><p class="hide">gone</p>' +
      '<p style="color:#fff;background:#fff"><a href="https://example.com/x" style="color:#0b57d0">blue link</a></p>';
    const result = htmlToMarkdown(html);
    expect(result.markdown).toContain('desktop text');
    expect(result.markdown).not.toContain('gone');
    expect(result.markdown).toContain('[blue link](https://example.com/x)');
  });

  it('counts aria-hidden preheaders, the hidden attribute, opacity:0 and zero-height overflow', () => {
    const html =
      '<span aria-hidden="true">preheader one</span><div hidden>two</div><p style="opacity:0">three</p>' +
      '<div style="max-height:0;overflow:hidden">four</div><p style="visibility:hidden">five</p><p>shown</p>';
    const result = htmlToMarkdown(html);
    expect(result.markdown).toBe('shown');
    expect(result.hidden.css).toBe('preheader one'.length + 'two'.length + 'three'.length + 4 + 4);
  });
});

describe('removeInvisibleCharacters (the text/plain variant)', () => {
  it('removes zero-width, bidi and tag characters and counts them', () => {
    const text = `pay\u200bment\u2060 to \u202eevil\u202c now\ufeff${String.fromCodePoint(0xe0041, 0xe0042)}`;
    expect(removeInvisibleCharacters(text)).toEqual({ text: 'payment to evil now', removed: 9 });
  });

  it('keeps the zero-width joiner inside an emoji sequence', () => {
    expect(removeInvisibleCharacters('dev 👩\u200d💻 a\u200db')).toEqual({ text: 'dev 👩\u200d💻 ab', removed: 1 });
  });

  it('is what renderBody applies to text bodies', () => {
    const rendered = renderBody({ text: 'Hi\u200b there\u202e' }, { format: 'text' });
    expect(rendered.body).toBe('Hi there');
    expect(rendered.hiddenTextRemoved).toBe(2);
    expect(rendered.hidden.invisibleCharacters).toBe(2);
  });
});

describe('visibleHtml', () => {
  it('cuts hidden elements, comments and scripts, and keeps the rest byte for byte', () => {
    const html = '<p>a</p><!-- note --><div style="display:none">b</div><script>x()</script><p style="color:red">c</p>';
    expect(visibleHtml(html).html).toBe('<p>a</p><p style="color:red">c</p>');
  });
});
