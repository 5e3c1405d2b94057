/**
 * One server of bench/read-path.bench.ts, run as a child process (so that it can be pinned to a core of its own):
 *   hello                    Hono's hello-world route, `GET /` → `c.text('Hello Hono!')`
 *   ceiling <payloads.json>  Hono answering `GET /v3/grants/:grant_id/messages` with `c.json(payload)`: the same
 *                            payload ours answers, already built (a map grant id → response body), serialised per request
 *   ours <database file>     the real service on that database (rate limits off, access log off, SMTP on)
 * Prints one JSON line `{ url, smtpPort? }` on stdout once listening; stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { startService } from '../server/main.js';
import { loadConfig } from '../src/index.js';
import { BENCH_API_KEY } from './read-path-seed.js';

const [mode, argument] = process.argv.slice(2);

function listen(app: Hono): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
    process.once('SIGTERM', () => server.close(() => process.exit(0)));
  });
}

if (mode === 'hello') {
  const app = new Hono();
  app.get('/', (c) => c.text('Hello Hono!'));
  process.stdout.write(`${JSON.stringify({ url: await listen(app) })}\n`);
} else if (mode === 'ceiling') {
  const payloads = JSON.parse(readFileSync(argument!, 'utf8')) as Record<string, unknown>;
  const app = new Hono();
  app.get('/v3/grants/:grant_id/messages', (c) => c.json(payloads[c.req.param('grant_id')] as object));
  process.stdout.write(`${JSON.stringify({ url: await listen(app) })}\n`);
} else if (mode === 'ours') {
  const service = await startService(
    loadConfig({
      AGENTPOST_DATABASE_URL: `file:${argument}`,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: BENCH_API_KEY,
      AGENTPOST_LOG_LEVEL: 'silent',
      AGENTPOST_RATE_LIMIT_APPLICATION: '0',
      AGENTPOST_RATE_LIMIT_GRANT: '0',
      AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
    }),
  );
  process.once('SIGTERM', () => void service.close().then(() => process.exit(0)));
  process.stdout.write(`${JSON.stringify({ url: service.url, smtpPort: service.smtpPort })}\n`);
} else {
  process.stderr.write('usage: read-path-server.ts hello | ceiling <payloads.json> | ours <database file>\n');
  process.exit(2);
}
