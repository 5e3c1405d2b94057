/**
 * Memory soak (issue 21, point 5): the service in a child process under ingest, reads and webhooks at once for
 * SOAK_SECONDS (default 300), its resident set (VmRSS) sampled every 5 s.
 * - ingest: Postfix's `smtp-source`, batches of 200 messages of 5 KB over 2 sessions, back to back;
 * - reads: 4 loops of `GET /v3/grants/{id}/messages?limit=50` through fetch;
 * - webhooks: one subscription to `message.created`, delivered to a loopback receiver in this process.
 * The first SOAK_WARMUP_SECONDS (default 60) are warm-up. After it, the figures are the RSS at its end, the highest
 * and the last, and the slope of a least-squares line through the samples (MB a minute): near zero means no growth.
 * Needs `smtp-source` (Debian: `apt-get install postfix`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NO_SMTP_SOURCE, smtpSource, which } from './load-tools.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 60);
const SAMPLE_MS = 5_000;
const SOAK_API_KEY = 'agp_soak_key_for_the_default_application';
const DOMAIN = 'soak.agentpost.localhost';
const MAILBOX = `agent@${DOMAIN}`;
const here = dirname(fileURLToPath(import.meta.url));

/** Resident set of a process in MB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

/** Slope of the least-squares line through (seconds, MB) points, in MB a minute. */
function slopePerMinute(points: { at: number; mb: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, point) => sum + point.at, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const point of points) {
    num += (point.at - meanX) * (point.mb - meanY);
    den += (point.at - meanX) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

export async function run(): Promise<Record<string, number | string>> {
  const binary = which('smtp-source');
  if (!binary) return { skipped: NO_SMTP_SOURCE };
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-soak-'));
  let delivered = 0;
  const receiver = createServer((request: IncomingMessage, response: ServerResponse) => {
    const challenge = new URL(request.url ?? '/', 'http://x').searchParams.get('challenge');
    if (request.method === 'GET' && challenge) {
      response.end(challenge);
      return;
    }
    request.resume();
    request.on('end', () => {
      delivered += 1;
      response.end('ok');
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'soak-server.ts'), join(dir, 'soak.db'), SOAK_API_KEY],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const started = await new Promise<{ url: string; smtpPort: number; pid: number }>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((entry) => entry.startsWith('{'));
      if (line) resolve(JSON.parse(line) as { url: string; smtpPort: number; pid: number });
    });
    child.once('exit', (code) => reject(new Error(`soak server exited with ${code}`)));
  });
  const headers = { authorization: `Bearer ${SOAK_API_KEY}`, 'content-type': 'application/json' };
  const registered = await fetch(`${started.url}/v3/admin/domains`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: DOMAIN, domain_address: DOMAIN }),
  });
  if (registered.status !== 200)
    throw new Error(`registering ${DOMAIN}: ${registered.status} ${await registered.text()}`);
  const created = await fetch(`${started.url}/v3/connect/custom`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ provider: 'nylas', settings: { email: MAILBOX } }),
  });
  if (created.status !== 200 && created.status !== 201)
    throw new Error(`creating the mailbox: ${created.status} ${await created.text()}`);
  const grantId = ((await created.json()) as { data: { id: string } }).data.id;
  const hook = await fetch(`${started.url}/v3/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ trigger_types: ['message.created'], webhook_url: receiverUrl }),
  });
  if (hook.status !== 200 && hook.status !== 201)
    throw new Error(`creating the webhook: ${hook.status} ${await hook.text()}`);

  let stopping = false;
  let ingested = 0;
  let reads = 0;
  const ingest = (async () => {
    while (!stopping) {
      await smtpSource(binary, {
        port: started.smtpPort,
        messages: 200,
        sessions: 2,
        size: 5120,
        from: 'sender@example.com',
        to: MAILBOX,
      });
      ingested += 200;
    }
  })();
  const readers = Array.from({ length: 4 }, async () => {
    while (!stopping) {
      const response = await fetch(`${started.url}/v3/grants/${grantId}/messages?limit=50`, { headers });
      await response.arrayBuffer();
      reads += 1;
    }
  });

  const samples: { at: number; mb: number }[] = [];
  const begin = performance.now();
  while ((performance.now() - begin) / 1000 < SECONDS) {
    await new Promise((done) => setTimeout(done, SAMPLE_MS));
    samples.push({ at: (performance.now() - begin) / 1000, mb: rssMb(started.pid) });
  }
  stopping = true;
  await Promise.allSettled([ingest, ...readers]);
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
  receiver.close();
  rmSync(dir, { recursive: true, force: true });

  const after = samples.filter((sample) => sample.at >= WARMUP_SECONDS);
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    'duration (s) / warm-up (s)': `${SECONDS} / ${WARMUP_SECONDS}`,
    'messages ingested': ingested,
    'list reads (50 messages each)': reads,
    'webhook deliveries received': delivered,
    'RSS at the end of warm-up (MB)': round(after[0]?.mb ?? 0),
    'RSS highest after warm-up (MB)': round(Math.max(...after.map((sample) => sample.mb))),
    'RSS last (MB)': round(samples.at(-1)?.mb ?? 0),
    'RSS slope after warm-up (MB/min; ~0 = no growth)': round(slopePerMinute(after)),
    'RSS every 30 s (MB)': samples
      .filter((_, index) => index % 6 === 5)
      .map((sample) => Math.round(sample.mb))
      .join(' '),
  };
}
