/** DMARC aggregate reports for tests: the XML of RFC 7489 appendix C, a zip archive writer, and the email around them. */
import { deflateRawSync, gzipSync } from 'node:zlib';

/** One `<record>`. */
export interface ReportRecord {
  ip: string;
  count: number;
  disposition?: 'none' | 'quarantine' | 'reject';
  dkim?: 'pass' | 'fail';
  spf?: 'pass' | 'fail';
}

/** The XML of an aggregate report about `domain`. */
export function aggregateXml(options: {
  domain: string;
  reportId: string;
  org?: string;
  records: ReportRecord[];
  begin?: number;
  end?: number;
}): string {
  const records = options.records
    .map(
      (record) => `  <record>
    <row>
      <source_ip>${record.ip}</source_ip>
      <count>${record.count}</count>
      <policy_evaluated>
        <disposition>${record.disposition ?? 'none'}</disposition>
        <dkim>${record.dkim ?? 'pass'}</dkim>
        <spf>${record.spf ?? 'pass'}</spf>
      </policy_evaluated>
    </row>
    <identifiers><header_from>${options.domain}</header_from></identifiers>
    <auth_results>
      <dkim><domain>${options.domain}</domain><result>${record.dkim ?? 'pass'}</result></dkim>
      <spf><domain>${options.domain}</domain><result>${record.spf ?? 'pass'}</result></spf>
    </auth_results>
  </record>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${options.org ?? 'receiver.example'}</org_name>
    <email>noreply-dmarc-support@receiver.example</email>
    <report_id>${options.reportId}</report_id>
    <date_range><begin>${options.begin ?? 1_700_000_000}</begin><end>${options.end ?? 1_700_086_399}</end></date_range>
  </report_metadata>
  <policy_published>
    <domain>${options.domain}</domain>
    <adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct>
  </policy_published>
${records}
</feedback>
`;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A zip archive of one file, deflated (or stored as it is). */
export function zipOf(name: string, content: Buffer, options: { stored?: boolean } = {}): Buffer {
  const method = options.stored ? 0 : 8;
  const data = options.stored ? content : deflateRawSync(content);
  const nameBytes = Buffer.from(name);
  const crc = crc32(content);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(method, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(method, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  central.writeUInt32LE(0, 42);
  const directoryOffset = local.length + nameBytes.length + data.length;
  const directorySize = central.length + nameBytes.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(directoryOffset, 16);
  return Buffer.concat([local, nameBytes, data, central, nameBytes, end]);
}

/** The email a receiver sends: a short text part and the report attached (base64). */
export function reportEmail(options: {
  to: string;
  file: Buffer;
  filename: string;
  contentType: string;
  subject?: string;
}): Buffer {
  const base64 = options.file.toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      'From: noreply-dmarc-support@receiver.example',
      `To: ${options.to}`,
      `Subject: ${options.subject ?? 'Report Domain: test'}`,
      'Date: Fri, 27 Nov 2026 12:00:00 +0000',
      'Message-ID: <report-1@receiver.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'This is an aggregate report.',
      '--b1',
      `Content-Type: ${options.contentType}; name="${options.filename}"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="${options.filename}"`,
      '',
      base64,
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

export { gzipSync };
