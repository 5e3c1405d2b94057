/**
 * @module system/smtp-listen
 * Starts an `smtp-server` listening and answers the port it got (the one asked for, or the kernel's choice for 0);
 * a failure to bind (the port taken) rejects instead of being thrown later on the server. The inbound listener and
 * the submission listeners share it.
 */
import type { Server } from 'node:net';

/** What this needs of an `SMTPServer`. */
interface Listening {
  server: Server;
  listen(port: number, host: string, callback: () => void): unknown;
}

/** Listens on `host:port`; resolves to the port bound. */
export async function listenSmtp(smtp: Listening, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    smtp.server.once('error', reject);
    smtp.listen(port, host, () => {
      smtp.server.off('error', reject);
      resolve();
    });
  });
  const address = smtp.server.address();
  return typeof address === 'object' && address ? address.port : port;
}
