/**
 * Request limits of the HTTP server, each answered in the shape of the face that was asked (the Nylas envelope on
 * /v3, a JSON-RPC error on /mcp) and never with a reset connection: long paths and ids, huge headers (Node's own
 * 431/414, answered by our clientError handler), over-size /mcp bodies, malformed requests, and clients that send
 * their headers slowly (cut off after AGENTPOST_HTTP_HEADERS_TIMEOUT).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** True when a body is a JSON-RPC error `{jsonrpc: "2.0", error: {code, message}, id: null}`. */
function isJsonRpcError(body: unknown): boolean {
  const value = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown } | undefined;
  return (
    value?.jsonrpc === '2.0' &&
    typeof value.error?.code === 'number' &&
    typeof value.error.message === 'string' &&
    value.id === null
  );
}

/** A raw TCP connection: what it received, and when the server closed it. */
function rawConnection(port: number): { socket: Socket; received: () => string; closed: Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const started = Date.now();
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  return { socket, received: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/** The JSON body of a raw HTTP/1.1 response. */
function bodyOf(response: string): unknown {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

describe('HTTP request limits', () => {
  let service: TestService;
  let port: number;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_HTTP_HEADERS_TIMEOUT: '1s' } });
    port = Number(new URL(service.url).port);
    grantId = await createMailbox(service, 'limits@limits.agentpost.localhost');
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers a 100 KB id in the path with a 414 in the Nylas shape, not a reset', async () => {
    const response = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${'a'.repeat(100_000)}`, {
      key: service.apiKey,
    });
    expect(response.status).toBe(414);
    expect(isErrorEnvelope(response.body)).toBe(true);
    expect(response.body.error.type).toBe('request_too_large');
    expect(response.body.error.message).toContain('16384');
    // The service is still serving.
    expect((await request(service.url, 'GET', '/v3/grants', { key: service.apiKey })).status).toBe(200);
  });

  it('answers ids and path segments over their limits with 400 in the Nylas shape', async () => {
    const segment = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${'a'.repeat(1_000)}`, {
      key: service.apiKey,
    });
    expect(segment.status).toBe(400);
    expect(isErrorEnvelope(segment.body)).toBe(true);
    expect(segment.body.error.message).toContain('at most 320 are accepted');
    const id = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${'a'.repeat(300)}`, {
      key: service.apiKey,
    });
    expect(id.status).toBe(400);
    expect(id.body.error.message).toContain('message_id');
    const path = await request(service.url, 'GET', `/v3/${'abc/'.repeat(1_000)}`, { key: service.apiKey });
    expect(path.status).toBe(400);
    expect(path.body.error.message).toContain('at most 2048 are accepted');
  });

  it('answers a huge header with 431: the Nylas envelope on /v3, a JSON-RPC error on /mcp', async () => {
    const headers = { 'x-padding': 'p'.repeat(100_000) };
    const v3 = await request(service.url, 'GET', '/v3/grants', { key: service.apiKey, headers });
    expect(v3.status).toBe(431);
    expect(isErrorEnvelope(v3.body)).toBe(true);
    expect(v3.body.error.type).toBe('request_too_large');

    const mcp = await request(service.url, 'POST', '/mcp', {
      key: service.apiKey,
      headers: { ...headers, accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.status).toBe(431);
    expect(isJsonRpcError(mcp.body)).toBe(true);
    expect(mcp.body.error.code).toBe(-32600);
    expect(mcp.body.error.data.type).toBe('request_too_large');
  });

  it('answers an over-size /mcp body with 413 in the JSON-RPC shape', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_folders', arguments: { padding: 'x'.repeat(5 * 1024 * 1024) } },
    });
    const response = await request(service.url, 'POST', '/mcp', {
      key: service.apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body,
    });
    expect(response.status).toBe(413);
    expect(isJsonRpcError(response.body)).toBe(true);
    expect(response.body.error.message).toContain('4 MB');
  });

  it('answers /mcp errors before the transport (authentication) in the JSON-RPC shape, and still serves JSON-RPC parse errors', async () => {
    const unauthorized = await request(service.url, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(unauthorized.status).toBe(401);
    expect(isJsonRpcError(unauthorized.body)).toBe(true);
    expect(unauthorized.body.error.data.type).toBe('unauthorized');
    const garbled = await request(service.url, 'POST', '/mcp', {
      key: service.apiKey,
      body: '{"jsonrpc":',
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(garbled.status).toBe(400);
    expect(garbled.body.error.code).toBe(-32700);
  });

  it('answers a malformed request with 400 in the Nylas shape', async () => {
    const connection = rawConnection(port);
    connection.socket.write('GET /v3/grants HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    await connection.closed;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 400 /);
    expect(isErrorEnvelope(bodyOf(connection.received()))).toBe(true);
  });

  it('cuts off a client that sends its headers slowly after the header timeout, with a 408', async () => {
    const connection = rawConnection(port);
    connection.socket.write('GET /v3/grants HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // One header byte every 200 ms: the connection is never idle, but the headers never end.
    const trickle = setInterval(() => connection.socket.writable && connection.socket.write('X'), 200);
    const elapsed = await Promise.race([
      connection.closed,
      new Promise<number>((resolve) => setTimeout(() => resolve(-1), 8_000)),
    ]);
    clearInterval(trickle);
    connection.socket.destroy();
    expect(elapsed).toBeGreaterThan(0);
    expect(elapsed).toBeLessThan(4_000);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect((bodyOf(connection.received()) as { error: { type: string } }).error.type).toBe('request_timeout');
  });
});
