import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createCalendarParser, parseICalendarBounded } from '../../../src/calendar/ical-bounded.js';
import { utc } from '../../helpers/calendar.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/ics/${name}`, import.meta.url), 'utf8');

/** Outlook's Berlin zone under a name we do not know, so that its rules are expanded (the costly path). */
const CUSTOM_ZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Custom Zone',
  'BEGIN:STANDARD',
  'DTSTART:16010101T030000',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'BEGIN:DAYLIGHT',
  'DTSTART:16010101T020000',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'END:VTIMEZONE',
];

/**
 * A legal calendar near the limits that costs real work: 500 events spread over three centuries in a custom zone
 * (each year's offsets are computed), 50 of them monthly series, with long summaries (about 850 KB).
 */
function heavyCalendar(): string {
  const events = Array.from({ length: 500 }, (_, index) => {
    const year = 1900 + (index % 299);
    return [
      'BEGIN:VEVENT',
      `UID:e${index}@example.com`,
      'DTSTAMP:20250101T000000Z',
      `DTSTART;TZID=Custom Zone:${year}0601T100000`,
      `DTEND;TZID=Custom Zone:${year}0601T110000`,
      `SUMMARY:${'x'.repeat(1500)}`,
      ...(index < 50
        ? ['RRULE:FREQ=MONTHLY;BYDAY=1MO,2TU,3WE;BYMONTH=1,3,5', `EXDATE;TZID=Custom Zone:${year}0801T100000`]
        : []),
      'END:VEVENT',
    ].join('\r\n');
  });
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    'METHOD:PUBLISH',
    ...CUSTOM_ZONE,
    ...events,
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

describe('parsing iCalendar off the event loop', () => {
  const parsers: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(parsers.map((parser) => parser.close()));
  });

  it('parses a real invitation in its thread, as the codec does', async () => {
    const result = await parseICalendarBounded(fixture('outlook-display-name-tz.ics'));
    expect(result.ok).toBe(true);
    if (result.ok)
      expect(result.value.events[0]!.when).toMatchObject({
        startTime: utc('2025-07-15T13:00:00Z'),
        startTimezone: 'Europe/Berlin',
      });
  });

  it("passes on the codec's refusals as not unreadable", async () => {
    const result = await parseICalendarBounded('not a calendar');
    expect(result).toMatchObject({
      ok: false,
      unreadable: false,
      error: expect.stringContaining('not valid iCalendar'),
    });
  });

  it('kills a parse that overruns its deadline and reports it unreadable, while the event loop stays responsive', async () => {
    const parser = createCalendarParser({ timeoutMs: 40 });
    parsers.push(parser);
    const text = heavyCalendar();
    // The thread is started (and its codec loaded) by a first, small parse: the deadline counts from then on.
    expect((await parser.parse(fixture('google-reply.ics'))).ok).toBe(true);

    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let ticks = 0;
    const probe = setInterval(() => ticks++, 10);
    const started = performance.now();
    const result = await parser.parse(text);
    const elapsed = performance.now() - started;
    clearInterval(probe);
    delay.disable();

    expect(result).toEqual({ ok: false, unreadable: true, error: 'reading the calendar took longer than 40 ms' });
    expect(elapsed).toBeLessThan(2_000);
    expect(ticks).toBeGreaterThan(0);
    expect(delay.max / 1e6).toBeLessThan(250);

    // The parser goes on with a new thread.
    const after = await parser.parse(fixture('google-cancel.ics'));
    expect(after).toMatchObject({ ok: true, value: { method: 'CANCEL' } });
  });

  it('reads the same heavy calendar when given the time', async () => {
    const parser = createCalendarParser({ timeoutMs: 20_000 });
    parsers.push(parser);
    const result = await parser.parse(heavyCalendar());
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value.events).toHaveLength(500);
      // 1900-06-01 10:00 in the (Berlin-like) custom zone, summer time: 08:00 UTC.
      expect(result.value.events[0]!.when).toMatchObject({ startTime: utc('1900-06-01T08:00:00Z') });
    }
  });

  it('keeps a short-lived process alive for the answer, and lets it exit after', async () => {
    const module = fileURLToPath(new URL('../../../src/calendar/ical-bounded.ts', import.meta.url));
    const ics = fileURLToPath(new URL('../../fixtures/ics/google-cancel.ics', import.meta.url));
    const script = `import { parseICalendarBounded } from ${JSON.stringify(module)}; import { readFileSync } from 'node:fs';
      const result = await parseICalendarBounded(readFileSync(${JSON.stringify(ics)}, 'utf8')); console.log(result.ok ? result.value.method : result.error);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 15_000 },
    );
    expect(stdout.trim()).toBe('CANCEL');
  });

  it('fails queued parses when closed', async () => {
    const parser = createCalendarParser();
    const pending = parser.parse(fixture('google-reply.ics'));
    await parser.close();
    expect(await pending).toEqual({ ok: false, error: 'the iCalendar parser is closed', unreadable: false });
    expect(await parser.parse('x')).toEqual({ ok: false, error: 'the iCalendar parser is closed', unreadable: false });
  });
});
