/**
 * The tracking rewrite of HTML bodies: which hrefs become redirects (and in which order), what the recorded
 * originals are, where the pixel goes, and that every other byte stays as written.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeAttribute,
  pixelTag,
  rewriteForTracking,
  trackableUrl,
} from '../../../src/deliverability/tracking-rewrite.js';

const linkUrl = (index: number) => `https://t.example/t/l/T${index}`;
const PIXEL = 'https://t.example/t/o/P';

describe('rewriteForTracking: links', () => {
  const cases: { name: string; html: string; rewritten: string; links: string[] }[] = [
    {
      name: 'double quotes',
      html: '<a href="https://a.example/x">x</a>',
      rewritten: `<a href="${linkUrl(0)}">x</a>`,
      links: ['https://a.example/x'],
    },
    {
      name: 'single quotes',
      html: "<a href='http://a.example/'>x</a>",
      rewritten: `<a href='${linkUrl(0)}'>x</a>`,
      links: ['http://a.example/'],
    },
    {
      name: 'unquoted',
      html: '<a href=https://a.example/p?q=1>x</a>',
      rewritten: `<a href=${linkUrl(0)}>x</a>`,
      links: ['https://a.example/p?q=1'],
    },
    {
      name: 'uppercase tag and attribute',
      html: '<A HREF="HTTPS://A.example/Path">x</A>',
      rewritten: `<A HREF="${linkUrl(0)}">x</A>`,
      links: ['HTTPS://A.example/Path'],
    },
    {
      name: 'spaces around =',
      html: '<a class="c" href = "https://a.example/" target=_blank>x</a>',
      rewritten: `<a class="c" href = "${linkUrl(0)}" target=_blank>x</a>`,
      links: ['https://a.example/'],
    },
    {
      name: '&amp; in the query is decoded in the record, the tag keeps its other attributes',
      html: '<a title="a > b" href="https://a.example/?a=1&amp;b=2&#38;c=3">x</a>',
      rewritten: `<a title="a > b" href="${linkUrl(0)}">x</a>`,
      links: ['https://a.example/?a=1&b=2&c=3'],
    },
    {
      name: 'whitespace around the URL is dropped',
      html: '<a href="  https://a.example/ \n">x</a>',
      rewritten: `<a href="${linkUrl(0)}">x</a>`,
      links: ['https://a.example/'],
    },
    {
      name: 'mailto, tel, anchors and relative links are left alone',
      html: '<a href="mailto:a@b.example">m</a><a href="tel:+1">t</a><a href="#top">#</a><a href="/path">r</a><a href="javascript:alert(1)">j</a>',
      rewritten: '',
      links: [],
    },
    {
      name: 'a URL that does not parse is left alone',
      html: '<a href="http://">x</a><a href="https://exa mple.com/">y</a>',
      rewritten: '',
      links: [],
    },
    {
      name: 'inside a comment: left alone',
      html: '<!-- <a href="https://hidden.example/">x</a> --><a href="https://shown.example/">y</a>',
      rewritten: `<!-- <a href="https://hidden.example/">x</a> --><a href="${linkUrl(0)}">y</a>`,
      links: ['https://shown.example/'],
    },
    {
      name: 'an Outlook conditional comment: left alone',
      html: '<!--[if mso]><a href="https://mso.example/">o</a><![endif]-->',
      rewritten: '',
      links: [],
    },
    {
      name: 'inside style and script: left alone',
      html: '<style>a[href="https://s.example/"]{}</style><script>var s = \'<a href="https://j.example/">\';</script>',
      rewritten: '',
      links: [],
    },
    {
      name: 'link and base tags are not clicks',
      html: '<link rel="stylesheet" href="https://css.example/a.css"><base href="https://base.example/">',
      rewritten: '',
      links: [],
    },
    {
      name: 'area tags are',
      html: '<map><area shape="rect" href="https://area.example/"></map>',
      rewritten: `<map><area shape="rect" href="${linkUrl(0)}"></map>`,
      links: ['https://area.example/'],
    },
    {
      name: 'the first of two hrefs counts',
      html: '<a href="https://one.example/" href="https://two.example/">x</a>',
      rewritten: `<a href="${linkUrl(0)}" href="https://two.example/">x</a>`,
      links: ['https://one.example/'],
    },
    {
      name: 'an attribute merely ending in href is not href',
      html: '<a data-href="https://d.example/">x</a>',
      rewritten: '',
      links: [],
    },
    {
      name: 'text that looks like a tag is text',
      html: 'a < b and <3 <a href="https://a.example/">x</a>',
      rewritten: `a < b and <3 <a href="${linkUrl(0)}">x</a>`,
      links: ['https://a.example/'],
    },
    {
      name: 'an unclosed quote ends the body without rewriting',
      html: '<a href="https://a.example/',
      rewritten: `<a href="${linkUrl(0)}`,
      links: ['https://a.example/'],
    },
  ];
  for (const { name, html, rewritten, links } of cases) {
    it(name, () => {
      const result = rewriteForTracking(html, { linkUrl });
      expect(result.html).toBe(rewritten === '' ? html : rewritten);
      expect(result.links).toEqual(links);
    });
  }

  it('numbers the links in body order, the same URL twice twice', () => {
    const html =
      '<p><a href="https://one.example/">1</a> <a href="mailto:x@y.example">m</a> <a href="https://two.example/">2</a> <a href="https://one.example/">1 again</a></p>';
    const result = rewriteForTracking(html, { linkUrl });
    expect(result.links).toEqual(['https://one.example/', 'https://two.example/', 'https://one.example/']);
    expect(result.html).toBe(
      `<p><a href="${linkUrl(0)}">1</a> <a href="mailto:x@y.example">m</a> <a href="${linkUrl(1)}">2</a> <a href="${linkUrl(2)}">1 again</a></p>`,
    );
  });

  it('without linkUrl, links stay as they are', () => {
    const html = '<a href="https://a.example/">x</a>';
    expect(rewriteForTracking(html, {})).toEqual({ html, links: [] });
  });
});

describe('rewriteForTracking: the pixel', () => {
  it('goes before </body>, whatever its case', () => {
    const html = '<html><body><p>Hi</p></BODY >\n</html>\n';
    expect(rewriteForTracking(html, { pixelUrl: PIXEL }).html).toBe(
      `<html><body><p>Hi</p>${pixelTag(PIXEL)}</BODY >\n</html>\n`,
    );
  });
  it('before </html> without a body tag, at the end of a fragment', () => {
    expect(rewriteForTracking('<html><p>Hi</p></html>', { pixelUrl: PIXEL }).html).toBe(
      `<html><p>Hi</p>${pixelTag(PIXEL)}</html>`,
    );
    expect(rewriteForTracking('<p>Hi</p>', { pixelUrl: PIXEL }).html).toBe(`<p>Hi</p>${pixelTag(PIXEL)}`);
  });
  it('a </body> inside a comment is not the end of the body', () => {
    expect(rewriteForTracking('<p>Hi</p><!-- </body> -->', { pixelUrl: PIXEL }).html).toBe(
      `<p>Hi</p><!-- </body> -->${pixelTag(PIXEL)}`,
    );
  });
  it('at the end when a rewritten link follows </body>', () => {
    const html = '<body>x</body><a href="https://late.example/">late</a>';
    const result = rewriteForTracking(html, { pixelUrl: PIXEL, linkUrl });
    expect(result.html).toBe(`<body>x</body><a href="${linkUrl(0)}">late</a>${pixelTag(PIXEL)}`);
  });
  it('with links: removing the pixel and putting the originals back gives the body as written', () => {
    const html =
      '<!doctype html><html><head><style>p{color:red}</style></head><body>\r\n<p>A <a href="https://a.example/?x=1&amp;y=2">link</a> and <a href=\'https://b.example\'>another</a>.</p>\r\n</body></html>';
    const result = rewriteForTracking(html, { pixelUrl: PIXEL, linkUrl });
    let restored = result.html.replace(pixelTag(PIXEL), '');
    restored = restored.replace(linkUrl(0), 'https://a.example/?x=1&amp;y=2').replace(linkUrl(1), 'https://b.example');
    expect(restored).toBe(html);
    expect(result.links).toEqual(['https://a.example/?x=1&y=2', 'https://b.example']);
  });
});

describe('attribute decoding and trackable URLs', () => {
  it('decodes named and numeric references, leaves unknown ones', () => {
    expect(decodeAttribute('a&amp;b&#x26;c&#38;d&AMP;e&bogus;f')).toBe('a&b&c&d&e&bogus;f');
    expect(decodeAttribute('&#0;&#xD800;')).toBe('\ufffd\ufffd');
  });
  it('accepts http(s) URLs with a host only', () => {
    expect(trackableUrl('https://a.example')).toBe('https://a.example');
    expect(trackableUrl('ftp://a.example')).toBeUndefined();
    expect(trackableUrl('https:a.example')).toBeUndefined();
    expect(trackableUrl('//a.example/')).toBeUndefined();
  });
});
