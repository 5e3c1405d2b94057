/** The bounded reader of DMARC aggregate reports (src/domains/dmarc-report-parser.ts), without SMTP. */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DmarcReportRejected, readAggregateReport, readAggregateXml, reportXml } from '../../../src/index.js';
import { aggregateXml, reportEmail, zipOf } from '../../helpers/dmarc.js';

const DOMAIN = 'agents.example.com';

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DmarcReportRejected);
    return (error as Error).message;
  }
  throw new Error('expected the report to be refused');
}

describe('readAggregateXml', () => {
  it('reads namespaced elements, comments, CDATA and entities, and sums records by source address', async () => {
    const xml = `<?xml version="1.0"?>
<!-- a comment -->
<d:feedback xmlns:d="urn:ietf:params:xml:ns:dmarc-2.0">
  <d:report_metadata><d:org_name>Ex &amp; Co</d:org_name><d:report_id><![CDATA[id&1]]></d:report_id>
    <d:date_range><d:begin>10</d:begin><d:end>20</d:end></d:date_range></d:report_metadata>
  <d:policy_published><d:domain>Agents.Example.COM.</d:domain><d:p>reject</d:p></d:policy_published>
  <d:record><d:row><d:source_ip>192.0.2.1</d:source_ip><d:count>4</d:count>
    <d:policy_evaluated><d:disposition>reject</d:disposition><d:dkim>fail</d:dkim><d:spf>pass</d:spf></d:policy_evaluated></d:row></d:record>
  <d:record><d:row><d:source_ip>192.0.2.1</d:source_ip><d:count>1</d:count>
    <d:policy_evaluated><d:disposition>none</d:disposition><d:dkim>pass</d:dkim><d:spf>pass</d:spf></d:policy_evaluated></d:row></d:record>
</d:feedback>`;
    const report = await readAggregateXml(xml);
    expect(report).toMatchObject({
      orgName: 'Ex & Co',
      reportId: 'id&1',
      begin: 10,
      end: 20,
      policy: { domain: 'agents.example.com', p: 'reject' },
      messageCount: 5,
    });
    expect(report.sources).toEqual([
      {
        source_ip: '192.0.2.1',
        count: 5,
        dkim: { pass: 1, fail: 4 },
        spf: { pass: 5, fail: 0 },
        disposition: { none: 1, quarantine: 0, reject: 4 },
      },
    ]);
  });

  it('refuses what is not a well-formed report, naming why', async () => {
    const good = aggregateXml({ domain: DOMAIN, reportId: 'r', records: [{ ip: '192.0.2.1', count: 1 }] });
    expect(await rejection(readAggregateXml(good.replace('</feedback>', '')))).toContain('ends inside <feedback>');
    expect(await rejection(readAggregateXml(good.replace('<count>1</count>', '<count>1</counts>')))).toContain(
      'does not match',
    );
    expect(await rejection(readAggregateXml(good.replace('<count>1</count>', '<count>-1</count>')))).toContain(
      'count is not a whole number',
    );
    expect(
      await rejection(
        readAggregateXml(good.replace('<disposition>none</disposition>', '<disposition>drop</disposition>')),
      ),
    ).toContain('disposition');
    expect(await rejection(readAggregateXml(good.replace(/<report_id>r<\/report_id>/, '')))).toContain('report_id');
    expect(await rejection(readAggregateXml(good.replace('<org_name>', '<org_name>&bogus;')))).toContain(
      'unknown XML entity',
    );
    expect(
      await rejection(readAggregateXml(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${good}`)),
    ).toContain('DOCTYPE');
    expect(await rejection(readAggregateXml('<report/>'))).toContain('not <feedback>');
    expect(await rejection(readAggregateXml(`${'<a>'.repeat(20)}`.replace('<a>', '<feedback>')))).toContain(
      'nested more than 16',
    );
    expect(await rejection(readAggregateXml(good.replace('receiver.example', 'x'.repeat(2_000))))).toContain(
      'longer than 1024',
    );
  });
});

describe('reportXml and readAggregateReport', () => {
  const xml = aggregateXml({ domain: DOMAIN, reportId: 'r', records: [{ ip: '2001:db8::5', count: 2 }] });

  it('reads gzip, a stored or deflated zip entry, and plain XML', async () => {
    expect(await reportXml(gzipSync(xml))).toBe(xml);
    expect(await reportXml(zipOf('a.xml', Buffer.from(xml)))).toBe(xml);
    expect(await reportXml(zipOf('a.xml', Buffer.from(xml), { stored: true }))).toBe(xml);
    expect(await reportXml(Buffer.from(`\uFEFF${xml}`))).toBe(xml);
  });

  it('refuses encrypted zip entries, other compression methods and bombs', async () => {
    const zip = zipOf('a.xml', Buffer.from(xml));
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    const encrypted = Buffer.from(zip);
    encrypted.writeUInt16LE(1, central + 8);
    expect(await rejection(reportXml(encrypted))).toContain('encrypted');
    const bzip = Buffer.from(zip);
    bzip.writeUInt16LE(12, central + 10);
    expect(await rejection(reportXml(bzip))).toContain('method 12');
    expect(await rejection(reportXml(gzipSync(Buffer.alloc(8 * 1024 * 1024))))).toContain('expands past');
  });

  it('finds the report in an email whatever the attachment says it is, and refuses an email without one', async () => {
    const email = reportEmail({
      to: `dmarc-reports@${DOMAIN}`,
      file: gzipSync(xml),
      filename: 'r.bin',
      contentType: 'application/octet-stream',
    });
    expect((await readAggregateReport(email)).sources).toEqual([
      expect.objectContaining({ source_ip: '2001:db8::5', count: 2 }),
    ]);
    expect(await rejection(readAggregateReport(Buffer.from('Subject: hello\r\n\r\nJust text.\r\n')))).toContain(
      'no gzip, zip or XML report',
    );
  });
});
