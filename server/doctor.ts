/**
 * @module server/doctor
 * `agentpost doctor`: checks a deployment as a person would, from the same settings as the service. The HTTP and SMTP
 * ports answer (GET /livez; a 220 greeting), the outbound relay answers (when one is set), the secret key is there,
 * the database takes a write, and each custom domain's MX, SPF, DKIM and DMARC records are published as the service
 * expects, looked up through the configured resolvers (the same check as POST /v3/admin/domains/{id}/verify).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect } from 'node:net';
import { secretKeyFileOf, type Config, type Core } from '../src/index.js';

/** One line of the report. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
}

const TIMEOUT_MS = 5_000;
const DOMAIN_CHECKS = ['mx', 'spf', 'dkim', 'dmarc'] as const;

/** The host to connect to for a listening address (a wildcard address means this machine). */
function reachableHost(host: string): string {
  return host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
}

/** The first line a TCP server sends (an SMTP greeting), or the error. */
function greeting(host: string, port: number): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect({ host, port });
    socket.setTimeout(TIMEOUT_MS, () => {
      socket.destroy();
      fail(new Error('no greeting in time'));
    });
    socket.once('error', fail);
    socket.once('data', (data: Buffer) => {
      socket.end('QUIT\r\n');
      done(data.toString('latin1').split('\r\n')[0] ?? '');
    });
  });
}

async function check(name: string, run: () => Promise<string>): Promise<DoctorCheck> {
  try {
    return { name, ok: true, detail: await run() };
  } catch (error) {
    return { name, ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

async function smtpGreets(host: string, port: number): Promise<string> {
  const line = await greeting(host, port);
  if (!/^220[ -]/.test(line)) throw new Error(`greeted with "${line}"`);
  return line;
}

/** The checks of the listeners and the relay: they need no database. */
function listenerChecks(config: Config): Promise<DoctorCheck>[] {
  const host = reachableHost(config.host);
  const checks = [];
  if (config.roles.includes('http'))
    checks.push(
      check(`http ${host}:${config.httpPort}`, async () => {
        const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${config.httpPort}/livez`, {
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`GET /livez answered ${response.status}`);
        return 'GET /livez answered 200';
      }),
    );
  if (config.roles.includes('smtp'))
    checks.push(check(`smtp ${host}:${config.smtpPort}`, () => smtpGreets(host, config.smtpPort)));
  if (config.smtpRelay) {
    const relay = new URL(config.smtpRelay);
    const port = Number(relay.port || (relay.protocol === 'smtps:' ? 465 : 587));
    checks.push(
      check(`relay ${relay.hostname}:${port}`, () =>
        relay.protocol === 'smtps:'
          ? Promise.resolve('smtps: not greeted in plain text; checked by the first send')
          : smtpGreets(relay.hostname, port),
      ),
    );
  }
  return checks;
}

/** The secret key: the variable, or the key file (where the service would make or read it). */
export function secretKeyCheck(config: Config): DoctorCheck {
  if (config.secrets.key) return { name: 'secret key', ok: true, detail: 'AGENTPOST_SECRET_KEY is set' };
  // The database file as createDb opens it (storage/db.ts), and the key file the service would use beside it.
  const path = config.databaseUrl.startsWith('file:') ? (config.databaseUrl.slice(5).split('?')[0] ?? '') : '';
  const databaseFile =
    path && path !== ':memory:' && !/mode=memory/.test(config.databaseUrl)
      ? resolve(path.replace(/^\/\/(localhost)?/, ''))
      : undefined;
  const file = secretKeyFileOf(config, { file: databaseFile });
  if (file && existsSync(file)) return { name: 'secret key', ok: true, detail: `key file ${file}` };
  return {
    name: 'secret key',
    ok: false,
    detail: file
      ? `no AGENTPOST_SECRET_KEY and no key file at ${file}`
      : 'no AGENTPOST_SECRET_KEY (required on a libSQL server)',
  };
}

/** Each custom domain's records, published against expected, through the configured resolvers. */
async function domainChecks(core: Core): Promise<DoctorCheck[]> {
  const results: DoctorCheck[] = [];
  for (const application of await core.accounts.applications.listApplications()) {
    const principal = { applicationId: application.id, via: 'local' } as const;
    let pageToken: string | undefined;
    do {
      const page = await core.accounts.domains.list(principal, { limit: 100, page_token: pageToken });
      for (const domain of page.data) {
        for (const type of DOMAIN_CHECKS) {
          results.push(
            await check(`${domain.domain_address} ${type}`, async () => {
              // The check answers the record it expects as well as what it found.
              const verified = await core.accounts.domains.verify(principal, { domain_id: domain.id, type });
              const { options } = verified.attempt;
              const record = `${options.type} ${options.host} ${options.value}`;
              if (verified.status !== 'done') throw new Error(`${verified.message} (expected: ${record})`);
              return `published as expected: ${record}`;
            }),
          );
        }
      }
      pageToken = page.next_cursor ?? undefined;
    } while (pageToken);
  }
  return results;
}

/**
 * Runs every check of the open core (its opening already migrated the database), but the secret key's: that one
 * ({@link secretKeyCheck}) runs before the database opens, since opening a fresh file database makes a key file.
 */
export async function runDoctor(config: Config, core: Core): Promise<DoctorCheck[]> {
  const listeners = listenerChecks(config);
  const database = await check('database', async () => {
    // A write transaction takes the write lock: the database is writable (and not held by a stuck writer).
    await core.deps.db.client.batch(['SELECT 1'], 'write');
    return `writable (${config.databaseUrl.replace(/\/\/[^@/]*@/, '//…@')})`;
  });
  return [...(await Promise.all(listeners)), database, ...(await domainChecks(core))];
}

/** The report, one line a check, and whether all passed. */
export function formatDoctor(checks: DoctorCheck[]): string {
  return checks.map((item) => `${item.ok ? 'ok  ' : 'FAIL'}  ${item.name}: ${item.detail}`).join('\n') + '\n';
}
