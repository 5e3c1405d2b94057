/**
 * Debian's Radicale (3.x) as a real CalDAV (RFC 4791) and CardDAV (RFC 6352) server on loopback, for tests: its own
 * configuration and storage folder in a temp dir, users in an htpasswd file with plain passwords, on a port the test
 * gives (Radicale cannot pick one and say which). And {@link DavPeer}, the second client: raw HTTP as a calendar app
 * would speak it (MKCALENDAR, PUT, DELETE with ETags), changing events and contacts on the server directly. Tests skip
 * with a clear message when the `radicale` package is missing ({@link radicaleMissing}); .ci/run installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './service.js';

/** Why Radicale cannot run here, or undefined when it can. */
export function radicaleMissing(): string | undefined {
  if (!existsSync('/usr/bin/radicale'))
    return 'radicale is not installed (apt-get install radicale; .ci/run installs it)';
  return undefined;
}

/** A running Radicale. */
export interface Radicale {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Its storage folder (a bench writes a calendar's files there directly, faster than PUTs). */
  storage: string;
  stop(): Promise<void>;
}

async function waitForPort(port: number, process: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (process.exitCode !== null) throw new Error(`radicale exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`radicale did not listen on ${port}: ${output()}`);
}

/** Starts Radicale on 127.0.0.1:`port` with these users (plain passwords). */
export async function startRadicale(options: {
  port: number;
  users: { user: string; password: string }[];
}): Promise<Radicale> {
  const dir = tempDir('agentpost-radicale-');
  const storage = join(dir.path, 'collections');
  mkdirSync(storage);
  const users = join(dir.path, 'users');
  writeFileSync(users, options.users.map(({ user, password }) => `${user}:${password}`).join('\n') + '\n');
  const config = join(dir.path, 'config');
  writeFileSync(
    config,
    [
      '[server]',
      `hosts = 127.0.0.1:${options.port}`,
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${users}`,
      'htpasswd_encryption = plain',
      'delay = 0',
      '[rights]',
      'type = owner_only',
      '[storage]',
      `filesystem_folder = ${storage}`,
      '[logging]',
      'level = warning',
      '[web]',
      'type = none',
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn('/usr/bin/radicale', ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  await waitForPort(options.port, child, () => output);
  return {
    url: `http://127.0.0.1:${options.port}/`,
    storage,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      dir.remove();
    },
  };
}

/** A second client of the server: what a person's calendar or address book app does, in raw HTTP. */
export interface DavPeer {
  /** Makes a calendar collection `/<user>/<name>/` (MKCALENDAR) with a display name. */
  makeCalendar(name: string, displayName: string): Promise<string>;
  /** Makes an address book `/<user>/<name>/` (MKCOL with the CardDAV resource type). */
  makeAddressBook(name: string, displayName: string): Promise<string>;
  /** PUT text at a URL (If-Match `etag` when given); the status and the new ETag. */
  put(url: string, text: string, contentType: string, etag?: string): Promise<{ status: number; etag: string | null }>;
  /** GET an object: its text and ETag. */
  get(url: string): Promise<{ status: number; text: string; etag: string | null }>;
  /** DELETE an object. */
  remove(url: string): Promise<number>;
  /** The hrefs of a collection's members (PROPFIND depth 1). */
  list(collectionUrl: string): Promise<string[]>;
}

/** The second client, as `user`. */
export function davPeer(radicale: Radicale, user: string, password: string): DavPeer {
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const request = (url: string, init: RequestInit) =>
    fetch(url, { ...init, headers: { authorization, ...(init.headers as Record<string, string>) } });
  const home = new URL(`/${encodeURIComponent(user)}/`, radicale.url).href;
  const mkcol = async (name: string, method: string, body: string) => {
    const url = new URL(`${name}/`, home).href;
    const response = await request(url, { method, headers: { 'content-type': 'application/xml' }, body });
    if (response.status !== 201) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
    return url;
  };
  const escapeXml = (text: string) => text.replace(/[<>&]/g, (character) => `&#${character.charCodeAt(0)};`);
  return {
    // Radicale makes the principal on the first authenticated request.
    async makeCalendar(name, displayName) {
      await request(home, { method: 'PROPFIND', headers: { depth: '0' } }).then((response) => response.body?.cancel());
      return mkcol(
        name,
        'MKCALENDAR',
        `<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${escapeXml(displayName)}</D:displayname><C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`,
      );
    },
    async makeAddressBook(name, displayName) {
      await request(home, { method: 'PROPFIND', headers: { depth: '0' } }).then((response) => response.body?.cancel());
      return mkcol(
        name,
        'MKCOL',
        `<?xml version="1.0"?><D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:set><D:prop><D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype><D:displayname>${escapeXml(displayName)}</D:displayname></D:prop></D:set></D:mkcol>`,
      );
    },
    async put(url, text, contentType, etag) {
      const response = await request(url, {
        method: 'PUT',
        headers: { 'content-type': contentType, ...(etag ? { 'if-match': etag } : {}) },
        body: text,
      });
      await response.body?.cancel();
      return { status: response.status, etag: response.headers.get('etag') };
    },
    async get(url) {
      const response = await request(url, { method: 'GET' });
      return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
    },
    async remove(url) {
      const response = await request(url, { method: 'DELETE' });
      await response.body?.cancel();
      return response.status;
    },
    async list(collectionUrl) {
      const response = await request(collectionUrl, {
        method: 'PROPFIND',
        headers: { depth: '1', 'content-type': 'application/xml' },
        body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>',
      });
      const xml = await response.text();
      return [...xml.matchAll(/<(?:\w+:)?href>([^<]+)<\/(?:\w+:)?href>/g)]
        .map((match) => new URL(match[1]!, collectionUrl).href)
        .filter((href) => href !== collectionUrl);
    },
  };
}
