/**
 * The specification's literal edges (issue 23 part 6): `/v3` routes with a trailing slash, the additional-calendar
 * cap per application plan, rule conditions outside the sender and recipient fields, the beta marking of Agent
 * Accounts in the OpenAPI document, and the deprecation headers of a deprecated operation.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineOperation, type AnyOperation } from '../../src/index.js';
import { bindOperation } from '../../server/bind-operation.js';
import { buildOpenApiDocument } from '../../server/openapi.js';
import { operations } from '../../src/index.js';
import type { AppEnv } from '../../server/types.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

describe("the specification's edges", () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let grant: string;

  beforeAll(async () => {
    service = await startTestService({
      env: {
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_MAX_CALENDARS_TRIAL: '1',
        AGENTPOST_MAX_CALENDARS_PRODUCTION: '2',
      },
    });
    receiver = await startReceiver();
    grant = await createMailbox(service, 'edges@edges.agentpost.localhost');
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
  });

  describe('every /v3 route answers with or without a trailing slash', () => {
    it('POST /v3/webhooks/ creates a webhook, which the nylas SDK then finds and lists', async () => {
      // The SDK always writes `/v3/webhooks`; the specification's spelling with the slash is sent as is.
      const raw = await request(service.url, 'POST', '/v3/webhooks/', {
        key: service.apiKey,
        body: { trigger_types: ['grant.updated'], webhook_url: receiver.url },
      });
      expect(raw.status).toBe(200);
      expect(raw.body.data).toMatchObject({
        status: 'active',
        trigger_types: ['grant.updated'],
        webhook_secret: expect.any(String),
      });
      expect(receiver.challenges).toHaveLength(1);
      const found = await service.nylas.webhooks.find({ webhookId: raw.body.data.id });
      expect(found.data).toMatchObject({
        id: raw.body.data.id,
        webhookUrl: receiver.url,
        triggerTypes: ['grant.updated'],
      });
      expect((await service.nylas.webhooks.list()).data.map((webhook) => webhook.id)).toEqual([raw.body.data.id]);
      // And through the slashed path of one webhook: update, then delete.
      const updated = await request(service.url, 'PUT', `/v3/webhooks/${raw.body.data.id}/`, {
        key: service.apiKey,
        body: { description: 'slashed' },
      });
      expect(updated.body.data).toMatchObject({ description: 'slashed' });
      expect(
        (await request(service.url, 'DELETE', `/v3/webhooks/${raw.body.data.id}/`, { key: service.apiKey })).status,
      ).toBe(200);
      expect((await service.nylas.webhooks.list()).data).toEqual([]);
    });

    it('answers a sample of other routes the same with the slash, and leaves other paths exact', async () => {
      for (const path of [
        '/v3/grants',
        `/v3/grants/${grant}`,
        `/v3/grants/${grant}/messages`,
        `/v3/grants/${grant}/folders`,
        `/v3/grants/${grant}/calendars`,
        '/v3/admin/domains',
        '/v3/webhooks',
        '/v3/webhooks/ip-addresses',
      ]) {
        const plain = await request(service.url, 'GET', path, { key: service.apiKey });
        const slashed = await request(service.url, 'GET', `${path}/`, { key: service.apiKey });
        expect(plain.status, path).toBe(200);
        expect(slashed.status, `${path}/`).toBe(200);
        expect(slashed.body.data, `${path}/`).toEqual(plain.body.data);
      }
      const drafted = await request(service.url, 'POST', `/v3/grants/${grant}/drafts/`, {
        key: service.apiKey,
        body: { subject: 'Slash', body: 'x' },
      });
      expect(drafted.status).toBe(200);
      const deleted = await request(service.url, 'DELETE', `/v3/grants/${grant}/drafts/${drafted.body.data.id}/`, {
        key: service.apiKey,
      });
      expect(deleted.status).toBe(200);
      // Unknown routes stay 404 in the Nylas error shape; two slashes are not one; paths outside /v3 keep their spelling.
      expect((await request(service.url, 'GET', '/v3/nothing-here/', { key: service.apiKey })).status).toBe(404);
      expect((await request(service.url, 'GET', '/v3/grants//', { key: service.apiKey })).status).toBe(404);
      expect((await request(service.url, 'GET', '/livez')).status).toBe(200);
      expect((await request(service.url, 'GET', '/livez/')).status).toBe(404);
      // Authentication still applies to the slashed path.
      expect((await request(service.url, 'GET', '/v3/grants/')).status).toBe(401);
    });
  });

  describe("the additional-calendar cap follows the application's plan", () => {
    const addCalendars = async (nylas: TestService['nylas'], identifier: string, count: number) => {
      for (let index = 0; index < count; index++)
        await nylas.calendars.create({ identifier, requestBody: { name: `Extra ${index}` } });
    };

    it('allows AGENTPOST_MAX_CALENDARS_TRIAL on a trial application and AGENTPOST_MAX_CALENDARS_PRODUCTION on a production one', async () => {
      for (const [plan, cap] of [
        ['trial', 1],
        ['production', 2],
      ] as const) {
        const { apiKey } = await service.core.accounts.applications.createApplication({ name: `A ${plan}`, plan });
        const nylas = service.client(apiKey);
        const id = await createMailbox({ url: service.url, apiKey, nylas }, `cal@${plan}-cal.agentpost.localhost`);
        await addCalendars(nylas, id, cap);
        const refused = await sdkError(
          nylas.calendars.create({ identifier: id, requestBody: { name: 'One too many' } }),
        );
        expect(refused.statusCode).toBe(400);
        expect(refused.message).toContain(
          `the most its application's ${plan} plan allows (AGENTPOST_MAX_CALENDARS_${plan.toUpperCase()}=${cap})`,
        );
        const listed = await nylas.calendars.list({ identifier: id });
        expect(listed.data.filter((calendar) => !calendar.isPrimary)).toHaveLength(cap);
      }
    });
  });

  describe('rule conditions name sender and recipient fields only', () => {
    it.each([
      [
        'an attachment field',
        { field: 'attachment.name', operator: 'contains', value: '.exe' },
        /"attachment\.name" is not a condition field/,
      ],
      [
        'the subject',
        { field: 'subject', operator: 'contains', value: 'invoice' },
        /"subject" is not a condition field/,
      ],
      [
        'an extra attachment key',
        { field: 'from.domain', operator: 'is', value: 'example.com', attachment: { type: 'application/zip' } },
        /a condition has field, operator and value only \(not attachment\)/,
      ],
    ])('answers 400 for %s, saying attachment control lives on policies', async (_what, condition, message) => {
      const error = await sdkError(
        service.nylas.rules.create({
          requestBody: {
            name: 'Attachments',
            match: { conditions: [condition as never] },
            actions: [{ type: 'block' }],
          } as never,
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(message);
      expect(error.message).toContain('attachment control (size, count, MIME types) lives on policies');
      expect((await service.nylas.rules.list()).data).toEqual([]);
    });
  });

  it('marks the Agent Account operations beta in the OpenAPI document, and nothing else', async () => {
    const answer = await request(service.url, 'GET', '/v3/openapi.json');
    const document = answer.body as {
      paths: Record<
        string,
        Record<string, { operationId: string; 'x-beta'?: boolean; description: string; deprecated?: boolean }>
      >;
    };
    const beta = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods)
        .filter((operation) => operation['x-beta'] === true)
        .map((operation) => operation.operationId),
    );
    expect(beta.sort()).toEqual([
      'create_agent_account',
      'create_domain',
      'delete_domain',
      'get_domain',
      'get_domain_verification_info',
      'list_domains',
      'update_domain',
      'verify_domain',
    ]);
    expect(document.paths['/v3/connect/custom']!.post!.description).toMatch(/^Beta \(Agent Accounts are in beta/);
    // Nothing is deprecated today.
    expect(
      Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .some((operation) => operation.deprecated),
    ).toBe(false);
  });
});

describe('a deprecated operation', () => {
  const deprecated = defineOperation({
    name: 'old_ping',
    title: 'Old ping',
    description: 'Answers pong.',
    input: z.object({ fail: z.enum(['yes', 'no']).optional() }),
    output: z.object({ pong: z.boolean() }),
    hints: { readOnly: true },
    http: { method: 'GET', path: '/old-ping' },
    tool: false,
    deprecation: { since: '2027-01-31', sunset: '2027-07-31', note: 'Use /ping' },
    run: async (_core, input) => {
      if (input.fail === 'yes') throw new Error('boom');
      return { pong: true };
    },
  }) as unknown as AnyOperation;

  it('answers with Deprecation and Sunset headers, and OpenAPI says deprecated with its dates', async () => {
    const app = new Hono<AppEnv>();
    app.use('*', async (c, next) => {
      c.set('requestId', 'req-1');
      c.set('principal', { applicationId: 'app', via: 'local' } as never);
      // No service behind it: only the access log, which every call on a face is recorded in, and the application's
      // clock (a production application: none of a test clock's), which every call runs on, are needed.
      c.set('core', {
        accessLog: { record: () => undefined },
        accounts: { applications: { testClockOf: async () => undefined } },
      } as never);
      await next();
    });
    bindOperation(app, deprecated, [deprecated]);
    const response = await app.request('/old-ping');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ request_id: 'req-1', data: { pong: true } });
    expect(response.headers.get('deprecation')).toBe(`@${Date.parse('2027-01-31') / 1000}`);
    expect(response.headers.get('sunset')).toBe('Sat, 31 Jul 2027 00:00:00 GMT');

    const document = buildOpenApiDocument([...operations, deprecated], { version: 'test' }) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(document.paths['/v3/old-ping']!.get).toMatchObject({
      deprecated: true,
      'x-deprecation-date': '2027-01-31',
      'x-sunset-date': '2027-07-31',
      'x-deprecation-note': 'Use /ping',
    });
    expect(document.paths['/v3/grants']!.get!.deprecated).toBeUndefined();
  });
});
