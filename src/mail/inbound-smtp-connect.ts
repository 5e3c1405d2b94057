/**
 * @module mail/inbound-smtp-connect
 * Connections to the inbound SMTP listener (./inbound-smtp.ts): the client a connection counts against, the caps in
 * all and per client, and the tracking of partial lines (for the slow-drip cut-off).
 */
import type { Socket } from 'node:net';
import type { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { addressBytes } from '../webhooks/index.js';
import type { InboundSmtpState } from './inbound-smtp-state.js';

/**
 * The client a connection counts against: its IPv4 address (also when it arrives IPv4-mapped on a dual-stack
 * socket), or the /64 of its IPv6 address, since one IPv6 host commonly holds a whole /64.
 */
export function clientKey(remoteAddress: string | undefined): string {
  const bytes = addressBytes(remoteAddress ?? '');
  if (!bytes) return remoteAddress ?? 'unknown';
  const mapped =
    bytes.length === 16 && bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (bytes.length === 4 || mapped) return bytes.slice(-4).join('.');
  const groups = [0, 2, 4, 6].map((index) => ((bytes[index]! << 8) | bytes[index + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}

/** The private parts of smtp-server 3.21 the listener drives (pinned in package.json). */
interface ConnectionInternals {
  id: string;
  _setListeners(callback: () => void): void;
  connectionReady(): void;
  send(code: number, message: string): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
  init(): void;
}
export interface ServerInternals {
  connections: Set<unknown>;
  connect(socket: Socket, socketOptions?: unknown): void;
  _onClientConnect(data: unknown): void;
}

/**
 * Makes the server start connections itself (see the module of ./inbound-smtp.ts): the greeting goes out at once,
 * unless the listener is draining or the connection is over the limits (421); each socket is tracked.
 */
export function acceptConnections(smtp: InboundSmtpState, server: SMTPServer, internals: ServerInternals): void {
  internals.connect = (socket: Socket, socketOptions?: unknown) => {
    const connection = new SMTPConnection(server, socket, socketOptions as never) as unknown as ConnectionInternals;
    internals.connections.add(connection);
    connection.on('error', (error) => server.emit('error', error));
    connection.on('connect', (data) => internals._onClientConnect(data));
    const client = clientKey(socket.remoteAddress);
    const tracked = {
      socket,
      partialSince: undefined as number | undefined,
      client,
      unknownRecipients: 0,
      returnPaths: new Set<string>(),
      ruaAddresses: new Set<string>(),
    };
    smtp.sockets.set(connection.id, tracked);
    const fromClient = (smtp.perClient.get(client) ?? 0) + 1;
    smtp.perClient.set(client, fromClient);
    socket.once('close', () => {
      smtp.sockets.delete(connection.id);
      const left = (smtp.perClient.get(client) ?? 1) - 1;
      if (left > 0) smtp.perClient.set(client, left);
      else smtp.perClient.delete(client);
    });
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.lastIndexOf(10);
      if (newline === chunk.length - 1) tracked.partialSince = undefined;
      else if (newline >= 0 || tracked.partialSince === undefined) tracked.partialSince = performance.now();
    });
    if (typeof connection._setListeners !== 'function' || typeof connection.connectionReady !== 'function') {
      connection.init();
      return;
    }
    smtp.metrics.smtpSession();
    connection._setListeners(() => {
      const refuse = (message: string) => {
        smtp.metrics.smtpReply('greeting', 421);
        connection.send(421, `${smtp.hostname ?? 'Agentpost'} ${message}`);
      };
      if (smtp.draining) return refuse('Service shutting down, try again later');
      if (internals.connections.size > smtp.maxClients)
        return refuse('Too many connected clients, try again in a moment');
      if (fromClient > smtp.maxPerClient)
        return refuse(`Too many connections from your address (at most ${smtp.maxPerClient}), try again later`);
      smtp.metrics.smtpReply('greeting', 220);
      connection.connectionReady();
    });
  };
}
