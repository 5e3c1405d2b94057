/**
 * A TCP server on loopback that accepts connections and never says a word (no IMAP greeting, no SMTP banner): the
 * stand-in for a mail server that hangs, to show a connect timeout applies.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';

/** A running silent server. */
export interface SilentServer {
  port: number;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a silent server on 127.0.0.1, on a port of its own. */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
