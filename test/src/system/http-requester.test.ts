/**
 * The default webhook HTTP client (src/system/http-requester.ts): connections are kept alive and reused, and a
 * reused connection still goes to the address checked for the request that uses it (one pool per origin and
 * checked address), never to another address of the same name.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpRequester } from '../../../src/system/http-requester.js';

describe('webhook HTTP client', () => {
  let server: Server;
  let port: number;
  /** Per request: the local address the server saw it on (the address the client connected to). */
  const seen: string[] = [];
  let connections = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.socket.localAddress ?? '');
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('ok');
      });
    });
    server.on('connection', () => {
      connections += 1;
    });
    // All of 127.0.0.0/8 is loopback on Linux: one server answers on 127.0.0.1 and 127.0.0.2.
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (http: ReturnType<typeof createNodeHttpRequester>, address: string) =>
    http({
      url: new URL(`http://hooks.example.test:${port}/hook`),
      address: { address, family: 4 },
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{}'),
      timeoutMs: 5_000,
      maxResponseBytes: 1024,
    });

  it('reuses kept-alive connections, one pool per checked address, each connecting to its own address only', async () => {
    const http = createNodeHttpRequester();
    try {
      seen.length = 0;
      connections = 0;
      for (let round = 0; round < 5; round += 1) {
        expect((await post(http, '127.0.0.1')).status).toBe(200);
        expect((await post(http, '127.0.0.2')).status).toBe(200);
      }
      // The name now "resolves" elsewhere: the next requests go there, over the other pool.
      expect(seen).toEqual(Array.from({ length: 5 }, () => ['127.0.0.1', '127.0.0.2']).flat());
      expect(connections).toBe(2);
      expect(http.pools().sort()).toEqual([
        `http://hooks.example.test:${port} 127.0.0.1`,
        `http://hooks.example.test:${port} 127.0.0.2`,
      ]);

      // Concurrent requests open at most one connection each, and later ones reuse them.
      connections = 0;
      await Promise.all(Array.from({ length: 8 }, () => post(http, '127.0.0.1')));
      const opened = connections;
      expect(opened).toBeLessThanOrEqual(8);
      await Promise.all(Array.from({ length: 8 }, () => post(http, '127.0.0.1')));
      expect(connections).toBe(opened);
    } finally {
      http.close();
    }
  });

  it('still delivers after the receiver closed the kept-alive connection while it was idle', async () => {
    const http = createNodeHttpRequester();
    try {
      expect((await post(http, '127.0.0.1')).status).toBe(200);
      // The receiver drops its idle connections (as a server does at its keep-alive timeout).
      server.closeIdleConnections();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await post(http, '127.0.0.1')).status).toBe(200);
    } finally {
      http.close();
    }
  });

  it('without keep-alive, opens one connection per request', async () => {
    const http = createNodeHttpRequester({ keepAlive: false });
    connections = 0;
    for (let round = 0; round < 3; round += 1) expect((await post(http, '127.0.0.1')).status).toBe(200);
    expect(connections).toBe(3);
    expect(http.pools()).toEqual([]);
  });
});
