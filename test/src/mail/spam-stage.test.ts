/**
 * Inbound stage 3 (src/mail/stages/spam.ts): header anomalies (a pure table), DNSBL look-ups through the
 * controllable resolver, and a real rspamd on loopback (GTUBE is spam, a plain message is not, sensitivity moves
 * the threshold, an rspamd that does not answer rejects the check so the pipeline can fail closed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLogger,
  createSpamChecker,
  dnsblName,
  headerAnomalies,
  spamThreshold,
  type SpamChecker,
  type StageMail,
} from '../../../src/index.js';
import { readRawHeaders } from '../../../src/mime/parse-inbound.js';
import { fixedClock } from '../../helpers/clock.js';
import { fakeDns, type FakeDns } from '../../helpers/dns.js';
import { RSPAMD_BINARY, SKIP_RSPAMD, startRspamd, type RunningRspamd } from '../../helpers/rspamd.js';

const NOW = '2026-03-02T15:00:00Z';
const clock = fixedClock(NOW);
const logger = createLogger('silent');
const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
/** A public address (the DNSBL check skips private and documentation ranges). */
const PUBLIC_IP = '45.67.89.10';

function message(headers: string[], body = 'Shall we meet at noon by the fountain?'): Buffer {
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`);
}

const NORMAL_HEADERS = [
  'From: Alice Example <alice@example.org>',
  'To: agent@receiver.agentpost.localhost',
  'Subject: Lunch tomorrow',
  'Date: Mon, 02 Mar 2026 14:58:00 +0000',
  'Message-ID: <lunch-1@example.org>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
];

function mail(
  raw: Buffer,
  client: StageMail['client'] = { address: PUBLIC_IP, helo: 'mail.example.org' },
): StageMail & { authentication: undefined } {
  return {
    raw,
    mailFrom: 'alice@example.org',
    client,
    recipients: ['agent@receiver.agentpost.localhost'],
    authentication: undefined,
  };
}

describe('header anomalies', () => {
  const base = NORMAL_HEADERS.map((line) => line);
  const without = (name: string) => base.filter((line) => !line.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  const cases: [string, string[], string[]][] = [
    ['a normal message', base, []],
    ['no Date', without('Date'), ['MISSING_DATE']],
    ['an unparsable Date', [...without('Date'), 'Date: yesterday-ish'], ['INVALID_DATE']],
    ['a Date two days ahead', [...without('Date'), 'Date: Wed, 04 Mar 2026 15:00:00 +0000'], ['DATE_IN_FUTURE']],
    ['a Date an hour ahead (clock drift)', [...without('Date'), 'Date: Mon, 02 Mar 2026 16:00:00 +0000'], []],
    ['a Date with a comment', [...without('Date'), 'Date: Mon, 02 Mar 2026 14:58:00 +0000 (UTC)'], []],
    ['no Message-ID', without('Message-ID'), ['MISSING_MESSAGE_ID']],
    ['no From', without('From'), ['MISSING_FROM']],
    ['a From without an address', [...without('From'), 'From: Alice Example'], ['INVALID_FROM']],
    ['a bare From address', [...without('From'), 'From: alice@example.org'], []],
    ['two From fields', [...base, 'From: bob@example.net'], ['MULTIPLE_FROM']],
    [
      '31 Received lines',
      [
        ...Array.from(
          { length: 31 },
          (_, index) => `Received: from hop${index}.example.net by hop${index + 1}.example.net`,
        ),
        ...base,
      ],
      ['TOO_MANY_RECEIVED'],
    ],
    [
      '30 Received lines',
      [
        ...Array.from(
          { length: 30 },
          (_, index) => `Received: from hop${index}.example.net by hop${index + 1}.example.net`,
        ),
        ...base,
      ],
      [],
    ],
    ['an all-caps Subject', [...without('Subject'), 'Subject: FREE MONEY WAITING FOR YOU!!!'], ['SUBJECT_ALL_CAPS']],
    ['a short all-caps Subject', [...without('Subject'), 'Subject: RE: OK'], []],
    ['an encoded Subject', [...without('Subject'), 'Subject: =?UTF-8?B?RlJFRSBNT05FWSBXQUlUSU5H?= now'], []],
    ['everything missing', ['Subject: hello'], ['MISSING_DATE', 'MISSING_MESSAGE_ID', 'MISSING_FROM']],
  ];
  it.each(cases)('%s', (_name, headers, expected) => {
    expect(headerAnomalies(readRawHeaders(message(headers)), new Date(NOW)).map((anomaly) => anomaly.name)).toEqual(
      expected,
    );
  });
});

describe('the spam threshold', () => {
  it('is 6 at sensitivity 1 and falls as sensitivity rises, within 0.1–5', () => {
    expect(spamThreshold(undefined)).toBe(6);
    expect(spamThreshold(1)).toBe(6);
    expect(spamThreshold(2)).toBe(3);
    expect(spamThreshold(5)).toBe(1.2);
    expect(spamThreshold(0.5)).toBe(12);
    expect(spamThreshold(0.1)).toBe(60);
    expect(spamThreshold(50)).toBe(1.2);
    expect(spamThreshold(0)).toBe(60);
  });
});

describe('the spam checker without rspamd', () => {
  let dns: FakeDns;
  let check: SpamChecker;
  beforeAll(() => {
    dns = fakeDns();
    check = createSpamChecker({
      dns,
      clock,
      logger,
      dnsblZones: ['zen.example-dnsbl.org', 'bl.example-dnsbl.net'],
      rspamdUrl: undefined,
      rspamdTimeoutMs: 1_000,
    });
  });

  it('scores header anomalies only when the policy asks, against the sensitivity threshold', async () => {
    const shouting = message(
      [
        ...NORMAL_HEADERS.filter((line) => !/^(Date|Message-ID|Subject):/.test(line)),
        'Subject: FREE MONEY WAITING FOR YOU',
      ],
      'Click here',
    );
    expect(await check(mail(shouting), {})).toEqual({ spam: false, score: 0, threshold: 6, reasons: [] });
    const lenient = await check(mail(shouting), { use_header_anomaly_detection: true });
    expect(lenient).toEqual({
      spam: false,
      score: 4,
      threshold: 6,
      reasons: ['header MISSING_DATE +1', 'header MISSING_MESSAGE_ID +1.5', 'header SUBJECT_ALL_CAPS +1.5'],
    });
    // The same score, a more sensitive policy: spam.
    const strict = await check(mail(shouting), { use_header_anomaly_detection: true, spam_sensitivity: 2 });
    expect(strict).toMatchObject({ spam: true, score: 4, threshold: 3 });
    expect(
      await check(mail(message(NORMAL_HEADERS)), { use_header_anomaly_detection: true, spam_sensitivity: 5 }),
    ).toMatchObject({ spam: false, score: 0, threshold: 1.2 });
  });

  it('looks the client IP up in each DNSBL zone; a 127.0.0.x answer is a listing', async () => {
    expect(dnsblName(PUBLIC_IP, 'zen.example-dnsbl.org')).toBe('10.89.67.45.zen.example-dnsbl.org');
    expect(dnsblName('::ffff:45.67.89.10', 'zen.example-dnsbl.org')).toBe('10.89.67.45.zen.example-dnsbl.org');
    expect(dnsblName('2001:db8::1', 'dnsbl.example')).toBe(`1.0.0.0.${'0.'.repeat(20)}8.b.d.0.1.0.0.2.dnsbl.example`);

    const raw = message(NORMAL_HEADERS);
    expect(await check(mail(raw), { use_list_dnsbl: true })).toMatchObject({ spam: false, score: 0, reasons: [] });

    dns.hosts.set('10.89.67.45.zen.example-dnsbl.org', ['127.0.0.2']);
    const listed = await check(mail(raw), { use_list_dnsbl: true });
    expect(listed).toEqual({
      spam: true,
      score: 6,
      threshold: 6,
      reasons: [`dnsbl zen.example-dnsbl.org lists ${PUBLIC_IP} (127.0.0.2) +6`],
    });
    // Not asked for by the policy: no look-up counts.
    expect(await check(mail(raw), {})).toMatchObject({ spam: false, score: 0 });
    // Lenient policy: one listing is not enough.
    expect(await check(mail(raw), { use_list_dnsbl: true, spam_sensitivity: 0.5 })).toMatchObject({
      spam: false,
      score: 6,
      threshold: 12,
    });
  });

  it('ignores DNSBL "query refused" codes, DNS failures, private clients and local mail', async () => {
    const raw = message(NORMAL_HEADERS);
    const other = '45.67.89.11';
    dns.hosts.set('11.89.67.45.zen.example-dnsbl.org', ['127.255.255.254']);
    dns.failing.add('11.89.67.45.bl.example-dnsbl.net');
    expect(await check(mail(raw, { address: other, helo: 'x.example' }), { use_list_dnsbl: true })).toMatchObject({
      spam: false,
      score: 0,
    });
    dns.hosts.set('1.0.168.192.zen.example-dnsbl.org', ['127.0.0.2']);
    expect(await check(mail(raw, { address: '192.168.0.1', helo: 'lan' }), { use_list_dnsbl: true })).toMatchObject({
      spam: false,
      score: 0,
    });
    expect(await check({ ...mail(raw), client: undefined }, { use_list_dnsbl: true })).toMatchObject({
      spam: false,
      score: 0,
    });
  });

  it('rejects when rspamd is configured but does not answer', async () => {
    const down = createSpamChecker({
      dns,
      clock,
      logger,
      dnsblZones: [],
      rspamdUrl: 'http://127.0.0.1:43598',
      rspamdTimeoutMs: 2_000,
    });
    await expect(down(mail(message(NORMAL_HEADERS)), {})).rejects.toThrow(
      /rspamd at http:\/\/127\.0\.0\.1:43598 did not answer/,
    );
  });
});

describe.skipIf(SKIP_RSPAMD)(`the spam checker with rspamd (${RSPAMD_BINARY ?? 'missing'})`, () => {
  let rspamd: RunningRspamd;
  let check: SpamChecker;
  beforeAll(async () => {
    rspamd = await startRspamd();
    check = createSpamChecker({
      dns: fakeDns(),
      clock,
      logger,
      dnsblZones: [],
      rspamdUrl: rspamd.url,
      rspamdTimeoutMs: 15_000,
    });
  }, 150_000);
  afterAll(async () => {
    await rspamd?.close();
  });

  it('marks GTUBE as spam, whatever the sensitivity', async () => {
    const raw = message(NORMAL_HEADERS, GTUBE);
    const verdict = await check(mail(raw), {});
    expect(verdict.spam).toBe(true);
    expect(verdict.score).toBeGreaterThanOrEqual(verdict.threshold);
    expect(verdict.reasons).toContain('rspamd GTUBE +0');
    expect(verdict.reasons.some((reason) => reason.startsWith('rspamd rejects'))).toBe(true);
    expect((await check(mail(raw), { spam_sensitivity: 0.1 })).spam).toBe(true);
  });

  it('lets a normal message through', async () => {
    const verdict = await check(mail(message(NORMAL_HEADERS)), {
      use_header_anomaly_detection: true,
      use_list_dnsbl: true,
    });
    expect(verdict.spam).toBe(false);
    expect(verdict.score).toBeLessThan(verdict.threshold);
    expect(verdict.reasons[0]).toMatch(/^rspamd: -?[\d.]+ \(no action\)$/);
  });

  it('scores the same message the same, and the sensitivity decides', async () => {
    // No Date, no Message-ID: rspamd's MISSING_DATE and MISSING_MID, about 3.5 points.
    const sloppy = message(NORMAL_HEADERS.filter((line) => !/^(Date|Message-ID):/.test(line)));
    const lenient = await check(mail(sloppy), { spam_sensitivity: 1 });
    const strict = await check(mail(sloppy), { spam_sensitivity: 5 });
    expect(strict.score).toBe(lenient.score);
    expect(lenient.score).toBeGreaterThan(1.2);
    expect(lenient).toMatchObject({ spam: false, threshold: 6 });
    expect(strict).toMatchObject({ spam: true, threshold: 1.2 });
    expect(strict.reasons.some((reason) => reason.startsWith('rspamd MISSING_MID'))).toBe(true);
  });
});
