/**
 * Mail helpers for tests: mailboxes on a trial domain, a pooled nodemailer client for the real SMTP listener,
 * and a raw line-by-line SMTP client for exact reply codes and misbehaving-client cases.
 */
import { connect, type Socket } from 'node:net';
import nodemailer from 'nodemailer';
import { request } from './http.js';
import type { TestService } from './service.js';

/** Registers `domain` for the default application (once) and creates the Agent Account `email`. Returns its grant id. */
export async function createMailbox(
  service: Pick<TestService, 'url' | 'apiKey' | 'nylas'>,
  email: string,
): Promise<string> {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const registered = await request(service.url, 'POST', '/v3/admin/domains', {
    key: service.apiKey,
    body: { name: domain, domain_address: domain },
  });
  if (registered.status !== 200 && registered.status !== 409)
    throw new Error(`registering ${domain}: ${registered.status} ${registered.text}`);
  const grant = await service.nylas.auth.customAuthentication({
    requestBody: { provider: 'nylas', settings: { email } } as never,
  });
  return grant.data.id;
}

/** A pooled nodemailer transport to the listener on loopback (no TLS: the listener offers none). */
export function smtpClient(port: number, options: { maxConnections?: number } = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: options.maxConnections ?? 3,
    maxMessages: Infinity,
  });
}

/** One reply: its code and all its lines. */
export interface SmtpReply {
  code: number;
  lines: string[];
  text: string;
}

/** A raw SMTP client speaking one command at a time. */
export interface RawSmtp {
  socket: Socket;
  /** Waits for the next reply. */
  reply(timeoutMs?: number): Promise<SmtpReply>;
  /** Sends a line (CRLF added) and waits for the reply. */
  command(line: string, timeoutMs?: number): Promise<SmtpReply>;
  /** Writes bytes as they are (no reply awaited). */
  write(data: string | Buffer): Promise<void>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
  end(): void;
}

/** Connects (from `localAddress`, e.g. another loopback address such as 127.0.1.2), reads the greeting, and returns the client. */
export async function rawSmtp(
  port: number,
  options: { greeting?: boolean; localAddress?: string } = {},
): Promise<RawSmtp> {
  const socket = connect({
    host: '127.0.0.1',
    port,
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let buffer = '';
  let waiting: ((reply: SmtpReply) => void) | undefined;
  const ready: SmtpReply[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (;;) {
      // A reply ends with a line "NNN text" (a space, not a dash, after the code).
      const match = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
      if (!match) break;
      const end = match.index + match[0].length;
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end);
      const lines = text.split('\r\n').filter(Boolean);
      const reply = { code: Number(match[2]), lines, text: lines.join('\n') };
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve(reply);
      } else ready.push(reply);
    }
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const reply = (timeoutMs = 10_000) =>
    new Promise<SmtpReply>((resolve, reject) => {
      const queued = ready.shift();
      if (queued) return resolve(queued);
      const timer = setTimeout(() => {
        waiting = undefined;
        reject(new Error('no SMTP reply in time'));
      }, timeoutMs);
      void closed.then(() => {
        clearTimeout(timer);
        if (waiting) {
          waiting = undefined;
          reject(new Error('connection closed'));
        }
      });
      waiting = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
    });
  const write = (data: string | Buffer) =>
    new Promise<void>((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));
  const client: RawSmtp = {
    socket,
    reply,
    async command(line, timeoutMs) {
      await write(`${line}\r\n`);
      return reply(timeoutMs);
    },
    write,
    closed,
    end: () => socket.end(),
  };
  if (options.greeting !== false) {
    const greeting = await reply();
    if (greeting.code !== 220) throw new Error(`unexpected greeting ${greeting.text}`);
  }
  return client;
}

/** Sends one message over a raw connection (EHLO, MAIL, RCPT…, DATA); returns the final reply. */
export async function sendRaw(port: number, from: string, to: string[], data: string | Buffer): Promise<SmtpReply> {
  const client = await rawSmtp(port);
  try {
    await client.command('EHLO test.example');
    const mail = await client.command(`MAIL FROM:<${from}>`);
    if (mail.code !== 250) return mail;
    for (const recipient of to) {
      const rcpt = await client.command(`RCPT TO:<${recipient}>`);
      if (rcpt.code !== 250) return rcpt;
    }
    const go = await client.command('DATA');
    if (go.code !== 354) return go;
    const body = Buffer.isBuffer(data) ? data : Buffer.from(data);
    await client.write(dotStuff(body));
    return await client.command('.', 60_000);
  } finally {
    client.end();
  }
}

/** Escapes lines starting with a dot and ends the data with CRLF (the final dot line is sent separately). */
export function dotStuff(data: Buffer): Buffer {
  let text = data.toString('latin1').replace(/\r?\n/g, '\r\n');
  text = text.replace(/(^|\r\n)\./g, '$1..');
  if (!text.endsWith('\r\n')) text += '\r\n';
  return Buffer.from(text, 'latin1');
}

/** Polls `check` until it returns a value that is not undefined (or throws after `timeoutMs`). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A stored raw message as its sender handed it over: without the `Authentication-Results` field the service puts
 * in front of mail that arrives over SMTP. Throws when the field is missing, so callers also check it was added.
 */
export function asReceived(stored: Buffer): Buffer {
  const match = /^Authentication-Results:[^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*/.exec(stored.toString('latin1'));
  if (!match) throw new Error('The stored message does not start with an Authentication-Results field.');
  return stored.subarray(match[0].length);
}
