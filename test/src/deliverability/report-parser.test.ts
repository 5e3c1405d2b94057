/** The report parsers on fixtures written in the styles of the big providers and MTAs (test/fixtures/dsn). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyBounce, codesIn } from '../../../src/deliverability/bounce-classification.js';
import { parseReport, type ParsedBounce } from '../../../src/deliverability/report-parser.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../../fixtures/dsn', name));

/** The one failed entry of a fixture's bounce, classified. */
function failed(name: string) {
  const report = parseReport(fixture(name));
  expect(report.kind).toBe('bounce');
  const entries = (report as ParsedBounce).entries.filter((entry) => entry.action === 'failed');
  expect(entries.length).toBeGreaterThan(0);
  const entry = entries[0]!;
  return { report: report as ParsedBounce, entry, type: classifyBounce(entry) };
}

describe('delivery status notifications', () => {
  it.each([
    // fixture, format, recipient, status, smtp code, type, words of the diagnostic
    ['postfix-unknown-user.eml', 'rfc3464', 'user@example.com', '5.1.1', undefined, 'hard', 'unknown user'],
    ['sendmail-user-unknown.eml', 'rfc3464', 'user@example.org', '5.1.1', 550, 'hard', 'User unknown'],
    ['gmail-address-not-found.eml', 'rfc3464', 'user@gmail.com', '5.1.1', 550, 'hard', 'does not exist'],
    ['gmail-mailbox-full.eml', 'rfc3464', 'full@gmail.com', '5.2.2', 552, 'soft', 'out of storage'],
    ['outlook-ndr.eml', 'rfc3464', 'user@contoso.com', '5.1.10', 550, 'hard', 'RecipientNotFound'],
    ['outlook-spam-block.eml', 'rfc3464', 'user@hotmail.com', '5.7.1', 550, 'soft', 'block list'],
    ['exim-classic.eml', 'text', 'user@example.net', '5.1.1', 550, 'hard', 'User unknown'],
    ['qmail.eml', 'text', 'user@example.com', '5.1.1', 550, 'hard', 'User unknown'],
    ['yahoo-text.eml', 'text', 'gone@yahoo.com', undefined, 554, 'hard', "doesn't have a yahoo.com account"],
  ] as const)('%s: %s, %s, %s', (name, format, recipient, status, smtpCode, type, words) => {
    const { report, entry, type: classified } = failed(name);
    expect(report.format).toBe(format);
    expect(entry.recipient).toBe(recipient);
    expect(entry.status).toBe(status);
    expect(entry.smtpCode).toBe(smtpCode);
    expect(classified).toBe(type);
    expect(entry.diagnostic).toContain(words);
  });

  it('a text bounce names the failed recipient, not the other addresses of the returned copy', () => {
    const { report } = failed('exim-classic.eml');
    expect(report.entries.map((entry) => entry.recipient)).toEqual(['user@example.net']);
  });

  it('a delay warning is not a bounce: RFC 3464 Action: delayed, and the text warnings of Exim', () => {
    for (const name of ['postfix-delayed.eml', 'exim-delayed.eml']) {
      const report = parseReport(fixture(name));
      expect(report.kind, name).toBe('bounce');
      expect(
        (report as ParsedBounce).entries.every((entry) => entry.action === 'delayed'),
        name,
      ).toBe(true);
    }
  });

  it('a malformed message/delivery-status part falls back to the text of the report', () => {
    const { report, entry, type } = failed('malformed-status-with-text.eml');
    expect(report.format).toBe('text');
    expect(entry).toMatchObject({ recipient: 'user@example.com', status: '5.1.1', smtpCode: 550 });
    expect(type).toBe('hard');
  });

  it('a malformed status part with no telling text, and an auto-reply, are no report at all', () => {
    expect(parseReport(fixture('malformed-status-no-text.eml'))).toEqual({ kind: 'none' });
    expect(parseReport(fixture('auto-reply.eml'))).toEqual({ kind: 'none' });
  });

  it('hostile input never throws: empty, binary, truncated, deeply nested, huge', () => {
    const nested = `Content-Type: multipart/report; boundary="b0"\r\n\r\n${Array.from({ length: 200 }, (_, index) => `--b${index}\r\nContent-Type: multipart/mixed; boundary="b${index + 1}"\r\n\r\n`).join('')}`;
    const inputs = [
      Buffer.alloc(0),
      Buffer.from([0, 255, 13, 10, 13, 10, 0, 1, 2]),
      fixture('postfix-unknown-user.eml').subarray(0, 700),
      Buffer.from(nested),
      Buffer.concat([fixture('qmail.eml'), Buffer.alloc(3 * 1024 * 1024, 'a')]),
      Buffer.from('Content-Type: multipart/report; report-type=delivery-status; boundary=""\r\n\r\n--\r\n'),
    ];
    for (const input of inputs) expect(() => parseReport(input)).not.toThrow();
    expect(parseReport(inputs[0]!)).toEqual({ kind: 'none' });
  });
});

describe('complaints (ARF)', () => {
  it('reads the feedback type, the original envelope and the reported Message-ID', () => {
    const report = parseReport(fixture('arf-abuse.eml'));
    expect(report).toMatchObject({
      kind: 'complaint',
      feedbackType: 'abuse',
      originalMailFrom: 'bounce+abc@agentpost.example',
      originalRcptTo: ['user@example-isp.com'],
      userAgent: 'ExampleISP-FBL/1.0',
      originalMessageId: 'm7@agentpost.example',
    });
  });

  it('a feedback report without Feedback-Type is not a complaint', () => {
    const raw = fixture('arf-abuse.eml').toString().replace('Feedback-Type: abuse\n', '');
    expect(parseReport(Buffer.from(raw)).kind).not.toBe('complaint');
  });
});

describe('classification table', () => {
  it.each([
    [{ status: '5.1.1' }, 'hard'],
    [{ status: '5.1.2' }, 'hard'],
    [{ status: '5.1.10' }, 'hard'],
    [{ status: '5.2.1' }, 'hard'],
    [{ status: '5.4.4' }, 'hard'],
    [{ status: '4.2.2', diagnostic: 'user unknown' }, 'soft'],
    [{ status: '4.4.1' }, 'soft'],
    [{ smtpCode: 421 }, 'soft'],
    [{ status: '5.2.2' }, 'soft'],
    [{ status: '5.1.1', diagnostic: 'Mailbox full' }, 'soft'],
    [{ status: '5.3.4' }, 'soft'],
    [{ status: '5.7.1', diagnostic: 'Message rejected as spam' }, 'soft'],
    [{ status: '5.7.1', diagnostic: 'User unknown' }, 'hard'],
    [{ smtpCode: 550, diagnostic: 'No such user here' }, 'hard'],
    [{ smtpCode: 550, diagnostic: 'Host or domain name not found' }, 'hard'],
    [{ smtpCode: 550, diagnostic: 'Rejected' }, 'soft'],
    [{}, 'soft'],
  ] as const)('%j → %s', (facts, type) => {
    expect(classifyBounce(facts)).toBe(type);
  });

  it('finds reply and enhanced codes in a reply, not in addresses or IPs', () => {
    expect(codesIn('550-5.1.1 The email account does not exist')).toEqual({ status: '5.1.1', smtpCode: 550 });
    expect(codesIn('192.0.2.44 does not like recipient.')).toEqual({ status: undefined, smtpCode: undefined });
    expect(codesIn('554: delivery error: dd')).toEqual({ status: undefined, smtpCode: 554 });
  });
});
