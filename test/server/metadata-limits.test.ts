/**
 * Metadata follows Nylas v3's limits wherever it is accepted (sends, drafts, messages, calendars, events): flat
 * string pairs, at most 50 keys of up to 40 characters, values of up to 500 characters. Anything else is a 400
 * that names the limit. Deeply nested JSON (5,000 levels and more) is a 400 on every face, never a stack overflow.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'metadata.agentpost.localhost';

/** A JSON text of `levels` objects nested in one another, built without recursion. */
function nestedJson(levels: number): string {
  return `${'{"a":'.repeat(levels)}"deep"${'}'.repeat(levels)}`;
}

/** A JSON request body with `metadata` spliced in verbatim (JSON.stringify itself would overflow). */
function withMetadata(fields: Record<string, unknown>, metadataJson: string): string {
  const others = JSON.stringify(fields).slice(1, -1);
  return `{${others}${others ? ',' : ''}"metadata":${metadataJson}}`;
}

const manyKeys = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [`key${index}`, 'value']));

describe('metadata limits', () => {
  let service: TestService;
  let grantId: string;
  let messageId: string;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, `agent@${DOMAIN}`);
    // The SDK's draft types have no metadata (Nylas' API does): a plain request.
    const draft = await request(service.url, 'POST', `/v3/grants/${grantId}/drafts`, {
      key: service.apiKey,
      body: { subject: 'seed', body: 'hi', metadata: { campaign: 'spring' } },
    });
    expect(draft.body.data.metadata).toEqual({ campaign: 'spring' });
    await service.core.mail.inbound.deliverInbound({
      rawMime: Buffer.from(
        `From: a@example.com\r\nTo: agent@${DOMAIN}\r\nSubject: in\r\nMessage-ID: <in-1@example.com>\r\n\r\nhello\r\n`,
      ),
      envelope: { mailFrom: 'a@example.com', rcptTo: [`agent@${DOMAIN}`] },
    });
    messageId = (await service.nylas.messages.list({ identifier: grantId })).data[0]!.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Every route that takes metadata: method, path and the other fields of a valid body. */
  const routes = (): [string, string, string, Record<string, unknown>][] => [
    [
      'send',
      'POST',
      `/v3/grants/${grantId}/messages/send`,
      { to: [{ email: 'to@example.com' }], subject: 's', body: 'b' },
    ],
    ['create draft', 'POST', `/v3/grants/${grantId}/drafts`, { subject: 's', body: 'b' }],
    ['update message', 'PUT', `/v3/grants/${grantId}/messages/${messageId}`, {}],
    ['create calendar', 'POST', `/v3/grants/${grantId}/calendars`, { name: 'Cal' }],
    [
      'create event',
      'POST',
      `/v3/grants/${grantId}/events?calendar_id=primary`,
      { title: 'E', when: { start_time: 1_900_000_000, end_time: 1_900_003_600 } },
    ],
  ];

  it.each([5_000, 100_000])(
    'answers 400, not 500, to metadata nested %i levels deep on every route that takes it',
    async (levels) => {
      for (const [name, method, path, fields] of routes()) {
        const response = await request(service.url, method, path, {
          key: service.apiKey,
          body: withMetadata(fields, nestedJson(levels)),
        });
        expect(response.status, name).toBe(400);
        expect(isErrorEnvelope(response.body), name).toBe(true);
        expect(response.body.error.type).toBe('invalid_request_error');
        expect(response.body.error.message, name).toContain('nested more than 64 levels');
      }
    },
  );

  it('answers 400 to one level of nesting, naming the flat-string rule', async () => {
    for (const [name, method, path, fields] of routes()) {
      const response = await request(service.url, method, path, {
        key: service.apiKey,
        body: { ...fields, metadata: { team: { name: 'red' } } },
      });
      expect(response.status, name).toBe(400);
      expect(response.body.error.message, name).toContain(
        'metadata.team: metadata values must be strings of at most 500 characters',
      );
    }
  });

  it('answers 400 to 51 keys, to a 41-character key and to a 501-character value, through the SDK', async () => {
    const update = (metadata: Record<string, string>) =>
      sdkError(service.nylas.messages.update({ identifier: grantId, messageId, requestBody: { metadata } }));
    const tooMany = await update(manyKeys(51));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.message).toContain('metadata has at most 50 keys');
    const longKey = await update({ ['k'.repeat(41)]: 'v' });
    expect(longKey.statusCode).toBe(400);
    expect(longKey.message).toContain('metadata keys are 1 to 40 characters');
    const longValue = await update({ key: 'v'.repeat(501) });
    expect(longValue.statusCode).toBe(400);
    expect(longValue.message).toContain('metadata values are at most 500 characters');

    const event = await sdkError(
      service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId: 'primary' },
        requestBody: { title: 'E', when: { startTime: 1_900_000_000, endTime: 1_900_003_600 }, metadata: manyKeys(51) },
      }),
    );
    expect(event.statusCode).toBe(400);
    expect(event.message).toContain('metadata has at most 50 keys');
    const calendar = await sdkError(
      service.nylas.calendars.create({
        identifier: grantId,
        requestBody: { name: 'Cal', metadata: { key: 'v'.repeat(501) } },
      }),
    );
    expect(calendar.statusCode).toBe(400);
    const message = await sdkError(
      service.nylas.messages.update({ identifier: grantId, messageId, requestBody: { metadata: { count: 3 } } }),
    );
    expect(message.statusCode).toBe(400);
    expect(message.message).toContain('metadata values must be strings');
  });

  it('accepts exactly the limits: 50 keys of 40 characters with 500-character values', async () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, index) => [`${String(index).padStart(2, '0')}${'k'.repeat(38)}`, 'v'.repeat(500)]),
    );
    const updated = await service.nylas.messages.update({ identifier: grantId, messageId, requestBody: { metadata } });
    expect(updated.data.metadata).toEqual(metadata);
  });

  it('answers 400 to deep JSON in any other field (grant settings are stored as given)', async () => {
    const body = `{"provider":"nylas","settings":{"email":"deep@${DOMAIN}","extra":${nestedJson(5_000)}}}`;
    const response = await request(service.url, 'POST', '/v3/connect/custom', { key: service.apiKey, body });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('nested more than 64 levels');
  });

  it('answers deep metadata over MCP with a tool error, and the service keeps serving', async () => {
    // Raw JSON-RPC: the MCP client would overflow its own stack serialising such arguments.
    const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_draft","arguments":{"grant_id":"${grantId}","subject":"s","metadata":${nestedJson(5_000)}}}}`;
    const response = await request(service.url, 'POST', '/mcp', {
      key: service.apiKey,
      body: call,
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(response.status).toBe(200);
    expect(response.body.result.isError).toBe(true);
    expect(JSON.stringify(response.body.result.content)).toContain('metadata values must be strings');

    const client = new Client({ name: 'metadata-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    const flat = await client.callTool({
      name: 'create_draft',
      arguments: { grant_id: grantId, subject: 's', metadata: { team: { name: 'red' } } },
    });
    expect(flat.isError).toBe(true);
    expect(JSON.stringify(flat.content)).toContain('metadata values must be strings');
    await client.close();
    expect((await service.nylas.messages.find({ identifier: grantId, messageId })).data.id).toBe(messageId);
  });
});
