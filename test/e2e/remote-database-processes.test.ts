/**
 * Two `agentpost serve` processes (the CLI, as deployed) on one libSQL server, the stand-in of
 * test/helpers/libsql-server.ts over a real libSQL file: mail that arrives at one process's SMTP listener is read
 * through the other's HTTP API, and both stop cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, smtpClient } from '../helpers/mail.js';
import { startLibsqlServer, type LibsqlServer } from '../helpers/libsql-server.js';
import { BIN, childEnv, freePort, ROOT } from '../helpers/process.js';
import { Nylas, tempDir, TEST_API_KEY, TEST_SECRET_KEY } from '../helpers/service.js';
import { eventually } from '../helpers/webhooks.js';

interface Child {
  child: ChildProcess;
  url: string;
  smtpPort: number;
}

/**
 * Starts `agentpost serve` on `databaseUrl`; resolves once it listens. The SMTP port is found free first, and another
 * process may take it before the child binds it: then the child is started again on another one.
 */
async function serve(databaseUrl: string, token: string): Promise<Child> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await serveOnce(databaseUrl, token);
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

async function serveOnce(databaseUrl: string, token: string): Promise<Child> {
  const smtpPort = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({
      AGENTPOST_DATABASE_URL: databaseUrl,
      AGENTPOST_DATABASE_AUTH_TOKEN: token,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: String(smtpPort),
      AGENTPOST_API_KEY: TEST_API_KEY,
      // A libSQL server has no file beside it for a key file: every process is given the same key.
      AGENTPOST_SECRET_KEY: TEST_SECRET_KEY,
      AGENTPOST_LOG_LEVEL: 'error',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, smtpPort });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
}

describe('two service processes on one libSQL server', () => {
  const dir = tempDir();
  let server: LibsqlServer;
  const children: Child[] = [];

  beforeAll(async () => {
    server = await startLibsqlServer({ file: join(dir.path, 'shared.db'), authToken: 'shared-token' });
    // One after the other: the first applies the migrations, the second finds them applied.
    children.push(await serve(server.url, 'shared-token'));
    children.push(await serve(`libsql://127.0.0.1:${new URL(server.url).port}?tls=0`, 'shared-token'));
  }, 60_000);
  afterAll(async () => {
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    await server?.close();
    dir.remove();
  });

  it('ingests at one process and serves the mail from the other', async () => {
    const [first, second] = children as [Child, Child];
    const email = 'shared@procs.agentpost.localhost';
    const grantId = await createMailbox(
      {
        url: first.url,
        apiKey: TEST_API_KEY,
        nylas: new Nylas({ apiKey: TEST_API_KEY, apiUri: first.url, timeout: 30 }),
      },
      email,
    );
    const transport = smtpClient(first.smtpPort);
    try {
      await transport.sendMail({
        from: 'ann@example.com',
        to: email,
        subject: 'Across processes',
        text: 'One server, two processes.',
      });
    } finally {
      transport.close();
    }
    const reader = new Nylas({ apiKey: TEST_API_KEY, apiUri: second.url, timeout: 30 });
    const { data: messages } = await reader.messages.list({ identifier: grantId });
    expect(messages.map((message) => message.subject)).toEqual(['Across processes']);
    const { data: message } = await reader.messages.find({ identifier: grantId, messageId: messages[0]!.id });
    expect(message.body).toContain('One server, two processes.');
  });

  it('both stop cleanly on SIGTERM', async () => {
    const exits = children.map(
      ({ child }) => new Promise<number | null>((done) => child.once('exit', (code) => done(code))),
    );
    for (const { child } of children) child.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual([0, 0]);
    await eventually(() => (server.openStreams() === 0 ? true : undefined), 5_000, 'streams closed');
  });
});
