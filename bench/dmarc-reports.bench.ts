/**
 * DMARC aggregate reports (src/domains/dmarc-report-parser.ts): what reading one costs, and how long the event loop is
 * held while it is read. For a report at the record cap (5,000 records, gzip, mailed as a base64 attachment) and for a
 * gzip and a zip bomb (32 MB of spaces, refused at the ratio cap):
 * - wall time of `readAggregateReport` (email → MIME → inflate → XML → sums), median of BENCH_DMARC_ROUNDS (default 5);
 * - the longest gap between two ticks of a 1 ms timer while it runs (the event loop's longest stall). The reader gives the
 *   loop back every 1,000 tags (about 2 ms of work), so on an idle machine this stays a few ms; on a loaded one the
 *   scheduler and the garbage collector dominate it.
 */
import { gzipSync } from 'node:zlib';
import { DmarcReportRejected, readAggregateReport } from '../src/domains/dmarc-report-parser.js';
import { aggregateXml, reportEmail, zipOf } from '../test/helpers/dmarc.js';

const ROUNDS = Number(process.env.BENCH_DMARC_ROUNDS ?? 5);
const DOMAIN = 'agents.example.com';

/** Runs `work`, measuring its wall time and the longest gap between timer ticks meanwhile. */
async function measured(work: () => Promise<unknown>): Promise<{ ms: number; stallMs: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  await work().catch((error: unknown) => {
    if (!(error instanceof DmarcReportRejected)) throw error;
  });
  const ms = performance.now() - started;
  clearInterval(timer);
  stall = Math.max(stall, performance.now() - last);
  return { ms, stallMs: stall };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<Record<string, number | string>> {
  const records = Array.from({ length: 5_000 }, (_, index) => ({
    ip: `10.0.${(index >> 8) & 255}.${index & 255}`,
    count: 1 + (index % 7),
    dkim: index % 3 === 0 ? ('fail' as const) : ('pass' as const),
  }));
  const xml = Buffer.from(aggregateXml({ domain: DOMAIN, reportId: 'bench', records }));
  const cases: [string, Buffer][] = [
    [
      `5,000 records (${Math.round(xml.length / 1024)} KB XML, gzip)`,
      reportEmail({
        to: `dmarc-reports@${DOMAIN}`,
        file: gzipSync(xml),
        filename: 'r.xml.gz',
        contentType: 'application/gzip',
      }),
    ],
    [
      'gzip bomb (32 MB of spaces)',
      reportEmail({
        to: `dmarc-reports@${DOMAIN}`,
        file: gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20)),
        filename: 'r.xml.gz',
        contentType: 'application/gzip',
      }),
    ],
    [
      'zip bomb (32 MB of spaces)',
      reportEmail({
        to: `dmarc-reports@${DOMAIN}`,
        file: zipOf('r.xml', Buffer.alloc(32 * 1024 * 1024, 0x20)),
        filename: 'r.zip',
        contentType: 'application/zip',
      }),
    ],
  ];
  const figures: Record<string, number | string> = {};
  for (const [name, email] of cases) {
    await measured(() => readAggregateReport(email));
    const runs: { ms: number; stallMs: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) runs.push(await measured(() => readAggregateReport(email)));
    figures[`${name}: ms per report (median)`] = median(runs.map((entry) => entry.ms));
    figures[`${name}: longest event-loop stall, ms (max)`] = Math.max(...runs.map((entry) => entry.stallMs));
  }
  return figures;
}
