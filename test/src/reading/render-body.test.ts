/**
 * renderBody: one call for every format. Markdown from the HTML body when there is one, text without markup,
 * the HTML itself with its hidden parts cut, the text body when there is no HTML; bounded, and saying so.
 */
import { describe, expect, it } from 'vitest';
import { renderBody } from '../../../src/reading/index.js';
import { body } from './corpus.js';

describe('renderBody', () => {
  const html = body('marketing-fall-sale.html');

  it('reads the marketing mail in a fraction of its characters, every link kept', () => {
    const markdown = renderBody({ html, text: 'View this email in your browser.' }, { format: 'markdown' });
    expect(markdown.source).toBe('html');
    expect(markdown.format).toBe('markdown');
    expect(markdown.charsBefore).toBe(html.length);
    expect(markdown.charsAfter).toBe(markdown.body.length);
    expect(markdown.charsAfter).toBeLessThan(markdown.charsBefore * 0.3);
    expect(markdown.links.length).toBeGreaterThan(100);
    expect(markdown.hiddenTextRemoved).toBeGreaterThan(0);
  });

  it('gives text as the Markdown without markup: links as text (url)', () => {
    const text = renderBody({ html }, { format: 'text' });
    expect(text.format).toBe('text');
    expect(text.body).toContain(
      'View it in your browser (https://www.trailhead-outfitters.com/email/fall-2026-sale?view=web)',
    );
    expect(text.body).not.toContain('](');
  });

  it('gives the HTML itself, its hidden parts cut, for format html', () => {
    const rendered = renderBody({ html }, { format: 'html' });
    expect(rendered.format).toBe('html');
    expect(rendered.body).toContain('<table role="presentation"');
    expect(rendered.body).not.toContain('Our biggest fall sale starts now');
    expect(rendered.body).not.toContain('<!--[if');
  });

  it('reads the text body when there is no HTML (or when asked to), and answers text for html', () => {
    const text = 'Meeting moved to 3pm.\n\n-- \nSam';
    expect(renderBody({ text }, { format: 'markdown' })).toMatchObject({ source: 'text', format: 'markdown' });
    expect(
      renderBody({ text, html: '<p>Meeting moved to 3pm.</p>' }, { format: 'text', preferText: true }).source,
    ).toBe('text');
    expect(renderBody({ text }, { format: 'html' })).toMatchObject({ source: 'text', format: 'text' });
  });

  it('answers an empty body for a message with neither', () => {
    expect(renderBody({ html: null, text: '  ' }, { format: 'markdown' })).toMatchObject({
      body: '',
      source: 'none',
      truncated: false,
    });
  });

  it('bounds the body and says so', () => {
    const rendered = renderBody({ html }, { format: 'markdown', maxChars: 2_000 });
    expect(rendered.body.length).toBeLessThanOrEqual(2_000);
    expect(rendered.truncated).toBe(true);
  });

  it('serves /v3 messages/clean: plain text without links, images, tables, quotes or signature', () => {
    const reply = body('reply-inline-gmail.html');
    const clean = renderBody(
      { html: reply },
      { format: 'text', links: 'drop', images: 'drop', tables: 'flatten', quoted: 'remove', signatures: 'remove' },
    );
    expect(clean.body).not.toContain('[quoted');
    expect(clean.body).not.toContain('http');
    expect(clean.body).toContain('Please add Chen Wei from finance; he owns the forecast model.');
  });
});
