/**
 * The watchdog: fast-check mutates real invitations, real MIME messages and real JSON bodies and drives them
 * through the real SMTP listener and HTTP server, as an attacker would. The service runs in a process of its own
 * (./service-process.ts), so that its event loop is measured apart from the fuzzer's. An input fails the property
 * (and fast-check shrinks it to a smallest example) when:
 * - the service's event loop was blocked for more than 250 ms while it was handled (the main thread's own CPU time
 *   during its longest late timer, read from /proc: waiting for a core that other programs hold is not a block);
 * - it is answered with a 5xx, or with a reset instead of an answer;
 * - the service process exited.
 * After the run it also fails when an invitation job is still unfinished long after the attack (a stuck parse), or
 * when the service's heap (after a full GC) grew without bound.
 *
 * `npm test` runs it with a fixed seed and a small budget; `npm run fuzz` with a larger one (`FUZZ_RUNS`, and
 * `FUZZ_SEED` to replay a failure). It runs in its own group, after every other test file (vitest.config.ts), so
 * nothing else competes for the two cores while it measures the event loop.
 */
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, isErrorEnvelope } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { imipMessage } from '../helpers/mime.js';
import { Nylas } from '../helpers/service.js';
import { startServiceProcess, type ServiceProcess } from './service-client.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
/** The longest the event loop may be blocked. */
const MAX_BLOCK_MS = 250;
/** Heap growth (after a full GC) allowed across the whole run. */
const MAX_HEAP_GROWTH_BYTES = 256 * 1024 * 1024;

const DOMAIN = 'fuzz.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const ORGANIZER = 'organizer@example.com';

const fixturesDir = new URL('../fixtures/', import.meta.url);
const icsFixtures = readdirSync(new URL('ics/', fixturesDir)).map((name) =>
  readFileSync(new URL(`ics/${name}`, fixturesDir), 'utf8')
    .replace(/\r?\n/g, '\n')
    .trimEnd(),
);

/** The invitation that took the service down: a sub-daily VTIMEZONE rule from 1601 with absurd offsets. */
const HOSTILE_VTIMEZONE = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Fuzz//EN',
  'METHOD:REQUEST',
  'BEGIN:VTIMEZONE',
  'TZID:Custom/Slow',
  'BEGIN:STANDARD',
  'DTSTART:16010101T000000',
  'RRULE:FREQ=MINUTELY;INTERVAL=1',
  'TZOFFSETFROM:+9959',
  'TZOFFSETTO:-9959',
  'END:STANDARD',
  'END:VTIMEZONE',
  'BEGIN:VEVENT',
  'UID:hostile-vtimezone@example.com',
  'DTSTAMP:20261101T000000Z',
  'DTSTART;TZID=Custom/Slow:20261201T100000',
  'DTEND;TZID=Custom/Slow:20261201T110000',
  'SUMMARY:Hostile',
  `ORGANIZER:mailto:${ORGANIZER}`,
  `ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:${AGENT}`,
  'END:VEVENT',
  'END:VCALENDAR',
].join('\n');

const ICS_SEEDS = [...icsFixtures, HOSTILE_VTIMEZONE];

/** Lines an attacker would put into an iCalendar object. */
const ICS_HOSTILE_LINES = [
  'RRULE:FREQ=SECONDLY',
  'RRULE:FREQ=MINUTELY;COUNT=2000000000',
  'RRULE:FREQ=DAILY;COUNT=2000000000',
  'RRULE:FREQ=DAILY;UNTIL=99991231T000000Z',
  'RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
  'RRULE:FREQ=MONTHLY;BYDAY=-53MO;BYSETPOS=-366',
  'RRULE:FREQ=HOURLY;INTERVAL=1;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23',
  'DTSTART:16010101T000000',
  'DTSTART:99991231T235959Z',
  'DTSTART;TZID=Custom/Slow:16010101T000000',
  'DTEND:00010101T000000Z',
  'TZOFFSETTO:+9959',
  'TZOFFSETFROM:-9999',
  'EXDATE:' +
    Array.from({ length: 500 }, (_, index) => `2026${String((index % 12) + 1).padStart(2, '0')}01T000000Z`).join(','),
  'RDATE:' +
    Array.from({ length: 500 }, (_, index) => `20${String(27 + (index % 70)).padStart(2, '0')}0101T000000Z`).join(','),
  'BEGIN:VEVENT',
  'END:VEVENT',
  'BEGIN:VTIMEZONE',
  'BEGIN:STANDARD',
  'BEGIN:DAYLIGHT',
  'BEGIN:VALARM',
  'METHOD:CANCEL',
  'METHOD:REPLY',
  'SEQUENCE:2147483648',
  `ATTENDEE;PARTSTAT=ACCEPTED:mailto:${AGENT}`,
  'UID:' + 'u'.repeat(5000),
  'SUMMARY:' + 'x'.repeat(70_000),
  'X-LONG;' + 'P=v;'.repeat(2000) + ':value',
];

/** Edits of a list of lines: replace, insert, repeat, delete, truncate. */
const lineEdit = (hostile: string[]) =>
  fc.oneof(
    fc.record({ op: fc.constant('replace' as const), at: fc.nat(), line: fc.constantFrom(...hostile) }),
    fc.record({
      op: fc.constant('insert' as const),
      at: fc.nat(),
      line: fc.oneof(fc.constantFrom(...hostile), fc.string({ maxLength: 200 })),
    }),
    fc.record({ op: fc.constant('repeat' as const), at: fc.nat(), times: fc.integer({ min: 2, max: 400 }) }),
    fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  );
type LineEdit =
  | { op: 'replace' | 'insert'; at: number; line: string }
  | { op: 'repeat'; at: number; times: number }
  | { op: 'delete' | 'truncate'; at: number };

function applyEdits(lines: string[], edits: LineEdit[]): string[] {
  let out = [...lines];
  for (const edit of edits) {
    if (out.length === 0) break;
    const at = edit.at % out.length;
    if (edit.op === 'replace') out[at] = edit.line;
    else if (edit.op === 'insert') out.splice(at, 0, edit.line);
    else if (edit.op === 'repeat') out.splice(at, 0, ...Array<string>(edit.times).fill(out[at]!));
    else if (edit.op === 'delete') out.splice(at, 1);
    else out = out.slice(0, at + 1);
  }
  return out;
}

/** An iMIP message carrying `ics` as its `text/calendar` alternative (and, for some, as an attachment too). */
const imip = (ics: string, index: number, attachment: boolean) =>
  imipMessage({
    from: `<${ORGANIZER}>`,
    to: AGENT,
    subject: `fuzz invitation ${index}`,
    ics,
    method: 'REQUEST',
    attachment,
  });

/** Real messages to mutate. */
const MIME_SEEDS = [
  [
    'From: Ann <ann@example.com>',
    `To: ${AGENT}`,
    'Subject: Plans',
    'Message-ID: <m1@example.com>',
    '',
    'First words about plans',
  ],
  [
    'From: Fay <fay@example.com>',
    `To: ${AGENT}`,
    'Subject: Report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary=x',
    '',
    '--x',
    'Content-Type: text/html; charset=iso-8859-1',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    '<p>See the attached report =E9t=E9</p>',
    '--x',
    'Content-Type: text/csv; name=report.csv',
    'Content-Disposition: attachment; filename=report.csv',
    'Content-Transfer-Encoding: base64',
    '',
    'YSxiDQoxLDI=',
    '--x--',
  ],
  [
    'From: =?utf-8?B?w6nDqQ==?= <enc@example.com>',
    `To: ${AGENT}`,
    'Subject: =?utf-8?Q?caf=C3=A9?=',
    'Content-Type: message/rfc822',
    '',
    'From: inner@example.com',
    'Subject: inner',
    '',
    'inner body',
  ],
];

const MIME_HOSTILE_LINES = [
  'Content-Type: multipart/mixed; boundary=x',
  'Content-Type: multipart/mixed; boundary=""',
  'Content-Type: text/plain; charset=utf-7',
  'Content-Type: text/html; charset=x-unknown',
  'Content-Type: message/rfc822',
  'Content-Transfer-Encoding: base64',
  'Content-Transfer-Encoding: quoted-printable',
  "Content-Disposition: attachment; filename*=utf-8''%E2%80%AE.exe",
  '--x',
  '--x--',
  '=?utf-8?B?' + 'A'.repeat(3000) + '?=',
  'Subject: ' + '=?utf-8?Q?=E2=80?= '.repeat(300),
  'References: ' + Array.from({ length: 300 }, (_, index) => `<r${index}@example.com>`).join(' '),
  'In-Reply-To: <m1@example.com>',
  'X-Long: ' + 'y'.repeat(20_000),
  '<div>'.repeat(5000),
  '=\u0000=\u00ff',
];

/** JSON bodies the API accepts, to be bent out of shape. */
function validBodies(
  now: number,
): { method: string; path: (grant: string) => string; body: Record<string, unknown> }[] {
  return [
    {
      method: 'POST',
      path: (grant) => `/v3/grants/${grant}/messages/send`,
      body: { to: [{ email: 'friend@example.com' }], subject: 'hello', body: '<p>hi</p>', metadata: { key1: 'a' } },
    },
    {
      method: 'POST',
      path: (grant) => `/v3/grants/${grant}/drafts`,
      body: { to: [{ email: 'friend@example.com' }], subject: 'draft', body: 'text' },
    },
    {
      method: 'POST',
      path: (grant) => `/v3/grants/${grant}/events?calendar_id=primary`,
      body: {
        title: 'Sync',
        when: { start_time: now + 3600, end_time: now + 7200 },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=5'],
        participants: [{ email: 'friend@example.com' }],
      },
    },
    {
      method: 'POST',
      path: (grant) => `/v3/grants/${grant}/calendars/free-busy`,
      body: { start_time: now, end_time: now + 86_400, emails: [AGENT] },
    },
    {
      method: 'POST',
      path: () => `/v3/calendars/availability`,
      body: {
        start_time: now,
        end_time: now + 7 * 86_400,
        duration_minutes: 30,
        participants: [{ email: AGENT, calendar_ids: ['primary'] }],
      },
    },
    {
      method: 'POST',
      path: () => `/v3/webhooks`,
      body: { trigger_types: ['message.created'], webhook_url: 'https://hooks.example.com/in' },
    },
  ];
}

/**
 * Deep nesting is carried as a token and written out only in the request text: a value nested 20,000 levels deep
 * would overflow this test's own `JSON.stringify` (and fast-check's printing of a counterexample).
 */
const deepToken = (depth: number) => `\u0000deep:${depth}\u0000`;
const expandDeep = (text: string) =>
  text.replace(/"\\u0000deep:(\d+)\\u0000"/g, (_, depth: string) => {
    const levels = Number(depth);
    return `${'{"a":['.repeat(levels)}1${']}'.repeat(levels)}`;
  });

const hostileValue = fc.oneof(
  fc.anything({ maxDepth: 4, maxKeys: 6 }),
  fc.integer({ min: 1, max: 20_000 }).map(deepToken),
  fc.constantFrom(-1, 0, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER, 253_402_300_800, 99_999_999_999),
  fc.constantFrom(
    '',
    'x'.repeat(100_000),
    '\u0000',
    '\ud800',
    '../../etc/passwd',
    '<script>',
    'RRULE:FREQ=SECONDLY',
    'RRULE:FREQ=DAILY;COUNT=2000000000',
  ),
  fc.array(fc.record({ email: fc.string({ maxLength: 400 }) }), { maxLength: 300 }),
  fc.dictionary(fc.string({ maxLength: 60 }), fc.string({ maxLength: 600 }), { maxKeys: 80 }),
);

/** One hostile edit of a JSON body: a field replaced or added, or the body made non-JSON. */
const bodyEdit = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    path: fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 3 }),
    value: hostileValue,
  }),
  fc.record({ kind: fc.constant('field' as const), index: fc.nat(), value: hostileValue }),
  fc.record({
    kind: fc.constant('raw' as const),
    text: fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.constantFrom('{', '[]', 'null', '{"a":'.repeat(10_000), '\u0000\u0001'),
    ),
  }),
);

describe('hostile input never stalls or crashes the service', () => {
  let service: ServiceProcess;
  let grantId: string;
  let worst = { ms: 0, input: '' };
  let worstGapMs = 0;
  let heapBefore = 0;
  let tried = 0;

  /** The longest block of the service's event loop since the last look; over the limit fails the input. */
  async function checkDelay(input: string): Promise<void> {
    const { maxMs, maxGapMs } = await service.ask<{ maxMs: number; maxGapMs: number }>('delay');
    if (maxMs > worst.ms) worst = { ms: maxMs, input };
    if (maxGapMs > worstGapMs) worstGapMs = maxGapMs;
    expect(
      maxMs,
      `the service's event loop was blocked for ${maxMs.toFixed(0)} ms by: ${input.slice(0, 500)}`,
    ).toBeLessThan(MAX_BLOCK_MS);
  }
  const jobsDrained = () =>
    eventually(async () => ((await service.ask<{ pending: number }>('jobs')).pending === 0 ? true : undefined), 60_000);

  beforeAll(async () => {
    service = await startServiceProcess();
    grantId = await createMailbox(
      {
        url: service.url,
        apiKey: service.apiKey,
        nylas: new Nylas({ apiKey: service.apiKey, apiUri: service.url, timeout: 30 }),
      },
      AGENT,
    );
    // Warm-up (modules, threads), then measure from here on.
    expect((await sendRaw(service.smtpPort, ORGANIZER, [AGENT], imip(icsFixtures[0]!, 0, true))).code).toBe(250);
    await jobsDrained();
    heapBefore = (await service.ask<{ bytes: number }>('heap')).bytes;
    await service.ask('delay');
  });

  afterAll(async () => {
    if (service && service.child.exitCode === null) {
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      service.child.send({ type: 'close' });
      await exited;
    }
  });

  it('invitations: mutated iCalendar over SMTP is answered, and its job finishes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(ICS_SEEDS.length - 1),
        fc.array(lineEdit(ICS_HOSTILE_LINES), { maxLength: 8 }),
        fc.boolean(),
        async (seed, edits, asAttachment) => {
          const ics = applyEdits(ICS_SEEDS[seed]!.split('\n'), edits).join('\n');
          const input = `ics seed ${seed} edits ${JSON.stringify(edits)}`;
          tried++;
          const reply = await sendRaw(service.smtpPort, ORGANIZER, [AGENT], imip(ics, tried, asAttachment));
          expect(reply.code === 250 || (reply.code >= 400 && reply.code < 600)).toBe(true);
          expect(reply.code).not.toBe(451);
          await checkDelay(input);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED, endOnFailure: true },
    );
    // Every invitation job finishes (applied, ignored or recorded unreadable) well within the lease.
    await jobsDrained();
    await checkDelay('invitation jobs draining');
  });

  it('mail: mutated MIME over SMTP is answered 250 or refused, never reset', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(MIME_SEEDS.length - 1),
        fc.array(lineEdit(MIME_HOSTILE_LINES), { maxLength: 10 }),
        async (seed, edits) => {
          const lines = applyEdits(MIME_SEEDS[seed]!, edits);
          const input = `mime seed ${seed} edits ${JSON.stringify(edits)}`;
          tried++;
          const reply = await sendRaw(service.smtpPort, 'sender@example.com', [AGENT], `${lines.join('\r\n')}\r\n`);
          expect(reply.code === 250 || (reply.code >= 500 && reply.code < 600)).toBe(true);
          await checkDelay(input);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED + 1, endOnFailure: true },
    );
  });

  it('HTTP: mutated JSON bodies and paths are answered below 500, in the Nylas error shape', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bodies = validBodies(now);
    await fc.assert(
      fc.asyncProperty(fc.nat(bodies.length - 1), fc.array(bodyEdit, { maxLength: 3 }), async (which, edits) => {
        const target = bodies[which]!;
        let body: unknown = structuredClone(target.body);
        for (const edit of edits) {
          if (edit.kind === 'raw') body = edit.text;
          else if (typeof body === 'object' && body !== null) {
            if (edit.kind === 'field') {
              const keys = Object.keys(body);
              (body as Record<string, unknown>)[keys[edit.index % keys.length]!] = edit.value;
            } else {
              let node = body as Record<string, unknown>;
              for (const key of edit.path.slice(0, -1))
                node = (node[key] = typeof node[key] === 'object' && node[key] !== null ? node[key] : {}) as Record<
                  string,
                  unknown
                >;
              node[edit.path.at(-1)!] = edit.value;
            }
          }
        }
        const text = typeof body === 'string' ? body : expandDeep(JSON.stringify(body));
        const input = `http ${target.method} ${target.path(':grant')} ${text.slice(0, 300)}`;
        tried++;
        const response = await request(service.url, target.method, target.path(grantId), {
          key: service.apiKey,
          body: text,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status, `${input} → ${response.text.slice(0, 300)}`).toBeLessThan(500);
        if (response.status >= 400) expect(isErrorEnvelope(response.body), response.text.slice(0, 300)).toBe(true);
        await checkDelay(input);
      }),
      { numRuns: RUNS * 4, seed: SEED + 2, endOnFailure: true },
    );
    await fc.assert(
      // Ids of one character or more: an empty one is the list itself (`/messages/` answers as `/messages`).
      fc.asyncProperty(
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 300 }),
          fc.constantFrom('x'.repeat(100_000), '%00', '..%2f..', '%ff%fe', '\u202e', 'primary'.repeat(100)),
        ),
        fc.constantFrom('messages', 'threads', 'drafts', 'events', 'folders', 'contacts'),
        async (id, resource) => {
          const path = `/v3/grants/${grantId}/${resource}/${encodeURIComponent(id)}${resource === 'events' ? '?calendar_id=primary' : ''}`;
          const input = `http GET ${path.slice(0, 300)}`;
          tried++;
          const response = await request(service.url, 'GET', path, { key: service.apiKey });
          expect(response.status, `${input} → ${response.text.slice(0, 300)}`).toBeLessThan(500);
          expect(isErrorEnvelope(response.body), response.text.slice(0, 300)).toBe(true);
          await checkDelay(input);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED + 3, endOnFailure: true },
    );
  });

  it('kept the heap bounded, and the service alive and answering', async () => {
    const heapGrowth = (await service.ask<{ bytes: number }>('heap')).bytes - heapBefore;
    console.log(
      `fuzz: ${tried} inputs (seed ${SEED}, ${RUNS} runs a unit); worst event-loop block of the service ${worst.ms.toFixed(1)} ms of CPU (during ${worst.input.slice(0, 200)}); latest timer ${worstGapMs.toFixed(1)} ms of wall time; heap growth ${(heapGrowth / 1024 / 1024).toFixed(1)} MB`,
    );
    expect(heapGrowth).toBeLessThan(MAX_HEAP_GROWTH_BYTES);
    expect(service.child.exitCode).toBeNull();
    const started = performance.now();
    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
