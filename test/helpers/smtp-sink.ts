/**
 * A real SMTP server on loopback that records what it receives: the test's stand-in for a relay or a remote MX.
 * Replies can be scripted per recipient and for DATA; it can be stopped and started again on the same port
 * (a relay that goes down and comes back).
 */
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** One message as the sink received it. */
export interface SunkMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
  /** The user that authenticated, when any. */
  user: string | undefined;
}

/** A scripted reply: an SMTP code and text. */
export interface SinkReply {
  code: number;
  message: string;
}

/** Options of {@link startSmtpSink}. */
export interface SmtpSinkOptions {
  /** Port to listen on (0: any). */
  port?: number;
  /** Require AUTH with these credentials. */
  auth?: { user: string; pass: string };
}

/** A running sink. */
export interface SmtpSink {
  port: number;
  messages: SunkMessage[];
  /** Connections accepted so far (each SMTP session). */
  sessions: number;
  /** Reply to RCPT TO (undefined: accept). */
  onRecipient: ((address: string) => SinkReply | undefined) | undefined;
  /** Reply at the end of DATA (undefined: 250). */
  onData: ((message: SunkMessage) => SinkReply | undefined) | undefined;
  /** Waits until `count` messages arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<SunkMessage[]>;
  /** Stops listening (connections are refused); `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

function replyError(reply: SinkReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

/** Starts a sink on 127.0.0.1. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  let server: SMTPServer | undefined;
  const sink: SmtpSink = {
    port: options.port ?? 0,
    messages: [],
    sessions: 0,
    onRecipient: undefined,
    onData: undefined,
    async waitFor(count, timeoutMs = 10_000) {
      const started = Date.now();
      while (sink.messages.length < count) {
        if (Date.now() - started > timeoutMs)
          throw new Error(`the sink got ${sink.messages.length} of ${count} messages in time`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return sink.messages;
    },
    async stop() {
      const running = server;
      server = undefined;
      if (running) await new Promise<void>((resolve) => running.close(() => resolve()));
    },
    async start() {
      const created = new SMTPServer({
        logger: false,
        disableReverseLookup: true,
        disabledCommands: options.auth ? ['STARTTLS'] : ['AUTH', 'STARTTLS'],
        authOptional: !options.auth,
        allowInsecureAuth: true,
        closeTimeout: 100,
        onConnect(_session, callback) {
          sink.sessions += 1;
          callback();
        },
        onAuth(auth, _session, callback) {
          if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass)
            return callback(null, { user: auth.username });
          callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
        },
        onRcptTo(address: SMTPServerAddress, _session, callback) {
          const reply = sink.onRecipient?.(address.address);
          callback(reply ? replyError(reply) : undefined);
        },
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            const message: SunkMessage = {
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcptTo: session.envelope.rcptTo.map((recipient) => recipient.address),
              raw: Buffer.concat(chunks),
              user: typeof session.user === 'string' ? session.user : undefined,
            };
            const reply = sink.onData?.(message);
            if (reply && reply.code >= 400) return callback(replyError(reply));
            sink.messages.push(message);
            callback(null, 'Ok: queued');
          });
        },
      });
      created.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => {
        created.server.once('error', reject);
        created.listen(sink.port, '127.0.0.1', () => resolve());
      });
      const address = created.server.address();
      if (typeof address === 'object' && address) sink.port = address.port;
      server = created;
    },
    close: () => sink.stop(),
  };
  await sink.start();
  return sink;
}
