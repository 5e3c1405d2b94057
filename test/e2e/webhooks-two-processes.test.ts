/**
 * Two service processes on one database file deliver 1,000 notifications to one receiver: each arrives once,
 * none is delivered twice at the same time, and both processes take part (the receiver finds which process
 * owns each connection through /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../storage/index.js';
import { recordEvent } from '../../src/outbox/outbox.js';
import { request } from '../helpers/http.js';
import { Nylas, tempDir, TEST_API_KEY } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const NOTIFICATIONS = 1_000;
/** Grants the notifications are spread over (a grant's notifications are delivered one at a time, in order). */
const GRANTS = 500;

/** Starts `agentpost serve` as a child process and resolves with its URL once it listens. */
function startProcess(databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/agentpost.js', 'serve'], {
    env: {
      ...process.env,
      AGENTPOST_DATABASE_URL: databaseUrl,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: TEST_API_KEY,
      AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
      AGENTPOST_LOG_LEVEL: 'error',
      AGENTPOST_WORKER_POLL_MS: '200',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]! });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
}

/** The default application's id, read from the shared database. */
async function defaultApplicationId(databaseUrl: string): Promise<string> {
  const db = await createDb({ url: databaseUrl });
  try {
    const rows = await db.client.execute('select id from applications where is_default = 1');
    return rows.rows[0]!.id as string;
  } finally {
    void db.close();
  }
}

/** The pid (among `pids`) whose process owns the client end of a loopback TCP connection from `port`. */
function connectionOwner(port: number, pids: number[]): number | undefined {
  if (!existsSync('/proc/net/tcp')) return undefined;
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const line = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .find((parts) => parts[1]?.endsWith(suffix));
  const inode = line?.[9];
  if (!inode) return undefined;
  for (const pid of pids) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // the descriptor closed meanwhile
      }
    }
  }
  return undefined;
}

describe('two service processes on one database', () => {
  const dir = tempDir();
  const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
  const processes: ChildProcess[] = [];
  const urls: string[] = [];
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // One after the other: the first start creates the schema and the default application.
    for (let index = 0; index < 2; index += 1) {
      const started = await startProcess(databaseUrl);
      processes.push(started.child);
      urls.push(started.url);
    }
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    dir.remove();
  });

  it(`delivers ${NOTIFICATIONS} notifications, each once, never twice at the same time, from both processes`, async () => {
    const [first, second] = urls.map((url) => new Nylas({ apiKey: TEST_API_KEY, apiUri: url, timeout: 60 }));
    const pids = processes.map((child) => child.pid!);
    const inFlight = new Map<string, number>();
    const counts = new Map<string, number>();
    const owners = new Map<number, number>();
    let overlapping = 0;
    receiver.respond = async (delivery, response) => {
      const id = String(delivery.headers['webhook-id']);
      // Which process sent it, for every 10th delivery (the /proc look-up is too slow to do for all).
      const owner = counts.size % 10 === 0 ? connectionOwner(response.socket!.remotePort!, pids) : undefined;
      if (owner !== undefined) owners.set(owner, (owners.get(owner) ?? 0) + 1);
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      if (inFlight.get(id)! > 1) overlapping += 1;
      counts.set(id, (counts.get(id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight.set(id, inFlight.get(id)! - 1);
      return 200;
    };

    const domain = await request(urls[0]!, 'POST', '/v3/admin/domains', {
      key: TEST_API_KEY,
      body: { name: 'Two', domain_address: 'two.agentpost.localhost' },
    });
    expect(domain.status).toBe(200);
    const grantId = (
      await first!.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'busy@two.agentpost.localhost' } },
      })
    ).data.id;
    await second!.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantUpdated], webhookUrl: receiver.url },
    });

    // 1,000 grant.updated events, recorded in the outbox as the grant service records them (one transaction here,
    // so the load is the delivery and not the writes that cause it). They name 500 grants: one grant's notifications
    // go out one after another, in order (from whichever process holds that grant's turn), so the processes share
    // the work grant by grant.
    const applicationId = await defaultApplicationId(databaseUrl);
    const started = performance.now();
    const db = await createDb({ url: databaseUrl });
    try {
      await db.write(async (tx) => {
        for (let index = 0; index < NOTIFICATIONS; index += 1) {
          const eventGrant = `${grantId}_${index % GRANTS}`;
          await recordEvent(tx, {
            id: `evt_${index}`,
            applicationId,
            grantId: eventGrant,
            type: 'grant.updated',
            objectId: eventGrant,
            object: { id: eventGrant, name: `name ${index}`, index },
            createdAt: Math.floor(Date.now() / 1000),
          });
        }
      });
    } finally {
      void db.close();
    }
    await receiver.waitForDeliveries(NOTIFICATIONS, 60_000);
    console.log(
      `two processes delivered ${NOTIFICATIONS} notifications in ${Math.round(performance.now() - started)} ms`,
      Object.fromEntries(owners),
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // anything delivered twice would arrive now
    expect(counts.size).toBe(NOTIFICATIONS);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    expect(overlapping).toBe(0);
    expect(
      receiver.deliveries.every(
        (item) => item.json.webhook_delivery_attempt === 1 && item.json.type === 'grant.updated',
      ),
    ).toBe(true);
    expect(new Set(receiver.deliveries.map((item) => item.json.data.object.name)).size).toBe(NOTIFICATIONS);
    // Each grant's notifications arrived in the order of its events.
    for (let grant = 0; grant < GRANTS; grant += 1) {
      const indexes = receiver.deliveries
        .filter((item) => item.json.data.grant_id === `${grantId}_${grant}`)
        .map((item) => item.json.data.object.index as number);
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
      expect(indexes).toHaveLength(NOTIFICATIONS / GRANTS);
    }
    if (existsSync('/proc/net/tcp')) {
      expect([...owners.keys()].sort()).toEqual([...pids].sort());
    }
  }, 120_000);
});
