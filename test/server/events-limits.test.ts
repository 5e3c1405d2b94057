import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { iso, utc } from '../helpers/calendar.js';

const DOMAIN = 'limits.agentpost.localhost';
const EMAIL = `planner@${DOMAIN}`;

describe('limits on events over the API (nylas SDK)', () => {
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Limits', domain_address: DOMAIN },
    });
    grantId = (
      await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email: EMAIL } } })
    ).data.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  const create = (requestBody: Record<string, unknown>) =>
    service.nylas.events.create({
      identifier: grantId,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: { title: 'Limit', ...requestBody } as never,
    });

  it.each([
    [
      'a start in 2200',
      { startTime: utc('2200-01-01T00:00:00Z'), endTime: utc('2200-01-01T01:00:00Z') },
      'when.start_time',
    ],
    [
      'an end in the year 9999',
      { startTime: utc('2025-06-01T10:00:00Z'), endTime: utc('9999-12-31T00:00:00Z') },
      'when.end_time',
    ],
    ['a moment far in the future', { time: 99_999_999_999 }, 'when.time'],
    ['an all-day date in 2200', { date: '2200-01-01' }, 'when.date'],
    ['an all-day date in 1899', { date: '1899-12-31' }, 'when.date'],
  ])('refuses %s with 400 naming the field', async (_name, when, field) => {
    const error = await sdkError(create({ when }));
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain(field);
  });

  it('accepts the last second of 2199 and a date in 1900', async () => {
    const last = await create({
      when: { startTime: utc('2199-12-31T23:00:00Z'), endTime: utc('2199-12-31T23:59:59Z') },
    });
    expect(last.data.when).toMatchObject({ endTime: utc('2199-12-31T23:59:59Z') });
    const early = await create({ when: { date: '1900-01-01' } });
    expect(early.data.when).toMatchObject({ date: '1900-01-01' });
  });

  it('keeps COUNT=2000000000 and UNTIL=99991231 as given, and expands them in bounded time up to the horizon', async () => {
    const daily = await create({
      when: { startTime: utc('2025-01-01T09:00:00Z'), endTime: utc('2025-01-01T09:30:00Z') },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=2000000000'],
    });
    const monthly = await create({
      when: { startTime: utc('2025-01-01T12:00:00Z'), endTime: utc('2025-01-01T12:30:00Z') },
      recurrence: ['RRULE:FREQ=MONTHLY;BYMONTHDAY=1,15;UNTIL=99991231T000000Z'],
    });
    expect(daily.data.recurrence).toEqual(['RRULE:FREQ=DAILY;COUNT=2000000000']);
    expect(monthly.data.recurrence).toEqual(['RRULE:FREQ=MONTHLY;BYMONTHDAY=1,15;UNTIL=99991231T000000Z']);

    const list = async (from: string, to: string) => {
      const started = performance.now();
      const page = await service.nylas.events.list({
        identifier: grantId,
        queryParams: {
          calendarId: 'primary',
          start: String(utc(from)),
          end: String(utc(to)),
          expandRecurring: true,
          limit: 200,
        },
      });
      return {
        elapsed: performance.now() - started,
        starts: page.data
          .filter((event) => event.masterEventId)
          .map((event) => iso((event.when as { startTime: number }).startTime)),
      };
    };
    // Within the horizon (100 years after the start): occurrences, found quickly.
    const late = await list('2124-12-01T00:00:00Z', '2124-12-31T00:00:00Z');
    expect(late.starts).toContain('2124-12-15T09:00:00Z');
    expect(late.starts).toContain('2124-12-15T12:00:00Z');
    expect(late.elapsed).toBeLessThan(3_000);
    // Past the horizon: none, however far COUNT and UNTIL reach.
    const beyond = await list('2125-06-01T00:00:00Z', '2125-07-01T00:00:00Z');
    expect(beyond.starts).toEqual([]);
    expect(beyond.elapsed).toBeLessThan(3_000);
  });

  it('refuses an expand_recurring window longer than 366 days with 400 naming end', async () => {
    const error = await sdkError(
      service.nylas.events.list({
        identifier: grantId,
        queryParams: {
          calendarId: 'primary',
          start: String(utc('2025-01-01T00:00:00Z')),
          end: String(utc('2027-01-01T00:00:00Z')),
          expandRecurring: true,
        },
      }),
    );
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain('end: with expand_recurring the window may span at most 366 days');
    // A year is fine, and so is a long window without expansion.
    const year = await service.nylas.events.list({
      identifier: grantId,
      queryParams: {
        calendarId: 'primary',
        start: String(utc('2025-01-01T00:00:00Z')),
        end: String(utc('2026-01-01T00:00:00Z')),
        expandRecurring: true,
        limit: 5,
      },
    });
    expect(year.data.length).toBeGreaterThan(0);
    const series = await service.nylas.events.list({
      identifier: grantId,
      queryParams: {
        calendarId: 'primary',
        start: String(utc('2025-01-01T00:00:00Z')),
        end: String(utc('2199-01-01T00:00:00Z')),
      },
    });
    expect(series.data.length).toBeGreaterThan(0);
  });
});
