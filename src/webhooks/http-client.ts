/**
 * @module webhooks/http-client
 * The default {@link HttpRequester}: one request with `node:http`/`node:https`, connected to the address the
 * caller checked (never a second DNS look-up), no redirects followed, no connection reuse, a hard deadline for
 * the whole exchange and a cap on the response bytes kept.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { HttpRequester } from '../deps.js';

/** Sends the request; rejects on network errors and when `timeoutMs` passes first. */
export const nodeHttpRequester: HttpRequester = (request) =>
  new Promise((resolve, reject) => {
    const { url, address } = request;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // Pin the connection to the checked address: Node calls `lookup` for host names (not for IP literals).
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [address]);
      else callback(null, address.address, address.family);
    };
    const body = request.body ?? new Uint8Array();
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (error: Error | undefined, value?: Awaited<ReturnType<HttpRequester>>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (error) reject(error);
      else resolve(value!);
    };
    const outgoing = send({
      protocol: url.protocol,
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: { ...request.headers, 'content-length': String(body.byteLength), connection: 'close' },
      lookup,
      agent: false,
      ...(url.protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
    });
    const deadline = setTimeout(() => {
      const error = Object.assign(new Error(`no complete response within ${request.timeoutMs} ms`), { code: 'ETIMEDOUT' });
      finish(error);
      outgoing.destroy(error);
    }, request.timeoutMs);
    outgoing.on('error', (error) => finish(error));
    outgoing.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const complete = () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        finish(undefined, { status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      };
      response.on('data', (chunk: Buffer) => {
        const slice = chunk.subarray(0, request.maxResponseBytes - kept);
        chunks.push(slice);
        kept += slice.length;
        if (kept >= request.maxResponseBytes) {
          // Enough to judge the answer: stop reading rather than let the endpoint stream on.
          complete();
          response.destroy();
        }
      });
      response.on('error', (error) => finish(error));
      response.on('end', complete);
    });
    outgoing.end(body);
  });
