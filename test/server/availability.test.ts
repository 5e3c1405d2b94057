import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { eventTimeColumns } from '../../src/calendar/event-mapper.js';
import type { EventTime } from '../../src/calendar/event-time.js';
import { parseRecurrence } from '../../src/calendar/ical.js';
import { storedRange } from '../../src/calendar/recurrence.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../tools/mcp.js';
import { localExecutor } from '../../tools/executor.js';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const at = (iso: string) => Date.parse(iso) / 1000;
const DOMAIN = 'sched.agentpost.localhost';
const alice = `alice@${DOMAIN}`;
const bob = `bob@${DOMAIN}`;
const carol = `carol@${DOMAIN}`;

describe('free/busy and availability through the nylas SDK', () => {
  let service: TestService;
  const grantIds = new Map<string, string>();
  let outsiderEmail: string;
  let seq = 0;

  /** Stores an event row the way the events service does (range columns from the same helpers). */
  async function seed(
    email: string,
    when: EventTime,
    options: {
      recurrence?: string[];
      busy?: boolean;
      status?: 'confirmed' | 'maybe' | 'cancelled';
      participants?: { email: string; status: 'yes' | 'no' | 'maybe' | 'noreply' }[];
      metadata?: Record<string, string>;
      createdAt?: number;
      masterEventId?: string;
      originalStartTime?: number;
    } = {},
  ): Promise<string> {
    const grantId = grantIds.get(email)!;
    const calendar = await service.core.deps.db.orm.query.calendars.findFirst({
      where: and(eq(tables.calendars.grantId, grantId), eq(tables.calendars.isPrimary, true)),
    });
    const recurrence = options.recurrence ? parseRecurrence(options.recurrence, when) : undefined;
    if (recurrence && !recurrence.ok) throw new Error(recurrence.error);
    const range = storedRange(when, recurrence?.ok ? recurrence.value : null);
    const id = `evt_${++seq}`;
    await service.core.deps.db.write(async (tx) => {
      await tx.insert(tables.events).values({
        id,
        grantId,
        calendarId: calendar!.id,
        icalUid: `${id}@test`,
        ...eventTimeColumns(when),
        ...range,
        recurrence: options.recurrence ?? null,
        busy: options.busy ?? true,
        status: options.status ?? 'confirmed',
        participants: options.participants ?? [],
        metadata: options.metadata ?? null,
        masterEventId: options.masterEventId ?? null,
        originalStartTime: options.originalStartTime ?? null,
        createdAt: options.createdAt ?? 1_700_000_000,
        updatedAt: options.createdAt ?? 1_700_000_000,
      });
    });
    return id;
  }
  const span = (start: string, end: string, zone = 'UTC'): EventTime => ({
    kind: 'timespan',
    startTime: at(start),
    endTime: at(end),
    startTimezone: zone,
    endTimezone: zone,
  });

  beforeAll(async () => {
    service = await startTestService();
    const domain = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Scheduling', domain_address: DOMAIN },
    });
    expect(domain.status).toBe(200);
    for (const email of [alice, bob, carol]) {
      grantIds.set(
        email,
        (await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } }))
          .data.id,
      );
    }
    // A grant of another application: it exists, but not for this caller.
    const second = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    const otherDomain = await request(service.url, 'POST', '/v3/admin/domains', {
      key: second.apiKey,
      body: { name: 'Other', domain_address: 'other.agentpost.localhost' },
    });
    expect(otherDomain.status).toBe(200);
    outsiderEmail = 'dave@other.agentpost.localhost';
    await service
      .client(second.apiKey)
      .auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email: outsiderEmail } } });

    // Alice, Wednesday 2025-01-15 (UTC): two overlapping meetings, a cancelled one, a free one, a declined one.
    await seed(alice, span('2025-01-15T10:00:00Z', '2025-01-15T11:00:00Z'));
    await seed(alice, span('2025-01-15T10:30:00Z', '2025-01-15T11:30:00Z'));
    await seed(alice, span('2025-01-15T13:00:00Z', '2025-01-15T14:00:00Z'), { status: 'cancelled' });
    await seed(alice, span('2025-01-15T14:00:00Z', '2025-01-15T15:00:00Z'), { busy: false });
    await seed(alice, span('2025-01-15T15:00:00Z', '2025-01-15T16:00:00Z'), {
      participants: [{ email: alice, status: 'no' }],
    });
    // A tentative event: busy unless tentative_as_busy is false.
    await seed(alice, span('2025-01-15T16:00:00Z', '2025-01-15T16:30:00Z'), { status: 'maybe' });
    // Bob: a daily stand-up 09:00-09:15 New York time from Monday 13th, with the 15th's moved to 12:00-12:30 UTC.
    const standup = await seed(bob, span('2025-01-13T14:00:00Z', '2025-01-13T14:15:00Z', 'America/New_York'), {
      recurrence: ['RRULE:FREQ=DAILY;COUNT=10'],
    });
    await seed(bob, span('2025-01-15T12:00:00Z', '2025-01-15T12:30:00Z', 'America/New_York'), {
      masterEventId: standup,
      originalStartTime: at('2025-01-15T14:00:00Z'),
    });
    // Carol: an all-day event on the 16th.
    await seed(carol, { kind: 'date', date: '2025-01-16' });
    // Round-robin bookings (metadata key5 = group): bob booked last year, carol recently, alice never.
    await seed(bob, span('2025-02-01T10:00:00Z', '2025-02-01T11:00:00Z'), {
      metadata: { key5: 'onboarding' },
      createdAt: 1_600_000_000,
    });
    await seed(carol, span('2025-02-02T10:00:00Z', '2025-02-02T11:00:00Z'), {
      metadata: { key5: 'onboarding' },
      createdAt: 1_700_000_500,
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('getFreeBusy returns merged busy blocks per email, expands series, and reports unknown addresses inline', async () => {
    const response = await service.nylas.calendars.getFreeBusy({
      identifier: grantIds.get(alice)!,
      requestBody: {
        startTime: at('2025-01-15T00:00:00Z'),
        endTime: at('2025-01-16T00:00:00Z'),
        emails: [alice, bob, 'nobody@nowhere.test', outsiderEmail],
      },
    });
    expect(response.data).toEqual([
      {
        email: alice,
        object: 'free_busy',
        timeSlots: [
          {
            startTime: at('2025-01-15T10:00:00Z'),
            endTime: at('2025-01-15T11:30:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
          {
            startTime: at('2025-01-15T16:00:00Z'),
            endTime: at('2025-01-15T16:30:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
        ],
      },
      {
        email: bob,
        object: 'free_busy',
        // The moved instance replaces the 14:00 one on the 15th.
        timeSlots: [
          {
            startTime: at('2025-01-15T12:00:00Z'),
            endTime: at('2025-01-15T12:30:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
        ],
      },
      {
        email: 'nobody@nowhere.test',
        object: 'error',
        error: expect.stringContaining('not an Agent Account of this application'),
      },
      {
        email: outsiderEmail,
        object: 'error',
        error: expect.stringContaining('not an Agent Account of this application'),
      },
    ]);
    const withoutTentative = await service.nylas.calendars.getFreeBusy({
      identifier: alice,
      requestBody: {
        startTime: at('2025-01-15T00:00:00Z'),
        endTime: at('2025-01-16T00:00:00Z'),
        emails: [alice],
        tentativeAsBusy: false,
      },
    });
    expect(withoutTentative.data).toEqual([
      {
        email: alice,
        object: 'free_busy',
        timeSlots: [
          {
            startTime: at('2025-01-15T10:00:00Z'),
            endTime: at('2025-01-15T11:30:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
        ],
      },
    ]);
    // The next day: bob's stand-up at 14:00Z, carol's all-day event covers the whole UTC day, clipped to the window.
    const nextDay = await service.nylas.calendars.getFreeBusy({
      identifier: alice,
      requestBody: { startTime: at('2025-01-16T06:00:00Z'), endTime: at('2025-01-17T06:00:00Z'), emails: [bob, carol] },
    });
    expect(nextDay.data).toEqual([
      {
        email: bob,
        object: 'free_busy',
        timeSlots: [
          {
            startTime: at('2025-01-16T14:00:00Z'),
            endTime: at('2025-01-16T14:15:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
        ],
      },
      {
        email: carol,
        object: 'free_busy',
        timeSlots: [
          {
            startTime: at('2025-01-16T06:00:00Z'),
            endTime: at('2025-01-17T00:00:00Z'),
            status: 'busy',
            object: 'time_slot',
          },
        ],
      },
    ]);
  });

  it('getFreeBusy on a grant of another application is a 404, and a reversed window a 400', async () => {
    const foreign = await service.nylas.calendars
      .getFreeBusy({
        identifier: outsiderEmail,
        requestBody: { startTime: at('2025-01-15T00:00:00Z'), endTime: at('2025-01-16T00:00:00Z'), emails: [alice] },
      })
      .catch((error: unknown) => error);
    expect((foreign as NylasApiError).statusCode).toBe(404);
    const reversed = await service.nylas.calendars
      .getFreeBusy({
        identifier: alice,
        requestBody: { startTime: at('2025-01-16T00:00:00Z'), endTime: at('2025-01-15T00:00:00Z'), emails: [alice] },
      })
      .catch((error: unknown) => error);
    expect((reversed as NylasApiError).statusCode).toBe(400);
    expect((reversed as NylasApiError).message).toContain('end_time');
  });

  it('getAvailability finds collective slots with open hours and buffers, and explains the rest', async () => {
    const response = await service.nylas.calendars.getAvailability({
      requestBody: {
        startTime: at('2025-01-15T00:00:00Z'),
        endTime: at('2025-01-16T00:00:00Z'),
        durationMinutes: 60,
        intervalMinutes: 60,
        participants: [{ email: alice }, { email: bob }],
        availabilityRules: {
          buffer: { before: 0, after: 15 },
          defaultOpenHours: [
            { days: [1, 2, 3, 4, 5], timezone: 'Europe/London', start: '9:00', end: '17:00', exdates: [] },
          ],
        },
        explain: true,
      } as never,
    });
    const hour = (h: number) => at(`2025-01-15T${String(h).padStart(2, '0')}:00:00Z`);
    // 9 ok; 10, 11 alice busy until 11:30 (at 11:00 also the 15-minute buffer after the 10:00-11:00 meeting);
    // 12 bob's moved stand-up;
    // 13 ok (cancelled event); 14 ok (free event); 15 ok (declined); 16 alice tentative.
    expect(response.data.timeSlots).toEqual(
      [9, 13, 14, 15].map((h) => ({ emails: [alice, bob], startTime: hour(h), endTime: hour(h + 1) })),
    );
    expect(response.data.order).toEqual([]);
    const explanations = (
      response.data as unknown as {
        explanations: { startTime: number; reasons: { type: string; email?: string; eventIds?: string[] }[] }[];
      }
    ).explanations;
    expect(
      explanations.map((explanation) => [
        explanation.startTime,
        explanation.reasons.map((reason) => `${reason.type}:${reason.email}`),
      ]),
    ).toEqual([
      [hour(10), [`busy:${alice}`]],
      [hour(11), [`busy:${alice}`, `buffer:${alice}`]],
      [hour(12), [`busy:${bob}`]],
      [hour(16), [`busy:${alice}`]],
    ]);
    expect(explanations[0]!.reasons[0]!.eventIds).toEqual(['evt_1', 'evt_2']);
  });

  it('getAvailability rejects a participant that is not a grant of the calling application, naming it', async () => {
    const error = await service.nylas.calendars
      .getAvailability({
        requestBody: {
          startTime: at('2025-01-15T00:00:00Z'),
          endTime: at('2025-01-16T00:00:00Z'),
          durationMinutes: 30,
          participants: [{ email: alice }, { email: outsiderEmail }],
        },
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NylasApiError);
    expect((error as NylasApiError).statusCode).toBe(400);
    expect((error as NylasApiError).message).toContain(`participants[1].email: ${outsiderEmail}`);
  });

  it('getAvailability round-robin: order from key5 bookings, emails in that order', async () => {
    const response = await service.nylas.calendars.getAvailability({
      requestBody: {
        startTime: at('2025-01-15T09:00:00Z'),
        endTime: at('2025-01-15T12:00:00Z'),
        durationMinutes: 60,
        participants: [{ email: carol }, { email: bob }, { email: alice }],
        availabilityRules: { availabilityMethod: 'max-availability' as never, roundRobinEventId: 'onboarding' },
      },
    });
    expect(response.data.order).toEqual([alice, bob, carol]);
    expect(response.data.timeSlots).toEqual([
      { emails: [alice, bob, carol], startTime: at('2025-01-15T09:00:00Z'), endTime: at('2025-01-15T10:00:00Z') },
      { emails: [bob, carol], startTime: at('2025-01-15T10:00:00Z'), endTime: at('2025-01-15T11:00:00Z') },
      { emails: [bob, carol], startTime: at('2025-01-15T11:00:00Z'), endTime: at('2025-01-15T12:00:00Z') },
    ]);
  });

  it('validates the request body with messages that name the field', async () => {
    const response = await request(service.url, 'POST', '/v3/calendars/availability', {
      key: service.apiKey,
      body: {
        start_time: at('2025-01-15T00:00:00Z'),
        end_time: at('2025-01-16T00:00:00Z'),
        duration_minutes: 30,
        participants: [
          { email: alice, open_hours: [{ days: [1], timezone: 'Mars/Olympus', start: '9:00', end: '17:00' }] },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('participants.0.open_hours.0.timezone');
    const reversedHours = await request(service.url, 'POST', '/v3/calendars/availability', {
      key: service.apiKey,
      body: {
        start_time: at('2025-01-15T00:00:00Z'),
        end_time: at('2025-01-16T00:00:00Z'),
        duration_minutes: 30,
        participants: [{ email: alice, open_hours: [{ days: [1], timezone: 'UTC', start: '17:00', end: '9:00' }] }],
      },
    });
    expect(reversedHours.status).toBe(400);
    expect(reversedHours.body.error.message).toContain('participants.0.open_hours.0.end');
    const tooFine = await request(service.url, 'POST', '/v3/calendars/availability', {
      key: service.apiKey,
      body: {
        start_time: at('2025-01-01T00:00:00Z'),
        end_time: at('2025-03-01T00:00:00Z'),
        duration_minutes: 30,
        interval_minutes: 1,
        participants: [{ email: alice }],
      },
    });
    expect(tooFine.status).toBe(400);
    expect(tooFine.body.error.message).toContain('interval_minutes');
    const tooLong = await request(service.url, 'POST', '/v3/calendars/availability', {
      key: service.apiKey,
      body: {
        start_time: at('2025-01-01T00:00:00Z'),
        end_time: at('2025-06-01T00:00:00Z'),
        duration_minutes: 30,
        participants: [{ email: alice }],
      },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('end_time: the window may span at most 93 days');
  });

  it('the MCP tools find_availability and get_free_busy answer exactly as the HTTP API does', async () => {
    const principal = {
      applicationId: await service.core.accounts.applications.defaultApplicationId(),
      via: 'local' as const,
    };
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal) }).connect(serverTransport),
      client.connect(clientTransport),
    ]);
    const body = {
      start_time: at('2025-01-15T08:00:00Z'),
      end_time: at('2025-01-15T18:00:00Z'),
      duration_minutes: 45,
      interval_minutes: 25,
      participants: [{ email: alice }, { email: bob }],
      availability_rules: { buffer: { before: 10, after: 5 } },
      explain: true,
    };
    const viaMcp = await client.callTool({ name: 'find_availability', arguments: body });
    expect(viaMcp.isError).toBeFalsy();
    const viaHttp = await request(service.url, 'POST', '/v3/calendars/availability', { key: service.apiKey, body });
    expect(viaHttp.status).toBe(200);
    expect(viaMcp.structuredContent).toEqual(viaHttp.body.data);
    expect((viaHttp.body.data.time_slots as unknown[]).length).toBeGreaterThan(0);

    const freeBusyBody = {
      grant_id: alice,
      start_time: at('2025-01-15T00:00:00Z'),
      end_time: at('2025-01-16T00:00:00Z'),
      emails: [alice, bob],
    };
    const freeBusyMcp = await client.callTool({ name: 'get_free_busy', arguments: freeBusyBody });
    const freeBusyHttp = await request(service.url, 'POST', `/v3/grants/${alice}/calendars/free-busy`, {
      key: service.apiKey,
      body: freeBusyBody,
    });
    expect(freeBusyMcp.structuredContent).toEqual({ data: freeBusyHttp.body.data });
    await client.close();
  });
});
