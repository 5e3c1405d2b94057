/**
 * One server of bench/events.bench.ts, run as a child process (so that "across processes" is two real processes,
 * and each server's memory can be read from /proc):
 *   ours <database file> <roles>   the real service on that database with those roles (`http,smtp,worker`, `http`)
 *   bare                           Hono on @hono/node-server: `GET /stream` is Server-Sent Events, and each
 *                                  `POST /emit?count=N&size=S` writes N events of S bytes to every open stream, each
 *                                  carrying `sent_at` (epoch milliseconds with fractions) when it was written
 * Prints one JSON line `{ url, smtpPort? }` on stdout once listening; stops on SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { startService } from '../server/main.js';
import { loadConfig } from '../src/index.js';

const [mode, database, roles] = process.argv.slice(2);
const EVENTS_BENCH_KEY = 'agp_bench_key_for_the_default_application';

if (mode === 'bare') {
  const app = new Hono();
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const encoder = new TextEncoder();
  let seq = 0;
  app.get('/stream', () => {
    let self: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        self = controller;
        streams.add(controller);
        controller.enqueue(encoder.encode(': connected\n\n'));
      },
      cancel() {
        if (self) streams.delete(self);
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
  });
  app.post('/emit', (c) => {
    const size = Number(c.req.query('size') ?? 1500);
    const padding = 'x'.repeat(size);
    const sentAt = performance.timeOrigin + performance.now();
    seq += 1;
    const frame = encoder.encode(`id: ${seq}\ndata: ${JSON.stringify({ sent_at: sentAt, padding })}\n\n`);
    for (const stream of streams) stream.enqueue(frame);
    return c.text('ok');
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`),
  );
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
} else if (mode === 'ours' && database && roles) {
  const service = await startService(
    loadConfig({
      AGENTPOST_DATABASE_URL: `file:${database}`,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: EVENTS_BENCH_KEY,
      AGENTPOST_LOG_LEVEL: 'silent',
      AGENTPOST_ROLES: roles,
      AGENTPOST_RATE_LIMIT_APPLICATION: '0',
      AGENTPOST_RATE_LIMIT_GRANT: '0',
      AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
    }),
  );
  process.once('SIGTERM', () => void service.close().then(() => process.exit(0)));
  const started = service as unknown as { url?: string; smtpPort?: number };
  process.stdout.write(`${JSON.stringify({ url: started.url, smtpPort: started.smtpPort })}\n`);
} else {
  process.stderr.write('usage: events-server.ts bare | ours <database file> <roles>\n');
  process.exit(2);
}
