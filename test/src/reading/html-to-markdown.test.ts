/**
 * HTML mail as a model reads it: every link kept (tracking redirects resolved where the URL carries the target,
 * opaque ones kept whole), layout flattened, data tables as Markdown tables, images as alt text, the marketing mail
 * of the corpus much shorter than its HTML; and hostile markup read in bounded time and output.
 */
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown, resolveLink } from '../../../src/reading/index.js';
import { body } from './corpus.js';

/** The http(s) and mailto hrefs of `<a>` tags in a document, decoded as a browser reads them. */
function hrefsOf(html: string): string[] {
  const hrefs: string[] = [];
  for (const match of html.matchAll(/<a\b[^>]*?\bhref="([^"]*)"/gi)) {
    const href = match[1]!.replace(/&amp;/g, '&');
    if (/^(https?|mailto):/i.test(href)) hrefs.push(href);
  }
  return hrefs;
}

describe('htmlToMarkdown on the marketing mail of the corpus', () => {
  const html = body('marketing-fall-sale.html');
  const result = htmlToMarkdown(html);

  it('is over 100 KB of HTML and reads in under a third of that', () => {
    expect(html.length).toBeGreaterThan(100_000);
    expect(result.markdown.length).toBeLessThan(html.length / 3);
    expect(result.truncated).toBe(false);
  });

  it('keeps every link, each as [text](url) or <url>, with its destination whole', () => {
    const hrefs = hrefsOf(html);
    expect(hrefs.length).toBeGreaterThan(100);
    expect(result.links).toHaveLength(hrefs.length);
    result.links.forEach((link, index) => {
      expect(link.original ?? link.url).toBe(hrefs[index]);
      if (link.url.startsWith('mailto:')) expect(result.markdown).toContain(link.text);
      else expect(result.markdown).toContain(`](${link.url})`);
    });
  });

  it('resolves redirects that carry their target and keeps opaque ones whole', () => {
    expect(result.linksResolved).toBeGreaterThan(60);
    expect(result.markdown).toContain(
      '[Shop the sale](https://www.trailhead-outfitters.com/sale/fall-2026?utm_source=newsletter&utm_medium=email&utm_campaign=fall-2026-sale&utm_content=hero-button)',
    );
    expect(result.markdown).toContain(
      '[Download on the App Store](https://apps.apple.com/us/app/trailhead-outfitters/id1234567890)',
    );
    expect(result.markdown).toContain(
      '[Get it on Google Play](https://play.google.com/store/apps/details?id=com.trailhead.outfitters)',
    );
    const opaque = hrefsOf(html).find((href) => href.includes('sendgrid.net'))!;
    expect(opaque.length).toBeGreaterThan(200);
    expect(result.markdown).toContain(`(${opaque})`);
    expect(result.markdown).not.toContain('links.trailhead-outfitters.com/r/');
  });

  it('flattens layout tables to their text, drops styles, the preheader, the pixel and Outlook conditionals', () => {
    expect(result.markdown).not.toMatch(/^\|/m);
    expect(result.markdown).not.toMatch(/[<>]\s*(table|td|div|style)/i);
    expect(result.markdown).not.toContain('ExternalClass');
    expect(result.markdown).not.toContain('Our biggest fall sale starts now');
    expect(result.hidden.css).toBeGreaterThan(100);
    // Outlook's conditional comments repeat the body for Outlook: removed, not counted as hidden text.
    expect(result.hidden.comments).toBe(0);
    expect(result.markdown).not.toContain('/o/?id=');
    expect(result.markdown).toContain('# The Fall Sale');
    expect(result.markdown).toContain('## Field notes: three fall hikes worth the drive');
    // White text on the hero's background image is kept: what is under it is not known.
    expect(result.markdown).toContain('Up to 40% off the gear that gets you out there.');
  });

  it('writes no trailing spaces and at most one blank line in a row', () => {
    expect(result.markdown).not.toMatch(/[ \t]$/m);
    expect(result.markdown).not.toMatch(/\n{3}/);
  });

  it('writes the same link twice in a row once (a product image, then its name)', () => {
    const line =
      '[Alpine Shell Jacket](https://www.trailhead-outfitters.com/products/alpine-shell-jacket?utm_source=newsletter&utm_medium=email&utm_campaign=fall-2026-sale&utm_content=product-2&variant=40015838)';
    expect(result.markdown.split(line)).toHaveLength(2);
  });

  it('in the text flavour, writes links as text (url) and no Markdown', () => {
    const text = htmlToMarkdown(html, { flavour: 'text' }).markdown;
    expect(text).toContain('Shop the sale (https://www.trailhead-outfitters.com/sale/fall-2026?');
    expect(text).not.toContain('](');
    expect(text).not.toContain('**');
    expect(text).not.toMatch(/^#/m);
  });

  it('drops links but keeps their text when asked (messages/clean ignore_links)', () => {
    const text = htmlToMarkdown(html, { links: 'drop' }).markdown;
    expect(text).not.toContain('](');
    expect(text).toContain('Shop the sale');
  });
});

describe('htmlToMarkdown on structure', () => {
  it('writes data tables as Markdown tables: header, escaped pipes, colspans', () => {
    const result = htmlToMarkdown(body('data-table.html'));
    expect(result.markdown).toContain(
      [
        '| Item | Qty | Unit price | Total |',
        '| --- | --- | --- | --- |',
        '| USB-C Dock, 12-in-1 | 1 | $189.00 | $189.00 |',
        '| 27" Monitor Arm \\| Gas Spring | 2 | $79.50 | $159.00 |',
        '| Cable Kit (6 ft, braided) | 3 | $12.00 | $36.00 |',
        '| Subtotal |  |  | $384.00 |',
      ].join('\n'),
    );
    expect(result.markdown).toContain('| Month | Seats | Spend |\n| --- | --- | --- |\n| July | 118 | $4,130 |');
    expect(result.markdown).toContain(
      '[UPS 1Z999AA10123456784](https://www.ups.com/track?tracknum=1Z999AA10123456784)',
    );
  });

  it('flattens tables when asked (messages/clean ignore_tables)', () => {
    const result = htmlToMarkdown(body('data-table.html'), { tables: 'flatten' });
    expect(result.markdown).not.toContain('| --- |');
    expect(result.markdown).toContain('USB-C Dock, 12-in-1');
  });

  it('reads one-column, nested and presentation tables as layout', () => {
    const oneColumn = htmlToMarkdown('<table><tr><td>A</td></tr><tr><td>B</td></tr></table>').markdown;
    expect(oneColumn).toBe('A\nB');
    const presentation = htmlToMarkdown(
      '<table role="presentation"><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>',
    ).markdown;
    expect(presentation).not.toContain('|');
    const nested = htmlToMarkdown(
      '<table><tr><th>A</th><th>B</th></tr><tr><td><table><tr><td>x</td></tr></table></td><td>2</td></tr></table>',
    ).markdown;
    expect(nested).not.toContain('|');
  });

  it('writes headings, nested lists, quotes, emphasis sparingly, entities decoded', () => {
    const result = htmlToMarkdown(
      '<h2>Agenda &amp; notes</h2><ol start="3"><li>First<ul><li>inner &lt;one&gt;</li></ul></li><li>Second</li></ol>' +
        '<p>A <b>short</b> word and <i>this</i>.</p><p><b>A whole bold paragraph is just a paragraph.</b></p>' +
        '<blockquote>Quoted<br>twice</blockquote><p>caf&eacute; &#x1F600; &nbsp;spaced&nbsp;&nbsp;out</p>',
    ).markdown;
    expect(result).toBe(
      [
        '## Agenda & notes',
        '',
        '3. First',
        '   - inner <one>',
        '4. Second',
        '',
        'A **short** word and *this*.',
        '',
        'A whole bold paragraph is just a paragraph.',
        '',
        '> Quoted',
        '> twice',
        '',
        'café 😀 spaced out',
      ].join('\n'),
    );
  });

  it('turns images into their alt text, and drops pixels and images without alt', () => {
    const result = htmlToMarkdown(
      '<p><img src="a.png" alt="Team photo"> <img src="b.png"> <img src="p.gif" width="1" height="1" alt="pixel"></p>',
    );
    expect(result.markdown).toBe('Team photo');
    expect(htmlToMarkdown('<img src="a.png" alt="Logo">', { images: 'drop' }).markdown).toBe('');
  });

  it('keeps mailto links readable and drops javascript: and anchors as links', () => {
    const result = htmlToMarkdown(
      '<a href="mailto:help@example.com">help@example.com</a> <a href="mailto:help@example.com">Write to us</a> ' +
        '<a href="javascript:alert(1)">click</a> <a href="#top">top</a> <a href="https://example.com/">https://example.com/</a>',
    );
    expect(result.markdown).toBe(
      'help@example.com [Write to us](mailto:help@example.com) click top <https://example.com/>',
    );
  });
});

describe('resolveLink', () => {
  it('unwraps known redirectors and click-tracking paths, not share links', () => {
    expect(resolveLink('https://www.google.com/url?q=https://example.com/a&sa=D').url).toBe('https://example.com/a');
    expect(
      resolveLink('https://eur02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2Fb&data=05').url,
    ).toBe('https://example.com/b');
    expect(
      resolveLink('https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_c-3Fx-3D1&d=DwMF&c=x').url,
    ).toBe('https://example.com/c?x=1');
    expect(resolveLink('https://l.facebook.com/l.php?u=https%3A%2F%2Fexample.com%2Fd&h=AT0').url).toBe(
      'https://example.com/d',
    );
    expect(resolveLink('https://mail.example-esp.com/track/click?u=abc123&url=https%3A%2F%2Fexample.com%2Fe').url).toBe(
      'https://example.com/e',
    );
    const share = 'https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Fexample.com%2Ff';
    expect(resolveLink(share)).toEqual({ url: share, resolved: false });
    const mailchimp = 'https://example.us1.list-manage.com/track/click?u=9f8e7d6c5b&id=1a2b3c&e=0f9e8d';
    expect(resolveLink(mailchimp)).toEqual({ url: mailchimp, resolved: false });
  });

  it("resolves this installation's own click links through the lookup it is given", () => {
    const options = {
      ownTracking: {
        clickPrefix: 'https://mail.example.org/t/l/',
        resolve: (token: string) => (token === 'tok123' ? 'https://example.com/pricing' : undefined),
      },
    };
    expect(resolveLink('https://mail.example.org/t/l/tok123', options)).toEqual({
      url: 'https://example.com/pricing',
      resolved: true,
    });
    expect(resolveLink('https://mail.example.org/t/l/unknown', options).resolved).toBe(false);
    const html = '<a href="https://mail.example.org/t/l/tok123">Pricing</a>';
    expect(htmlToMarkdown(html, options).markdown).toBe('[Pricing](https://example.com/pricing)');
  });
});

describe('htmlToMarkdown on hostile markup', () => {
  it('reads 60,000 unclosed nested tags and unmatched close tags, and keeps the text after them', () => {
    // htmlparser2's own Parser is quadratic here (Array.unshift and indexOf on its stack of open elements).
    const html = `${'<div><span><b>'.repeat(60_000)}deep text${'</i>'.repeat(60_000)}`;
    const result = htmlToMarkdown(html);
    expect(result.markdown).toContain('deep text');
  });

  it('still hides what is hidden below the tree depth bound', () => {
    const html = `${'<div>'.repeat(500)}<span style="display:none">secret</span>seen`;
    const result = htmlToMarkdown(html);
    expect(result.markdown).toBe('seen');
    expect(result.hidden.css).toBe(6);
  });

  it('bounds the output and says so', () => {
    const result = htmlToMarkdown(`<p>${'word '.repeat(100_000)}</p>`, { maxChars: 10_000 });
    expect(result.markdown.length).toBeLessThanOrEqual(10_000);
    expect(result.truncated).toBe(true);
  });

  it('bounds the input and says so', () => {
    const result = htmlToMarkdown(`<p>${'x'.repeat(2_000)}</p>`, { maxInputChars: 1_000 });
    expect(result.truncated).toBe(true);
    expect(result.markdown.length).toBeLessThan(1_000);
  });
});
