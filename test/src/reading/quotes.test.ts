/**
 * Quoted history collapses to one line naming who wrote it and when; answers a person wrote between quoted lines
 * are kept, each after the quoted line it answers (Gmail's split blockquotes, Outlook's coloured answers in its
 * unmarked history, plain text `>` quoting); signatures and legal disclaimers collapse to one line each.
 */
import { describe, expect, it } from 'vitest';
import { collapseQuotes, renderBody } from '../../../src/reading/index.js';
import { body } from './corpus.js';

const gmailAnswers = [
  '[inline replies to Alice Smith, 2026-10-01]',
  '> 1. Can you make Thursday at 3pm instead of 2pm? The board call moved.',
  '',
  'Yes, 3pm works for me. I moved my 1:1 with Priya to Friday.',
  '',
  '> 2. Do you have the final Q3 budget numbers? Finance asked for the version with the September accruals.',
];

describe('a Gmail reply with answers between quoted lines', () => {
  it('from its HTML: keeps each answer after its question and collapses the rest', () => {
    const rendered = renderBody({ html: body('reply-inline-gmail.html') }, { format: 'markdown' });
    const lines = rendered.body.split('\n');
    expect(rendered.body.startsWith('Hi Alice,\n\nAnswers inline below.')).toBe(true);
    expect(rendered.body).toContain(
      gmailAnswers.join('\n').replace('[inline replies to Alice Smith, 2026-10-01]\n', ''),
    );
    expect(lines).toContain('[inline replies to Alice Smith, 2026-10-01]');
    expect(lines).toContain(
      'Attached. The final numbers are in the second tab ("Q3 final"); the accruals are in column F.',
    );
    expect(lines).toContain('> 3. Who else from your side should be on the invite?');
    expect(lines).toContain('Please add Chen Wei from finance; he owns the forecast model.');
    expect(lines.at(-1)).toBe('[quoted history from Alice Smith, 2026-10-01: 11 lines collapsed]');
    expect(rendered.inlineAnswers).toBe(3);
    expect(rendered.quotedCollapsed).toBe(13);
    expect(rendered.body).not.toContain('Confirming the quarterly review');
  });

  it('from its text: the same answers, a wrapped question joined into one line of context', () => {
    const rendered = renderBody({ text: body('reply-inline-gmail.txt') }, { format: 'text' });
    expect(rendered.body).toBe(
      [
        'Hi Alice,',
        '',
        'Answers inline below. Short version: Thursday works, budget attached.',
        '',
        'Ben',
        '',
        '[inline replies to Alice Smith, 2026-10-01]',
        '[quoted: 3 lines collapsed]',
        '> 1. Can you make Thursday at 3pm instead of 2pm? The board call moved.',
        '',
        'Yes, 3pm works for me. I moved my 1:1 with Priya to Friday.',
        '',
        '> 2. Do you have the final Q3 budget numbers? Finance asked for the version with the September accruals.',
        '',
        'Attached. The final numbers are in the second tab ("Q3 final"); the',
        'accruals are in column F.',
        '',
        '> 3. Who else from your side should be on the invite?',
        '',
        'Please add Chen Wei from finance; he owns the forecast model.',
        '',
        '[quoted history from Alice Smith, 2026-10-01: 12 lines collapsed]',
      ].join('\n'),
    );
    expect(rendered.inlineAnswers).toBe(3);
  });
});

describe('an Outlook reply with answers in red inside its unmarked quoted history', () => {
  const rendered = renderBody({ html: body('reply-inline-outlook.html') }, { format: 'markdown' });

  it('keeps each answer after the question it answers', () => {
    expect(rendered.body).toBe(
      [
        'Hi Alice,',
        '',
        'My answers are in red below. The contract is signed.',
        '',
        'Dana',
        '',
        '[inline replies to Alice Smith, 2026-10-01]',
        '[quoted: 2 lines collapsed]',
        '> Can you confirm the venue? Last I heard it was either the Harbor Room or the Loft.',
        '',
        'Confirmed: the Harbor Room, 4th floor. Capacity is 40.',
        '',
        '> Will the vendors need parking passes?',
        '',
        'Yes, three passes. I will send the license plates on Friday.',
        '',
        '> Is the catering order final, or can we still add vegetarian options?',
        '',
        'We can change it until October 9. I added twelve vegetarian meals.',
        '',
        '[quoted history from Alice Smith, 2026-10-01: 5 lines collapsed]',
      ].join('\n'),
    );
    expect(rendered.inlineAnswers).toBe(3);
  });

  it('keeps the whole history when asked (quoted: keep)', () => {
    const kept = renderBody({ html: body('reply-inline-outlook.html') }, { format: 'markdown', quoted: 'keep' });
    expect(kept.body).toContain('> A few open points for the offsite on October 14:');
    expect(kept.body).toContain('**From:** Alice Smith <alice@northwind.example>');
  });
});

describe('an Outlook plain-text reply: signature, disclaimer, Original Message', () => {
  const rendered = renderBody({ text: body('reply-outlook-plain.txt') }, { format: 'text' });

  it('collapses the contact block, the disclaimer and the history, keeping the sign-off and name', () => {
    expect(rendered.body).toBe(
      [
        'Hi Marco,',
        '',
        "Thanks, I'll take it from here and send the revised quote by Monday.",
        '',
        'Best regards,',
        'Priya Natarajan',
        '[signature: 4 lines collapsed]',
        '',
        '[legal disclaimer: 1 line collapsed]',
        '',
        '[quoted history from Marco Rossi, 2026-10-02: 15 lines collapsed]',
      ].join('\n'),
    );
    expect(rendered.signaturesCollapsed).toBe(4);
    expect(rendered.disclaimersCollapsed).toBe(1);
  });

  it('removes them without markers when asked (messages/clean)', () => {
    const removed = renderBody(
      { text: body('reply-outlook-plain.txt') },
      { format: 'text', quoted: 'remove', signatures: 'remove', disclaimers: 'remove' },
    );
    expect(removed.body).toBe(
      "Hi Marco,\n\nThanks, I'll take it from here and send the revised quote by Monday.\n\nBest regards,\nPriya Natarajan",
    );
  });
});

describe('collapseQuotes', () => {
  it('collapses a "--" signature and "Sent from my iPhone"', () => {
    expect(collapseQuotes('See you then.\n\n-- \nSam Lee\nAcme Corp\nsam@acme.example').text).toBe(
      'See you then.\n\n[signature: 4 lines collapsed]',
    );
    expect(collapseQuotes('On my way.\n\nSent from my iPhone').text).toBe('On my way.\n\nSent from my iPhone');
    expect(collapseQuotes('On my way.\n\nSent from my iPhone', { signatures: 'remove' }).text).toBe('On my way.');
  });

  it('keeps a forwarded message (its header as one line) and collapses its own history', () => {
    const text = [
      'FYI, see the customer complaint below.',
      '',
      '---------- Forwarded message ---------',
      'From: Lena Fischer <lena@kunde.example>',
      'Date: Mon, Sep 29, 2026 at 8:15 AM',
      'Subject: Order 4471 arrived damaged',
      'To: <support@shop.example>',
      '',
      'Hello, the order arrived with a broken hinge. Photos attached.',
      '',
      'Am 28.09.2026 um 17:02 schrieb Support <support@shop.example>:',
      '> Your order 4471 has shipped.',
    ].join('\n');
    const result = collapseQuotes(text);
    expect(result.text).toBe(
      [
        'FYI, see the customer complaint below.',
        '',
        '[forwarded message from Lena Fischer, 2026-09-29: "Order 4471 arrived damaged"]',
        '',
        'Hello, the order arrived with a broken hinge. Photos attached.',
        '',
        '[quoted history from Support, 2026-09-28: 1 line collapsed]',
      ].join('\n'),
    );
    expect(collapseQuotes(text, { forwarded: 'collapse' }).text).toBe(
      'FYI, see the customer complaint below.\n\n[quoted history from Lena Fischer, 2026-09-29: 8 lines collapsed]',
    );
  });

  it('reads attributions of other clients and languages', () => {
    const cases: Array<[string, string]> = [
      ['Le mer. 1 oct. 2026 à 09:12, Alice Smith <alice@x.example> a écrit :', 'Alice Smith, 2026-10-01'],
      ['On 10/1/26 9:12 AM, Alice Smith wrote:', 'Alice Smith, 2026-10-01'],
      ['On Oct 1, 2026, at 09:12, Alice Smith <alice@x.example> wrote:', 'Alice Smith, 2026-10-01'],
      ['El mié, 1 oct 2026 a las 9:12, Alice Smith (<alice@x.example>) escribió:', 'Alice Smith, 2026-10-01'],
    ];
    for (const [attribution, who] of cases) {
      const result = collapseQuotes(`Thanks!\n\n${attribution}\n> the question\n> more`);
      expect(result.text).toBe(`Thanks!\n\n[quoted history from ${who}: 2 lines collapsed]`);
    }
  });

  it('reads a Gmail attribution wrapped over two lines', () => {
    const text =
      'Done.\n\nOn Wed, Oct 1, 2026 at 9:12 AM Alice Smith <alice@northwind.example>\nwrote:\n\n> Can you?\n';
    expect(collapseQuotes(text).text).toBe('Done.\n\n[quoted history from Alice Smith, 2026-10-01: 1 line collapsed]');
  });

  it('leaves an HTML blockquote without attribution alone (a testimonial is not history)', () => {
    const html = '<p>What customers say:</p><blockquote>Best boots I ever owned.</blockquote><p>Shop now.</p>';
    const rendered = renderBody({ html }, { format: 'markdown' });
    expect(rendered.body).toBe('What customers say:\n\n> Best boots I ever owned.\n\nShop now.');
    expect(rendered.quotedCollapsed).toBe(0);
  });

  it('does not take a Q&A line or a long legal-sounding first paragraph for history or a disclaimer', () => {
    const text =
      'This contract is confidential and privileged; if you have received this in error, tell me, because the intended recipient is the board.\n\nFrom: the legal team\nA: yes';
    expect(collapseQuotes(text).text).toBe(text);
  });
});
