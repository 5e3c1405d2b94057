/**
 * One server of bench/tracking.bench.ts, run as a child process (so that it can be pinned to a core of its own):
 *   hello                    Hono's hello-world route on `@hono/node-server`, `GET /` → `c.text('Hello Hono!')`
 *   ours <log level>         the real service on a fresh database (every role, rate limits as configured by default,
 *                            the given AGENTPOST_LOG_LEVEL; its log goes to stderr, which the bench discards), with one
 *                            tracked message (opens and two links) sent from a production application
 * Prints one JSON line `{ url, pixel?, link? }` on stdout once listening (pixel and link: paths of valid tracking
 * URLs); stops on SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { requireEveryRole, startService } from '../server/main.js';
import { loadConfig } from '../src/index.js';

const [mode, argument] = process.argv.slice(2);
const KEY = 'agp_bench_tracking_key_0123456789';

if (mode === 'hello') {
  const app = new Hono();
  app.get('/', (c) => c.text('Hello Hono!'));
  const url = await new Promise<string>((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
    process.once('SIGTERM', () => server.close(() => process.exit(0)));
  });
  process.stdout.write(`${JSON.stringify({ url })}\n`);
} else if (mode === 'ours') {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-bench-tracking-'));
  const service = requireEveryRole(
    await startService(
      loadConfig({
        AGENTPOST_DATABASE_URL: `file:${join(dir, 'agentpost.db')}`,
        AGENTPOST_HTTP_PORT: '0',
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_API_KEY: KEY,
        AGENTPOST_LOG_LEVEL: argument ?? 'info',
        // Recipients outside go to a relay that is not there: the message stays queued, which tracking does not mind.
        AGENTPOST_SMTP_RELAY: 'smtp://127.0.0.1:9',
      }),
    ),
  );
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await response.json()) as { data: Record<string, unknown> };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  await call('POST', '/v3/admin/domains', { name: 'bench', domain_address: 'bench-tracking.agentpost.localhost' });
  const grant = await call('POST', '/v3/connect/custom', {
    provider: 'nylas',
    settings: { email: 'agent@bench-tracking.agentpost.localhost' },
  });
  const sent = await call('POST', `/v3/grants/${String(grant.id)}/messages/send`, {
    to: [{ email: 'reader@example.com' }],
    subject: 'Bench',
    body: '<p><a href="https://one.example.com/">one</a> <a href="https://two.example.com/">two</a></p>',
    tracking_options: { opens: true, links: true, label: 'bench' },
  });
  const stored = await call('GET', `/v3/grants/${String(grant.id)}/messages/${String(sent.id)}`);
  const body = String(stored.body);
  const pixel = /\/t\/o\/[A-Za-z0-9_.-]+/.exec(body)?.[0];
  const link = /\/t\/l\/[A-Za-z0-9_.-]+/.exec(body)?.[0];
  process.once(
    'SIGTERM',
    () =>
      void service.close().then(() => {
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      }),
  );
  process.stdout.write(`${JSON.stringify({ url: service.url, pixel, link })}\n`);
} else {
  process.stderr.write('usage: tracking-server.ts hello | ours <log level>\n');
  process.exit(2);
}
