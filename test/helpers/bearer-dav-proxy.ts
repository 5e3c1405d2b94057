/**
 * A stand-in for Google's CalDAV and CardDAV servers in tests: a loopback reverse proxy in front of Radicale that takes
 * `Authorization: Bearer <access token>` only, checks the token against the authorization server's introspection
 * endpoint (RFC 7662) as a resource server does, and forwards the request to Radicale with the basic login of the
 * token's subject. A token the authorization server no longer calls active gets a 401 with
 * `WWW-Authenticate: Bearer error="invalid_token"`, as Google answers; basic logins are refused the same way.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface BearerDavProxy {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Requests answered 401 (a missing, basic or inactive token). */
  readonly refused: number;
  /** The bearer tokens that were let through, in order (to see a refreshed one used). */
  readonly accepted: string[];
  stop(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * Starts the proxy on 127.0.0.1 (port 0). `introspection` is the endpoint and the resource server's client login;
 * `logins` the Radicale password of each subject (the token's `sub`).
 */
export async function startBearerDavProxy(options: {
  upstream: string;
  introspection: { url: string; clientId: string; clientSecret: string };
  logins: Record<string, string>;
}): Promise<BearerDavProxy> {
  let refused = 0;
  const accepted: string[] = [];
  const clientLogin = Buffer.from(
    `${options.introspection.clientId}:${options.introspection.clientSecret}`,
    'utf8',
  ).toString('base64');
  const subjectOf = async (token: string): Promise<string | undefined> => {
    const answer = await fetch(options.introspection.url, {
      method: 'POST',
      headers: { authorization: `Basic ${clientLogin}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    const json = (await answer.json()) as { active?: boolean; sub?: string };
    return json.active === true ? json.sub : undefined;
  };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const token = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      const subject = token ? await subjectOf(token) : undefined;
      const password = subject === undefined ? undefined : options.logins[subject];
      const body = await bodyOf(request);
      if (!token || subject === undefined || password === undefined) {
        refused++;
        response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        return;
      }
      accepted.push(token);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['authorization', 'host', 'connection', 'content-length'].includes(name))
          headers.set(name, value);
      }
      headers.set('authorization', `Basic ${Buffer.from(`${subject}:${password}`, 'utf8').toString('base64')}`);
      const upstream = await fetch(new URL(request.url ?? '/', options.upstream), {
        method: request.method ?? 'GET',
        headers,
        redirect: 'manual',
        ...(body.length > 0 ? { body } : {}),
      });
      const answer = Buffer.from(await upstream.arrayBuffer());
      const out: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))
          out[name] = value;
      });
      response.writeHead(upstream.status, out).end(answer);
    })().catch((error: unknown) => {
      response.writeHead(502).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get refused() {
      return refused;
    },
    accepted,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
