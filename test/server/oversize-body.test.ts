/**
 * An over-size JSON body (4 MB, over the 3 MB limit of /v3) is answered 413 in the Nylas shape, and the client can
 * read that answer: the server reads and drops the rest of the body (server/http-limits.ts discardUnreadBodies)
 * instead of closing the connection under a client still writing. With Node's fetch and with curl, 100 times each;
 * and with a client that writes the whole body at a steady pace before it reads anything (longer than the 500 ms
 * after which @hono/node-server's own clean-up closed the connection, which such a client met as EPIPE).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, tempDir, type TestService } from '../helpers/service.js';

const run = promisify(execFile);
const TRIES = 100;
const BODY = JSON.stringify({
  to: [{ email: 'someone@example.com' }],
  subject: 'big',
  body: 'x'.repeat(4 * 1024 * 1024),
});

let service: TestService;
let dir: { path: string; remove(): void };
let path: string;
beforeAll(async () => {
  service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
  dir = tempDir('agentpost-oversize-');
  writeFileSync(join(dir.path, 'body.json'), BODY);
  // The size is checked before the key and the route: any grant id will do.
  path = '/v3/grants/any-grant/messages/send';
});
afterAll(async () => {
  await service?.close();
  dir?.remove();
});

/** Whether `text` is the Nylas error envelope of a 413. */
function isNylas413(body: unknown): boolean {
  const value = body as { request_id?: unknown; error?: { type?: unknown; message?: unknown } };
  return (
    typeof value.request_id === 'string' &&
    value.error?.type === 'request_too_large' &&
    /3 MB/.test(String(value.error.message))
  );
}

describe('a 4 MB JSON body', () => {
  it(`gets a readable 413 in the Nylas shape with Node's fetch, ${TRIES} times out of ${TRIES}`, async () => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < TRIES; attempt++) {
      try {
        const response = await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
          body: BODY,
        });
        const body: unknown = await response.json();
        outcomes.push(
          response.status === 413 && isNylas413(body) ? 'readable 413' : `${response.status} ${JSON.stringify(body)}`,
        );
      } catch (error) {
        outcomes.push(`error ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`);
      }
    }
    expect(outcomes.filter((outcome) => outcome !== 'readable 413')).toEqual([]);
  }, 120_000);

  it(`gets a readable 413 in the Nylas shape with curl, ${TRIES} times out of ${TRIES}`, async () => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const { stdout } = await run('curl', [
        '--silent',
        '--show-error',
        '--write-out',
        '\n%{http_code}',
        '--header',
        `authorization: Bearer ${service.apiKey}`,
        '--header',
        'content-type: application/json',
        '--data-binary',
        `@${join(dir.path, 'body.json')}`,
        `${service.url}${path}`,
      ]).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `error ${error.stderr ?? ''}` }));
      const [text, status] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      outcomes.push(status === '413' && isNylas413(body) ? 'readable 413' : `${status} ${text.slice(0, 200)}`);
    }
    expect(outcomes.filter((outcome) => outcome !== 'readable 413')).toEqual([]);
  }, 180_000);

  it('gets a readable 413 when the client writes the whole body, paced, before reading anything, and the connection stays usable', async () => {
    const { port } = new URL(service.url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    await new Promise((done) => socket.once('connect', done));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (received += data));
    const errors: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    const write = (data: string) => new Promise<void>((done) => socket.write(data, () => done()));
    await write(
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${service.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`,
    );
    // 64 pieces, 25 ms apart: the body takes over 1.5 s to arrive.
    const piece = Math.ceil(BODY.length / 64);
    for (let offset = 0; offset < BODY.length; offset += piece) {
      await write(BODY.slice(offset, offset + piece));
      await new Promise((done) => setTimeout(done, 25));
    }
    // The same connection then serves the next request.
    await write(`GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    for (let attempt = 0; attempt < 500 && (received.match(/HTTP\/1\.1 /g) ?? []).length < 2; attempt++)
      await new Promise((done) => setTimeout(done, 20));
    socket.destroy();
    expect(errors).toEqual([]);
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 413 /);
    expect(isNylas413(JSON.parse(first!.slice(first!.indexOf('\r\n\r\n') + 4)))).toBe(true);
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
  }, 60_000);
});
