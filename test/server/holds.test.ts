/**
 * Tentative holds over /v3 (issue 40, item 5): create, read, release through HTTP; a key scoped to another grant
 * sees the organizer's hold as a 404 everywhere and cannot hold for a grant it does not reach.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'holds-http.agentpost.localhost';
const ORGANIZER = `organizer@${DOMAIN}`;
const OTHER = `other@${DOMAIN}`;
const HOUR = 3600;
type Json = Record<string, unknown>;

describe('tentative holds over /v3', () => {
  let service: TestService;
  let organizer: string;
  let other: string;
  let scoped: string;
  const start = Math.floor(Date.now() / 1000 / HOUR) * HOUR + 7 * 24 * HOUR;
  const slot = { start_time: start, end_time: start + HOUR };
  const call = (method: string, path: string, key: string, body?: Json) =>
    request(service.url, method, path, { key, ...(body ? { body } : {}) });
  const busy = async () => {
    const answer = await call('POST', `/v3/grants/${organizer}/calendars/free-busy`, service.apiKey, {
      start_time: start,
      end_time: start + 4 * HOUR,
      emails: [ORGANIZER],
    });
    expect(answer.status, answer.text).toBe(200);
    return (answer.body.data as { time_slots: unknown[] }[])[0]!.time_slots.length;
  };

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    await call('POST', '/v3/admin/domains', service.apiKey, { name: 'Holds', domain_address: DOMAIN });
    const grant = async (email: string) =>
      (await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } })).data
        .id;
    organizer = await grant(ORGANIZER);
    other = await grant(OTHER);
    const made = await call('POST', '/v3/api-keys', service.apiKey, {
      name: 'other only',
      scope: { grant_ids: [other] },
      permissions: ['calendar.read', 'calendar.write'],
    });
    expect(made.status, made.text).toBe(201);
    scoped = (made.body.data as { key: string }).key;
  });
  afterAll(async () => {
    await service?.close();
  });

  it('holds, reads and releases over HTTP; a key scoped outside the organizer grant gets 404s', async () => {
    const created = await call('POST', '/v3/calendars/holds', service.apiKey, {
      grant_id: organizer,
      participants: [{ email: OTHER }],
      slots: [slot],
      ttl_seconds: 600,
    });
    expect(created.status, created.text).toBe(200);
    const hold = created.body.data as Json;
    expect(hold).toMatchObject({ object: 'hold', status: 'held', grant_id: organizer, slots: [slot] });
    expect(await busy()).toBe(1);

    for (const [method, path, body] of [
      ['GET', `/v3/calendars/holds/${hold.hold_id as string}`],
      ['POST', `/v3/calendars/holds/${hold.hold_id as string}/confirm`, { ...slot, title: 'Not yours' }],
      ['DELETE', `/v3/calendars/holds/${hold.hold_id as string}`],
    ] as [string, string, Json?][]) {
      const answer = await call(method, path, scoped, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(404);
      expect(answer.body).toMatchObject({ error: { type: 'not_found_error' } });
    }
    const outside = await call('POST', '/v3/calendars/holds', scoped, {
      grant_id: organizer,
      participants: [{ email: OTHER }],
      slots: [slot],
    });
    expect(outside.status, outside.text).toBe(404);
    expect(await busy()).toBe(1);

    const tooMany = await call('POST', '/v3/calendars/holds', service.apiKey, {
      grant_id: organizer,
      participants: [{ email: OTHER }],
      slots: Array.from({ length: 11 }, (_, index) => ({
        start_time: start + index * HOUR,
        end_time: start + (index + 1) * HOUR,
      })),
    });
    expect(tooMany.status, tooMany.text).toBe(400);

    const released = await call('DELETE', `/v3/calendars/holds/${hold.hold_id as string}`, service.apiKey);
    expect(released.status, released.text).toBe(200);
    expect(await busy()).toBe(0);
    const read = await call('GET', `/v3/calendars/holds/${hold.hold_id as string}`, service.apiKey);
    expect(read.body.data).toMatchObject({ status: 'released' });
  });
});
