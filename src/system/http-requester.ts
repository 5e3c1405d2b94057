/**
 * @module system/http-requester
 * The default {@link HttpRequester}: one request with `node:http`/`node:https`, connected to the address the
 * caller checked (never a second DNS look-up), no redirects followed, a hard deadline for the whole exchange and
 * a cap on the response bytes kept.
 *
 * Connections are kept alive and reused, one pool (an `http.Agent` or `https.Agent` with `keepAlive`) per origin
 * AND checked address. A pool only ever connects to its own address (every request it serves pins `lookup` to
 * it), so a reused connection goes where a fresh one would: to the address the caller checked against the
 * address policy for this very request. When a name resolves to another address, its requests go to another
 * pool; pools left unused for {@link IDLE_POOL_MS} are closed.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { HttpRequester, OutboundHttpRequest, OutboundHttpResponse } from '../ports/http.js';

/** Connections a pool opens to one address of one origin at most; more requests queue in the pool. */
export const MAX_SOCKETS_PER_TARGET = 32;

/** A pool unused this long is closed with its idle connections. */
const IDLE_POOL_MS = 60_000;

/**
 * An idle kept-alive connection is closed after this long on our side: below Node's default server keep-alive
 * timeout (5 s), so we seldom send on a connection the receiver is closing at that moment.
 */
const IDLE_SOCKET_MS = 4_000;

/** Options of {@link createNodeHttpRequester}. */
export interface NodeHttpRequesterOptions {
  /** Reuse connections (default true). False: one connection per request, closed after it. */
  keepAlive?: boolean;
  /** Connections per origin and address (default {@link MAX_SOCKETS_PER_TARGET}). */
  maxSockets?: number;
}

/** A requester with its connection pools. */
export interface PooledHttpRequester extends HttpRequester {
  /** Pools open now, by `<origin> <address>` (for tests and metrics). */
  pools(): string[];
  /** Closes every pool and its connections. */
  close(): void;
}

/** Creates a requester with its own connection pools. */
export function createNodeHttpRequester(options: NodeHttpRequesterOptions = {}): PooledHttpRequester {
  const keepAlive = options.keepAlive ?? true;
  const maxSockets = options.maxSockets ?? MAX_SOCKETS_PER_TARGET;
  const pools = new Map<string, { agent: HttpAgent; usedAt: number }>();
  let sweeper: NodeJS.Timeout | undefined;

  function sweep() {
    const now = Date.now();
    for (const [key, pool] of pools) {
      if (now - pool.usedAt < IDLE_POOL_MS) continue;
      pool.agent.destroy();
      pools.delete(key);
    }
    if (pools.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function poolFor(url: URL, address: OutboundHttpRequest['address']): HttpAgent {
    const key = `${url.protocol}//${url.host} ${address.address}`;
    let pool = pools.get(key);
    if (!pool) {
      const agentOptions = {
        keepAlive: true,
        maxSockets,
        maxFreeSockets: maxSockets,
        timeout: IDLE_SOCKET_MS,
        scheduling: 'lifo' as const,
      };
      pool = {
        agent: url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions),
        usedAt: Date.now(),
      };
      pools.set(key, pool);
      sweeper ??= setInterval(sweep, IDLE_POOL_MS / 2).unref();
    }
    pool.usedAt = Date.now();
    return pool.agent;
  }

  function once(
    request: OutboundHttpRequest,
    deadlineAt: number,
  ): Promise<{ response: OutboundHttpResponse } | { error: Error; reused: boolean }> {
    return new Promise((resolve) => {
      const { url, address } = request;
      const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      // Pin the connection to the checked address: Node calls `lookup` for host names (not for IP literals).
      const lookup: LookupFunction = (_host, lookupOptions, callback) => {
        if (lookupOptions.all)
          (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
            address,
          ]);
        else callback(null, address.address, address.family);
      };
      const body = request.body ?? new Uint8Array();
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      let settled = false;
      let outgoing: ClientRequest | undefined;
      const finish = (value: { response: OutboundHttpResponse } | { error: Error; reused: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(value);
      };
      const fail = (error: Error) => finish({ error, reused: outgoing?.reusedSocket ?? false });
      outgoing = send({
        protocol: url.protocol,
        hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: {
          ...request.headers,
          'content-length': String(body.byteLength),
          ...(keepAlive ? {} : { connection: 'close' }),
        },
        lookup,
        agent: keepAlive ? poolFor(url, address) : false,
        ...(url.protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
      });
      const deadline = setTimeout(
        () => {
          const error = Object.assign(new Error(`no complete response within ${request.timeoutMs} ms`), {
            code: 'ETIMEDOUT',
          });
          fail(error);
          outgoing?.destroy(error);
        },
        Math.max(0, deadlineAt - Date.now()),
      );
      outgoing.on('error', fail);
      outgoing.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const complete = () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          finish({ response: { status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks) } });
        };
        response.on('data', (chunk: Buffer) => {
          const slice = chunk.subarray(0, request.maxResponseBytes - kept);
          chunks.push(slice);
          kept += slice.length;
          if (kept >= request.maxResponseBytes) {
            // Enough to judge the answer: stop reading rather than let the endpoint stream on (the connection
            // is closed, not reused).
            complete();
            response.destroy();
          }
        });
        response.on('error', fail);
        response.on('end', complete);
      });
      outgoing.end(body);
    });
  }

  const requester = async (request: OutboundHttpRequest): Promise<OutboundHttpResponse> => {
    const deadlineAt = Date.now() + request.timeoutMs;
    let result = await once(request, deadlineAt);
    // A kept-alive connection the receiver closed while idle fails at once, before the receiver read anything:
    // send again, once, on a fresh connection (what Node's documentation advises for `reusedSocket`).
    if (
      'error' in result &&
      result.reused &&
      (result.error as { code?: string }).code === 'ECONNRESET' &&
      Date.now() < deadlineAt
    ) {
      result = await once(request, deadlineAt);
    }
    if ('error' in result) throw result.error;
    return result.response;
  };
  return Object.assign(requester, {
    pools: () => [...pools.keys()],
    close() {
      for (const pool of pools.values()) pool.agent.destroy();
      pools.clear();
      clearInterval(sweeper);
      sweeper = undefined;
    },
  });
}

/** The shared default requester (connections kept alive; see the module comment). */
export const nodeHttpRequester: PooledHttpRequester = createNodeHttpRequester();
