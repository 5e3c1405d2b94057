/**
 * Outbound mail: sends per second accepted by `POST /v3/grants/{id}/messages/send` (5 KB HTML body, 16
 * concurrent HTTP clients) on the real service (temp database, HTTP on loopback):
 * (a) to another Agent Account of the same service (composed, stored in sent, delivered locally through the
 *     inbound path before the answer), and
 * (b) to a relay on loopback (a smtp-server sink): accepted, then the time until the sink has them all
 *     (pooled SMTP connections of the queue workers).
 * BENCH_SENDS changes the count (default 1000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { requireEveryRole, startService } from '../server/main.js';
import { loadConfig } from '../src/index.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 1000);
const CONCURRENCY = 16;
const API_KEY = 'agp_bench_key_for_the_default_application';
const DOMAIN = 'outbench.agentpost.localhost';
const BODY = `<p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(90)}</p>`;

async function sink(): Promise<{ port: number; received(): number; close(): Promise<void> }> {
  let received = 0;
  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    received: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends `count` messages with `CONCURRENCY` clients; returns the seconds it took. */
async function blast(url: string, grantId: string, to: string, count: number): Promise<number> {
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        const response = await fetch(`${url}/v3/grants/${grantId}/messages/send`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ to: [{ email: to }], subject: `bench ${index}`, body: BODY }),
        });
        if (response.status !== 200) throw new Error(`send answered ${response.status}: ${await response.text()}`);
        await response.arrayBuffer();
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Runs the bench and returns its figures. */
export async function run(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const relay = await sink();
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-outbench-'));
  const service = requireEveryRole(
    await startService(
      loadConfig({
        AGENTPOST_DATABASE_URL: `file:${join(dir, 'bench.db')}`,
        AGENTPOST_HTTP_PORT: '0',
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_API_KEY: API_KEY,
        AGENTPOST_LOG_LEVEL: 'silent',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${relay.port}`,
        AGENTPOST_WORKER_POLL_MS: '50',
      }),
    ),
  );
  try {
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    await fetch(`${service.url}/v3/admin/domains`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Bench', domain_address: DOMAIN }),
    });
    const grant = async (email: string) => {
      const response = await fetch(`${service.url}/v3/connect/custom`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ provider: 'nylas', settings: { email } }),
      });
      return ((await response.json()) as { data: { id: string } }).data.id;
    };
    const sender = await grant(`sender@${DOMAIN}`);
    await grant(`reader@${DOMAIN}`);

    await blast(service.url, sender, `reader@${DOMAIN}`, 50);
    const local = await blast(service.url, sender, `reader@${DOMAIN}`, SENDS);
    out['local delivery: sends accepted and delivered (msg/s)'] = Math.round(SENDS / local);

    const before = relay.received();
    const started = performance.now();
    const accepted = await blast(service.url, sender, 'someone@example.com', SENDS);
    out['to a relay: sends accepted (msg/s)'] = Math.round(SENDS / accepted);
    while (relay.received() - before < SENDS) {
      if (performance.now() - started > 300_000)
        throw new Error(`the relay got ${relay.received() - before} of ${SENDS} in 5 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    out['to a relay: accepted and handed to the relay (msg/s)'] = Math.round(
      SENDS / ((performance.now() - started) / 1000),
    );
    out['concurrent HTTP clients'] = CONCURRENCY;
  } finally {
    await service.close();
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
