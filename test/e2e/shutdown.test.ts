/**
 * Graceful shutdown of the real `agentpost serve` process: SIGTERM with 200 SMTP messages and 100 HTTP sends in
 * flight. Each in-flight transaction is held open across the signal (the SMTP data without its final dot, the HTTP
 * body without its second half) and finished afterwards: every one must be answered 250 or 200, not reset, and be in
 * the database after the process exits; new work meanwhile is refused cleanly (HTTP 503, SMTP 421), and connections
 * are refused once the process is gone. Then `npm start`: a SIGTERM
 * to npm must stop the server process too; and SIGINT or SIGTERM however it arrives (to the whole process group of
 * `npm start`, as a terminal's Ctrl-C or a supervisor does, to npm alone, to the service alone) counts once: 30 SMTP
 * transactions and 20 HTTP sends in flight all finish.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { inArray } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, tables } from '../../storage/index.js';
import { dotStuff, rawSmtp, type RawSmtp } from '../helpers/mail.js';
import { ensureBuild } from '../helpers/build.js';
import { tempDir, TEST_API_KEY } from '../helpers/service.js';
import { BIN, ROOT, childEnv, freePort } from '../helpers/process.js';

const DOMAIN = 'shutdown.agentpost.localhost';
const SMTP_MESSAGES = 200;
const HTTP_SENDS = 100;

const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

/** Starts a command and resolves once its output says the service listens. */
async function startChild(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  detached = false,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('is listening on')) ready();
    });
    void exited.then((code) => fail(new Error(`exited with ${code} before listening:\n${output}`)));
  });
  return { child, output: () => output, exited };
}

/** One JSON request on its own connection, answered as { status, body }. */
function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          authorization: `Bearer ${TEST_API_KEY}`,
          'content-type': 'application/json',
          ...(text ? { 'content-length': Buffer.byteLength(text) } : {}),
        },
      },
      (res) => {
        let data = '';
        res.on('data', (chunk: Buffer) => (data += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', fail);
    req.end(text);
  });
}

/** A send whose body is half written: `finish()` writes the rest and resolves with the answer or the error. */
function heldSend(
  port: number,
  grantId: string,
  index: number,
): { started: Promise<void>; finish(): Promise<{ status?: number; body?: any; error?: string }> } {
  const text = JSON.stringify({
    to: [{ email: `inbox@${DOMAIN}` }],
    subject: `HTTP ${index}`,
    body: `Sent over HTTP, number ${index}.`,
  });
  const half = Math.floor(text.length / 2);
  let req: ClientRequest;
  const answer = new Promise<{ status?: number; body?: any; error?: string }>((done) => {
    req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/v3/grants/${grantId}/messages/send`,
        agent: false,
        headers: {
          authorization: `Bearer ${TEST_API_KEY}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        },
      },
      (res) => {
        let data = '';
        res.on('data', (chunk: Buffer) => (data += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
        res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
  });
  const started = new Promise<void>((done) => {
    req!.on('socket', (socket) => socket.once('connect', () => done()));
  });
  req!.write(text.slice(0, half));
  req!.flushHeaders();
  return {
    started,
    finish() {
      req.end(text.slice(half));
      return answer;
    },
  };
}

/** An SMTP transaction held in DATA: `finish()` sends the final dot and resolves with the reply or the error. */
async function heldMessage(
  port: number,
  index: number,
): Promise<{ finish(): Promise<{ code?: number; text?: string; error?: string }> }> {
  const client: RawSmtp = await rawSmtp(port);
  expect((await client.command('EHLO held.example')).code).toBe(250);
  expect((await client.command('MAIL FROM:<sender@example.com>')).code).toBe(250);
  expect((await client.command(`RCPT TO:<inbox@${DOMAIN}>`)).code).toBe(250);
  expect((await client.command('DATA')).code).toBe(354);
  await client.write(
    dotStuff(
      Buffer.from(
        `From: sender@example.com\r\nTo: inbox@${DOMAIN}\r\nSubject: SMTP ${index}\r\n\r\nMessage number ${index}.\r\n`,
      ),
    ),
  );
  return {
    async finish() {
      try {
        const reply = await client.command('.', 30_000);
        return { code: reply.code, text: reply.text };
      } catch (error) {
        return { error: (error as Error).message };
      } finally {
        client.end();
      }
    },
  };
}

/** What a new TCP connection meets: `refused`, or the first bytes the server sends. */
function knock(port: number): Promise<{ refused: true } | { refused: false; greeting: string }> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setEncoding('latin1');
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNREFUSED' ? { refused: true } : { refused: false, greeting: `error ${error.code}` }),
    );
    socket.once('data', (data: string) => {
      done({ refused: false, greeting: data });
      socket.destroy();
    });
  });
}

/**
 * A new HTTP request's fate: 'refused', another error's code, or its status (503 while draining on a connection that
 * was accepted).
 */
async function newRequest(port: number): Promise<number | string> {
  try {
    return (await call(port, 'GET', '/v3/grants')).status;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ECONNREFUSED' ? 'refused' : String(code);
  }
}

describe('graceful shutdown of agentpost serve', () => {
  it(
    `finishes ${SMTP_MESSAGES} SMTP messages and ${HTTP_SENDS} HTTP sends in flight at SIGTERM, stores each, and refuses new connections cleanly`,
    { timeout: 180_000 },
    async () => {
      const dir = tempDir('agentpost-shutdown-');
      dirs.push(dir);
      const database = `file:${join(dir.path, 'agentpost.db')}`;
      const [httpPort, smtpPort] = [await freePort(), await freePort()];
      const server = await startChild(
        process.execPath,
        [BIN, 'serve'],
        childEnv({
          AGENTPOST_DATABASE_URL: database,
          AGENTPOST_HTTP_PORT: String(httpPort),
          AGENTPOST_SMTP_PORT: String(smtpPort),
          AGENTPOST_API_KEY: TEST_API_KEY,
          AGENTPOST_DOMAINS: DOMAIN,
          AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
          AGENTPOST_RATE_LIMIT_APPLICATION: '0',
          AGENTPOST_RATE_LIMIT_GRANT: '0',
          AGENTPOST_SHUTDOWN_TIMEOUT: '60s',
          AGENTPOST_LOG_LEVEL: 'warn',
        }),
      );
      const inbox = await call(httpPort, 'POST', '/v3/connect/custom', {
        provider: 'nylas',
        settings: { email: `inbox@${DOMAIN}` },
      });
      const sender = await call(httpPort, 'POST', '/v3/connect/custom', {
        provider: 'nylas',
        settings: { email: `sender@${DOMAIN}` },
      });
      expect([inbox.status, sender.status]).toEqual([201, 201]);
      const senderId = String(sender.body.data.id);

      // In flight: 200 SMTP transactions in DATA, 100 HTTP sends with half a body. All were accepted before the signal.
      const messages: { finish(): Promise<{ code?: number; text?: string; error?: string }> }[] = [];
      for (let batch = 0; batch < SMTP_MESSAGES; batch += 50) {
        messages.push(
          ...(await Promise.all(Array.from({ length: 50 }, (_, offset) => heldMessage(smtpPort, batch + offset)))),
        );
      }
      const sends = Array.from({ length: HTTP_SENDS }, (_, index) => heldSend(httpPort, senderId, index));
      await Promise.all(sends.map((send) => send.started));
      // Let the server read every request's headers (it counts them in flight from then on).
      await new Promise((done) => setTimeout(done, 500));

      server.child.kill('SIGTERM');

      // New work is refused cleanly while the service drains: a new HTTP request is answered 503 (once the signal is
      // handled; 200 before), a new SMTP session gets a 421 greeting. Nobody is reset.
      const fates: (string | number)[] = [];
      while (fates.filter((fate) => fate === 503).length < 5 && fates.length < 200) {
        fates.push(await newRequest(httpPort));
        await new Promise((done) => setTimeout(done, 10));
      }
      expect(fates.filter((fate) => fate !== 200 && fate !== 503)).toEqual([]);
      expect(fates.slice(fates.indexOf(503))).toEqual([503, 503, 503, 503, 503]);
      const knocked = await knock(smtpPort);
      expect(knocked).toMatchObject({ refused: false, greeting: expect.stringMatching(/^421 /) });

      // The transactions in flight now finish: each is answered, none is reset.
      const [smtpReplies, httpAnswers] = await Promise.all([
        Promise.all(messages.map((message) => message.finish())),
        Promise.all(sends.map((send) => send.finish())),
      ]);
      expect(smtpReplies.filter((reply) => reply.code !== 250)).toEqual([]);
      expect(httpAnswers.filter((answer) => answer.status !== 200)).toEqual([]);
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain('cutting off');
      // Once it has exited, connections are refused.
      expect(await newRequest(httpPort)).toBe('refused');
      expect(await knock(smtpPort)).toEqual({ refused: true });

      // And each answered one is in the database.
      const smtpIds = smtpReplies.map((reply) => /stored as (\S+)/.exec(reply.text ?? '')?.[1]);
      expect(smtpIds.every(Boolean)).toBe(true);
      const httpIds = httpAnswers.map((answer) => String(answer.body.data.id));
      const db = await createDb({ url: database });
      try {
        const stored = await db.orm
          .select({ id: tables.messages.id, subject: tables.messages.subject })
          .from(tables.messages)
          .where(inArray(tables.messages.id, [...(smtpIds as string[]), ...httpIds]));
        expect(stored).toHaveLength(SMTP_MESSAGES + HTTP_SENDS);
        // The HTTP sends reached the recipient's inbox too (local delivery happens before the 200).
        const received = await db.orm.select({ subject: tables.messages.subject }).from(tables.messages);
        const subjects = new Set(received.map((row) => row.subject));
        for (let index = 0; index < HTTP_SENDS; index++) expect(subjects.has(`HTTP ${index}`)).toBe(true);
        expect(received.filter((row) => row.subject.startsWith('HTTP ')).length).toBe(2 * HTTP_SENDS);
      } finally {
        await db.close();
      }
    },
  );

  it('npm start: a SIGTERM to npm stops the server process too', { timeout: 90_000 }, async () => {
    const dir = tempDir('agentpost-npm-start-');
    dirs.push(dir);
    const httpPort = await freePort();
    const npm = await startChild(
      'npm',
      ['start', '--silent'],
      childEnv({
        AGENTPOST_DATABASE_URL: `file:${join(dir.path, 'agentpost.db')}`,
        AGENTPOST_HTTP_PORT: String(httpPort),
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_API_KEY: TEST_API_KEY,
        AGENTPOST_LOG_LEVEL: 'info',
      }),
    );
    expect((await call(httpPort, 'GET', '/livez')).status).toBe(200);
    npm.child.kill('SIGTERM');
    await npm.exited;
    // The server (npm's grandchild, below a shell) shuts down too, whether the signal reached it or not.
    let fate: string | number = 200;
    for (let attempt = 0; attempt < 100 && fate !== 'refused'; attempt++) {
      fate = await newRequest(httpPort);
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(fate).toBe('refused');
  });

  describe('a signal however it arrives counts once: everything in flight under npm start finishes', () => {
    const SMTP_HELD = 30;
    const HTTP_HELD = 20;
    const cases: { to: 'the process group' | 'npm alone' | 'the service alone'; signal: NodeJS.Signals }[] = [
      { to: 'the process group', signal: 'SIGINT' },
      { to: 'the process group', signal: 'SIGTERM' },
      { to: 'npm alone', signal: 'SIGTERM' },
      { to: 'the service alone', signal: 'SIGTERM' },
    ];
    for (const { to, signal } of cases) {
      it(
        `${signal} to ${to}: ${SMTP_HELD} SMTP transactions and ${HTTP_HELD} HTTP sends in flight all finish`,
        { timeout: 15 * 60_000 },
        async () => {
          // npm start runs the build.
          await ensureBuild();
          const dir = tempDir('agentpost-signals-');
          dirs.push(dir);
          const database = `file:${join(dir.path, 'agentpost.db')}`;
          const [httpPort, smtpPort] = [await freePort(), await freePort()];
          // Detached: npm leads a process group of its own, as under a terminal or a supervisor.
          const npm = await startChild(
            'npm',
            ['start', '--silent'],
            childEnv({
              AGENTPOST_DATABASE_URL: database,
              AGENTPOST_HTTP_PORT: String(httpPort),
              AGENTPOST_SMTP_PORT: String(smtpPort),
              AGENTPOST_API_KEY: TEST_API_KEY,
              AGENTPOST_DOMAINS: DOMAIN,
              AGENTPOST_SMTP_MAX_CONNECTIONS_PER_CLIENT: '1000',
              AGENTPOST_RATE_LIMIT_APPLICATION: '0',
              AGENTPOST_RATE_LIMIT_GRANT: '0',
              AGENTPOST_SHUTDOWN_TIMEOUT: '60s',
              AGENTPOST_LOG_LEVEL: 'info',
            }),
            true,
          );
          // `npm start` execs node in place of its shell: the service is npm's one child.
          const servicePid = Number(
            execFileSync('pgrep', ['-P', String(npm.child.pid)])
              .toString()
              .trim(),
          );
          expect(servicePid).toBeGreaterThan(0);
          const serviceGone = () => {
            try {
              process.kill(servicePid, 0);
              return false;
            } catch {
              return true;
            }
          };
          await call(httpPort, 'POST', '/v3/connect/custom', {
            provider: 'nylas',
            settings: { email: `inbox@${DOMAIN}` },
          });
          const sender = await call(httpPort, 'POST', '/v3/connect/custom', {
            provider: 'nylas',
            settings: { email: `sender@${DOMAIN}` },
          });
          const messages = await Promise.all(
            Array.from({ length: SMTP_HELD }, (_, index) => heldMessage(smtpPort, index)),
          );
          const sends = Array.from({ length: HTTP_HELD }, (_, index) =>
            heldSend(httpPort, String(sender.body.data.id), index),
          );
          await Promise.all(sends.map((send) => send.started));
          // Let the server read every request's headers (it counts them in flight from then on).
          await new Promise((done) => setTimeout(done, 500));

          if (to === 'the process group') process.kill(-npm.child.pid!, signal);
          else if (to === 'npm alone') npm.child.kill(signal);
          else process.kill(servicePid, signal);
          // The service takes the signal (new requests meet 503) and is still there, draining.
          let fate: number | string = 200;
          for (let attempt = 0; attempt < 500 && fate === 200; attempt++) {
            fate = await newRequest(httpPort);
            if (fate === 200) await new Promise((done) => setTimeout(done, 10));
          }
          expect(fate).toBe(503);

          const [smtpReplies, httpAnswers] = await Promise.all([
            Promise.all(messages.map((message) => message.finish())),
            Promise.all(sends.map((send) => send.finish())),
          ]);
          expect(smtpReplies.filter((reply) => reply.code !== 250)).toEqual([]);
          expect(httpAnswers.filter((answer) => answer.status !== 200)).toEqual([]);
          expect(await npm.exited).toBe(0);
          for (let attempt = 0; attempt < 200 && !serviceGone(); attempt++)
            await new Promise((done) => setTimeout(done, 50));
          expect(serviceGone()).toBe(true);
          expect(npm.output()).toContain('"shut down"');
          expect(npm.output()).not.toContain('exiting at once');
          expect(npm.output()).not.toContain('cutting off');

          const httpIds = httpAnswers.map((answer) => String(answer.body.data.id));
          const db = await createDb({ url: database });
          try {
            const stored = await db.orm
              .select({ id: tables.messages.id })
              .from(tables.messages)
              .where(inArray(tables.messages.id, httpIds));
            expect(stored).toHaveLength(HTTP_HELD);
          } finally {
            await db.close();
          }
        },
      );
    }
  });
});
