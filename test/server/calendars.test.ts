import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

const DOMAIN = 'cal.agentpost.localhost';

describe('calendars through the nylas SDK', () => {
  let service: TestService;
  let grantId: string;
  let otherGrantId: string;

  beforeAll(async () => {
    // A small cap, so the limit is reachable in a test.
    service = await startTestService({ env: { AGENTPOST_MAX_CALENDARS: '2' } });
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Cal', domain_address: DOMAIN },
    });
    grantId = (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: `owner@${DOMAIN}` }, name: 'Owner' } as never,
      })
    ).data.id;
    otherGrantId = (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: `other@${DOMAIN}` } },
      })
    ).data.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  it('lists the primary calendar every grant is created with', async () => {
    const listed = await service.nylas.calendars.list({ identifier: grantId });
    expect(listed.data).toEqual([
      {
        id: expect.any(String),
        grantId,
        object: 'calendar',
        name: 'Owner',
        description: null,
        location: null,
        timezone: 'UTC',
        readOnly: false,
        isOwnedByUser: true,
        isPrimary: true,
      },
    ]);
    const primary = await service.nylas.calendars.find({ identifier: grantId, calendarId: 'primary' });
    expect(primary.data.id).toBe(listed.data[0]!.id);
  });

  it('creates, finds, updates and filters calendars by metadata', async () => {
    const created = await service.nylas.calendars.create({
      identifier: grantId,
      requestBody: {
        name: 'Travel',
        description: 'Trips',
        location: 'Lisbon',
        timezone: 'Europe/Lisbon',
        metadata: { team: 'ops' },
      },
    });
    expect(created.data).toMatchObject({
      name: 'Travel',
      description: 'Trips',
      location: 'Lisbon',
      timezone: 'Europe/Lisbon',
      isPrimary: false,
      metadata: { team: 'ops' },
    });
    const updated = await service.nylas.calendars.update({
      identifier: grantId,
      calendarId: created.data.id,
      requestBody: { name: 'Trips', hexColor: '#0099EE', timezone: 'america/new_york' },
    });
    expect(updated.data).toMatchObject({
      id: created.data.id,
      name: 'Trips',
      hexColor: '#0099EE',
      timezone: 'America/New_York',
    });
    expect((await service.nylas.calendars.find({ identifier: grantId, calendarId: created.data.id })).data).toEqual(
      updated.data,
    );
    const filtered = await service.nylas.calendars.list({
      identifier: grantId,
      queryParams: { metadataPair: { team: 'ops' } },
    });
    expect(filtered.data.map((calendar) => calendar.id)).toEqual([created.data.id]);
    expect(
      (await service.nylas.calendars.list({ identifier: grantId, queryParams: { metadataPair: { team: 'sales' } } }))
        .data,
    ).toEqual([]);
  });

  it('rejects an unknown time zone, naming the field', async () => {
    const error = await sdkError(
      service.nylas.calendars.create({
        identifier: grantId,
        requestBody: { name: 'Bad', timezone: 'Mars/Olympus_Mons' },
      }),
    );
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain('timezone: not an IANA time zone');
  });

  it('caps additional calendars (400 past the cap) and keeps the primary while others exist', async () => {
    const second = await service.nylas.calendars.create({ identifier: grantId, requestBody: { name: 'Second' } });
    const third = await sdkError(
      service.nylas.calendars.create({ identifier: grantId, requestBody: { name: 'Third' } }),
    );
    expect(third.statusCode).toBe(400);
    expect(third.message).toContain('calendar limit reached');

    const primaryId = (await service.nylas.calendars.find({ identifier: grantId, calendarId: 'primary' })).data.id;
    const refused = await sdkError(service.nylas.calendars.destroy({ identifier: grantId, calendarId: primaryId }));
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toContain('cannot be deleted while the grant has 2 other calendar(s)');

    for (const calendar of (await service.nylas.calendars.list({ identifier: grantId })).data.filter(
      (item) => !item.isPrimary,
    )) {
      await service.nylas.calendars.destroy({ identifier: grantId, calendarId: calendar.id });
    }
    expect(
      (await sdkError(service.nylas.calendars.find({ identifier: grantId, calendarId: second.data.id }))).statusCode,
    ).toBe(404);
    // Alone, the primary can go; the next calendar becomes the primary.
    await service.nylas.calendars.destroy({ identifier: grantId, calendarId: primaryId });
    const next = await service.nylas.calendars.create({ identifier: grantId, requestBody: { name: 'Fresh' } });
    expect(next.data.isPrimary).toBe(true);
  });

  it("does not show one grant's calendars through another grant or another application", async () => {
    const mine = (await service.nylas.calendars.list({ identifier: grantId })).data[0]!;
    expect(
      (await sdkError(service.nylas.calendars.find({ identifier: otherGrantId, calendarId: mine.id }))).statusCode,
    ).toBe(404);
    const { apiKey } = await service.core.accounts.applications.createApplication({ name: 'Elsewhere', plan: 'trial' });
    expect((await sdkError(service.client(apiKey).calendars.list({ identifier: grantId }))).statusCode).toBe(404);
  });

  it('pages through calendars with next_cursor', async () => {
    await service.nylas.calendars.create({ identifier: otherGrantId, requestBody: { name: 'A' } });
    await service.nylas.calendars.create({ identifier: otherGrantId, requestBody: { name: 'B' } });
    const first = await request(service.url, 'GET', `/v3/grants/${otherGrantId}/calendars?limit=2`, {
      key: service.apiKey,
    });
    expect(first.body.data[0]).toMatchObject({ name: `other@${DOMAIN}`, is_primary: true });
    const second = await request(
      service.url,
      'GET',
      `/v3/grants/${otherGrantId}/calendars?limit=2&page_token=${first.body.next_cursor}`,
      { key: service.apiKey },
    );
    expect(second.body.data).toHaveLength(1);
    expect([first.body.data[1].name, second.body.data[0].name].sort()).toEqual(['A', 'B']);
    expect(second.body.next_cursor).toBeUndefined();
  });
});
