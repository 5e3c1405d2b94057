/** Real HTTP webhook receivers on loopback, and a Notifier that records what it was asked to send. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Notifier, SystemEmail } from '../../src/index.js';

/** One POST the receiver got. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** The raw body bytes, as signed. */
  body: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON, e.g. gzip). */
  json: any;
  path: string;
}

/** What the receiver answers to a POST: a status, or a full custom answer. */
export type DeliveryResponder = (
  delivery: ReceivedDelivery,
  response: ServerResponse,
) => number | void | Promise<number | void>;

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  deliveries: ReceivedDelivery[];
  /** Challenge values received (GET ?challenge=…). */
  challenges: string[];
  /** TCP connections the receiver accepted (kept-alive connections count once). */
  connections: number;
  /** How GET challenges are answered (default: echo with 200). */
  onChallenge: (value: string, response: ServerResponse) => void;
  /** How POSTs are answered (default: 200). */
  respond: DeliveryResponder;
  /** Resolves once `count` deliveries have arrived (or rejects after `timeoutMs`). */
  waitForDeliveries(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1, port 0. */
export async function startReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Omit<WebhookReceiver, 'url' | 'close' | 'waitForDeliveries'> = {
    deliveries: [],
    challenges: [],
    connections: 0,
    onChallenge: (value, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(value);
    },
    respond: () => 200,
  };
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://receiver');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = async () => {
      if (request.method === 'GET') {
        const value = url.searchParams.get('challenge') ?? '';
        receiver.challenges.push(value);
        receiver.onChallenge(value, response);
        return;
      }
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const delivery: ReceivedDelivery = { headers: request.headers, body, json, path: url.pathname };
      receiver.deliveries.push(delivery);
      for (const waiter of [...waiters]) {
        if (receiver.deliveries.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      try {
        const status = await receiver.respond(delivery, response);
        if (!response.headersSent && !response.writableEnded) {
          response.writeHead(status ?? 200, { 'content-type': 'text/plain' });
          response.end('ok');
        }
      } catch {
        if (!response.writableEnded) response.destroy();
      }
    };
    request.on('end', () => void ended());
  });
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}${path}`,
    waitForDeliveries(count: number, timeoutMs = 10_000) {
      if (receiver.deliveries.length >= count) return Promise.resolve(receiver.deliveries);
      return new Promise<ReceivedDelivery[]>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`only ${receiver.deliveries.length} of ${count} deliveries arrived within ${timeoutMs} ms`),
            ),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.deliveries);
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

/** A Notifier that keeps every email it is asked to send. */
export function recordingNotifier(): Notifier & { sent: SystemEmail[] } {
  const sent: SystemEmail[] = [];
  return {
    sent,
    async send(email) {
      sent.push(email);
    },
  };
}

/** Polls `check` every 20 ms until it returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
