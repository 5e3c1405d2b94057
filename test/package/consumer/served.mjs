// The installed `agentpost` command (the package's bin, dist/server/cli.js) serves and receives mail: a message over
// SMTP goes through the worker threads of the build (MIME parser, mail writer and its prepare module), and is listed
// over HTTP. Usage: node served.mjs HTTP_PORT SMTP_PORT. Prints one JSON line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [httpPort, smtpPort] = process.argv.slice(2).map(Number);
const folder = mkdtempSync(join(tmpdir(), 'agentpost-served-'));
const apiKey = 'agp_consumer_test_key_0123456789';
const child = spawn(join('node_modules', '.bin', 'agentpost'), ['serve'], {
  env: {
    PATH: process.env.PATH,
    AGENTPOST_DATABASE_URL: `file:${join(folder, 'agentpost.db')}`,
    AGENTPOST_API_KEY: apiKey,
    AGENTPOST_HTTP_PORT: String(httpPort),
    AGENTPOST_SMTP_PORT: String(smtpPort),
    AGENTPOST_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const exited = new Promise((resolve) => child.on('exit', resolve));
const base = `http://127.0.0.1:${httpPort}`;
const call = async (method, path, body) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status}`);
  return (await response.json()).data;
};

/** A minimal SMTP client: one message, each command waits for its reply. */
async function sendMail(from, to, data) {
  const socket = connect(smtpPort, '127.0.0.1');
  socket.setEncoding('utf8');
  let buffer = '';
  const waiters = [];
  socket.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.search(/^\d{3} .*\r\n/m)) >= 0) {
      const line = buffer.slice(end).match(/^\d{3} .*\r\n/m)[0];
      buffer = buffer.slice(end + line.length);
      waiters.shift()?.(line);
    }
  });
  const reply = () => new Promise((resolve) => waiters.push(resolve));
  const command = (text) => {
    const next = reply();
    socket.write(`${text}\r\n`);
    return next;
  };
  assert.match(await reply(), /^220/);
  assert.match(await command('EHLO consumer.test'), /^250/);
  assert.match(await command(`MAIL FROM:<${from}>`), /^250/);
  assert.match(await command(`RCPT TO:<${to}>`), /^250/);
  assert.match(await command('DATA'), /^354/);
  const answer = await command(`${data.replace(/\r?\n/g, '\r\n')}\r\n.`);
  socket.end('QUIT\r\n');
  return answer;
}

try {
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // Not listening yet: ask again.
    }
    assert.ok(attempt < 600, 'agentpost serve did not answer /healthz within a minute');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await call('POST', '/v3/admin/domains', { name: 'Served', domain_address: 'served.agentpost.localhost' });
  const grant = await call('POST', '/v3/connect/custom', {
    provider: 'nylas',
    settings: { email: 'agent@served.agentpost.localhost' },
  });
  // One simple message (parsed on the mail writer thread by its prepare module) and one multipart (the parser pool).
  const simple = await sendMail(
    'someone@example.com',
    'agent@served.agentpost.localhost',
    'From: someone@example.com\nSubject: simple\n\nHello.',
  );
  const multipart = await sendMail(
    'someone@example.com',
    'agent@served.agentpost.localhost',
    'From: someone@example.com\nSubject: multipart\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nBody.\n--b\nContent-Type: application/octet-stream; name=a.bin\nContent-Disposition: attachment; filename=a.bin\n\nAAAA\n--b--\n',
  );
  assert.match(simple, /^250/);
  assert.match(multipart, /^250/);
  const messages = await call('GET', `/v3/grants/${grant.id}/messages`);
  const subjects = messages.map((message) => message.subject).sort();
  assert.deepEqual(subjects, ['multipart', 'simple']);
  const health = await (await fetch(`${base}/healthz`)).json();
  console.log(JSON.stringify({ subjects, health }));
} finally {
  child.kill('SIGTERM');
  await exited;
  rmSync(folder, { recursive: true, force: true });
}
