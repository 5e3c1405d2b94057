/**
 * Faults of a real `agentpost serve` process: killed with SIGKILL between accepting a message and delivering it
 * (the message is delivered after the restart, once), and stopped with SIGTERM while SMTP clients are sending
 * (new sessions get 421, the message in DATA finishes with 250, and every message answered 250 is stored).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inArray } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, tables } from '../../storage/index.js';
import { request } from '../helpers/http.js';
import { eventually, rawSmtp, smtpClient } from '../helpers/mail.js';
import { Nylas, tempDir, TEST_API_KEY } from '../helpers/service.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { BIN, ROOT, freePort } from '../helpers/process.js';

const TIMEOUT_MS = 90_000;

const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

/** `agentpost serve` as a child process, resolved once it listens. */
async function serve(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null>; output: () => string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AGENTPOST_')));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: {
      ...clean,
      AGENTPOST_API_KEY: TEST_API_KEY,
      AGENTPOST_LOG_LEVEL: 'warn',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_WORKER_POLL_MS: '100',
      ...env,
      AGENTPOST_HTTP_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((done) =>
    child.once('close', (code, signal) => {
      if (signal) output += `\nexit by ${signal}`;
      done(code);
    }),
  );
  // Port 0: the service picks a free port and names its URL (no race with other processes for a port chosen here).
  const url = await new Promise<string>((ready, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /is listening on (http:\/\/\S+)/.exec(output);
      if (listening) ready(listening[1]!);
    });
    void exited.then((code) => fail(new Error(`serve exited with ${code} before listening:\n${output}`)));
  });
  return { child, url, exited, output: () => output };
}

async function mailbox(url: string, email: string): Promise<{ nylas: Nylas; grantId: string }> {
  const domain = email.slice(email.indexOf('@') + 1);
  const registered = await request(url, 'POST', '/v3/admin/domains', {
    key: TEST_API_KEY,
    body: { name: domain, domain_address: domain },
  });
  expect([200, 409]).toContain(registered.status);
  const nylas = new Nylas({ apiKey: TEST_API_KEY, apiUri: url, timeout: 30 });
  const grant = await nylas.auth.customAuthentication({
    requestBody: { provider: 'nylas', settings: { email } } as never,
  });
  return { nylas, grantId: grant.data.id };
}

describe('outbound and shutdown faults of a service process', { timeout: TIMEOUT_MS }, () => {
  it('a message accepted before SIGKILL is delivered once after the restart', async () => {
    const dir = tempDir('agentpost-kill-');
    dirs.push(dir);
    const relayPort = await freePort();
    const env = {
      AGENTPOST_DATABASE_URL: `file:${join(dir.path, 'agentpost.db')}`,
      AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${relayPort}`,
      AGENTPOST_OUTBOUND_RETRY_SCHEDULE: '1s',
    };
    const first = await serve(env);
    const { nylas, grantId } = await mailbox(first.url, 'survivor@kill.agentpost.localhost');
    const sent = await nylas.messages.send({
      identifier: grantId,
      requestBody: { to: [{ email: 'far@example.com' }], subject: 'Survives a crash', body: 'x' },
    });
    // Accepted (stored and queued); the relay is not there, so it cannot have been delivered.
    await eventually(async () => {
      const message = await nylas.messages.find({ identifier: grantId, messageId: sent.data.id });
      const [status] = (message.data as unknown as { deliveryStatus: { status: string }[] }).deliveryStatus;
      return status?.status === 'deferred' || undefined;
    }, 10_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe(null);

    const sink = await startSmtpSink({ port: relayPort });
    const second = await serve(env);
    try {
      const [arrived] = await sink.waitFor(1, 20_000);
      expect(arrived!.rcptTo).toEqual(['far@example.com']);
      expect((await simpleParser(arrived!.raw)).subject).toBe('Survives a crash');
      const restarted = new Nylas({ apiKey: TEST_API_KEY, apiUri: second.url, timeout: 30 });
      await eventually(async () => {
        const message = await restarted.messages.find({ identifier: grantId, messageId: sent.data.id });
        const [status] = (message.data as unknown as { deliveryStatus: { status: string }[] }).deliveryStatus;
        return status?.status === 'delivered' || undefined;
      }, 10_000);
      await new Promise((done) => setTimeout(done, 1_500));
      expect(sink.messages).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
      await sink.close();
    }
  });

  it('SIGTERM under SMTP load: new sessions get 421, the message in DATA finishes, nothing answered 250 is lost', async () => {
    const dir = tempDir('agentpost-term-');
    dirs.push(dir);
    const databaseUrl = `file:${join(dir.path, 'agentpost.db')}`;
    // The SMTP port is chosen here (the raw client needs it); another process may take it first: then another port.
    let smtpPort = 0;
    let running: Awaited<ReturnType<typeof serve>> | undefined;
    for (let attempt = 0; !running; attempt++) {
      smtpPort = await freePort();
      running = await serve({ AGENTPOST_DATABASE_URL: databaseUrl, AGENTPOST_SMTP_PORT: String(smtpPort) }).catch(
        (error: Error) => {
          if (attempt < 3 && /EADDRINUSE/.test(error.message)) return undefined;
          throw error;
        },
      );
    }
    const email = 'busy@term.agentpost.localhost';
    const { grantId } = await mailbox(running.url, email);

    // One client parked in the middle of DATA.
    const slow = await rawSmtp(smtpPort);
    await slow.command('EHLO slow.example');
    expect((await slow.command('MAIL FROM:<slow@example.com>')).code).toBe(250);
    expect((await slow.command(`RCPT TO:<${email}>`)).code).toBe(250);
    expect((await slow.command('DATA')).code).toBe(354);
    await slow.write(`From: slow@example.com\r\nTo: ${email}\r\nSubject: in DATA at SIGTERM\r\n\r\nfirst half\r\n`);

    // Four connections sending as fast as they can.
    const transport = smtpClient(smtpPort, { maxConnections: 4 });
    const accepted: string[] = [];
    let terminated = false;
    let failuresBefore = 0;
    const loops = Array.from({ length: 4 }, async (_, worker) => {
      for (let index = 0; ; index += 1) {
        const subject = `load ${worker}-${index}`;
        try {
          const info = await transport.sendMail({
            from: 'load@example.com',
            to: email,
            subject,
            text: `message ${subject}`,
          });
          if (/^250 /.test(info.response)) accepted.push(subject);
        } catch {
          if (terminated) return;
          failuresBefore += 1;
        }
      }
    });
    await eventually(async () => (accepted.length >= 30 ? true : undefined), 20_000);
    running.child.kill('SIGTERM');
    terminated = true;
    await new Promise((done) => setTimeout(done, 300));

    const fresh = await rawSmtp(smtpPort, { greeting: false });
    const greeting = await fresh.reply();
    expect(greeting.code).toBe(421);
    await fresh.closed;

    await slow.write('second half\r\n');
    const finished = await slow.command('.');
    expect(finished.code).toBe(250);
    slow.end();
    await Promise.all(loops);
    transport.close();
    // The process ends by itself once the listener drained (its exit status is the CLI's business, tested there).
    await running.exited;
    expect(failuresBefore).toBe(0);

    const db = await createDb({ url: databaseUrl });
    try {
      const wanted = [...accepted, 'in DATA at SIGTERM'];
      const stored = await db.orm
        .select({ subject: tables.messages.subject, grantId: tables.messages.grantId })
        .from(tables.messages)
        .where(inArray(tables.messages.subject, wanted));
      expect(stored.every((row) => row.grantId === grantId)).toBe(true);
      expect(new Set(stored.map((row) => row.subject))).toEqual(new Set(wanted));
      expect(stored).toHaveLength(wanted.length);
    } finally {
      void db.close();
    }
  });
});
