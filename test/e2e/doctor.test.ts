/**
 * `agentpost doctor` against a running service, with a resolver the test controls (dnsmasq on AGENTPOST_DNS_SERVERS):
 * with a custom domain's MX, SPF, DKIM and DMARC records published as the service expects, every check passes (the
 * ports, the secret key, the database, the records); with the DKIM record missing and the relay not answering,
 * those checks fail, by name, and the command exits 1.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsmasqMissing, startDnsmasq, type Dnsmasq, type DnsmasqRecords } from '../helpers/dnsmasq.js';
import { BIN, childEnv, freePort } from '../helpers/process.js';
import { startTestService, TEST_API_KEY, type TestService } from '../helpers/service.js';

const run = promisify(execFile);
const DNSMASQ_PORT = 46_110;
const DOMAIN = 'doctor.test';
const missing = dnsmasqMissing();

describe.skipIf(missing)(`agentpost doctor${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let dns: Dnsmasq;
  let service: TestService;
  let published: DnsmasqRecords;

  beforeAll(async () => {
    dns = await startDnsmasq(DNSMASQ_PORT, { localZones: [DOMAIN] });
    service = await startTestService({
      realDns: true,
      env: { AGENTPOST_DNS_SERVERS: dns.server, AGENTPOST_DNS_TIMEOUT: '1', AGENTPOST_MX_HOST: `mx.${DOMAIN}` },
    });
    const call = async (path: string, body: unknown) => {
      const response = await fetch(`${service.url}/v3${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return ((await response.json()) as { data: any }).data;
    };
    const domain = await call('/admin/domains', { name: 'Doctor', domain_address: DOMAIN });
    published = { localZones: [DOMAIN], txt: [], mx: [] };
    for (const type of ['mx', 'spf', 'dkim', 'dmarc']) {
      const {
        host,
        type: kind,
        value,
        priority,
      } = (await call(`/admin/domains/${domain.id}/info`, { type })).attempt.options as {
        host: string;
        type: 'TXT' | 'MX';
        value: string;
        priority?: number;
      };
      if (kind === 'MX') published.mx!.push([host, value, priority ?? 10]);
      else published.txt!.push([host, value]);
    }
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await dns?.stop();
  });

  /** Runs the doctor with the service's settings (and `env`); its exit code and report. */
  async function doctor(env: Record<string, string> = {}): Promise<{ code: number; report: string }> {
    return run(process.execPath, [BIN, 'doctor'], {
      env: childEnv({
        AGENTPOST_DATABASE_URL: service.config.databaseUrl,
        AGENTPOST_HOST: '127.0.0.1',
        AGENTPOST_HTTP_PORT: new URL(service.url).port,
        AGENTPOST_SMTP_PORT: String(service.smtpPort),
        AGENTPOST_DNS_SERVERS: dns.server,
        AGENTPOST_DNS_TIMEOUT: '1',
        AGENTPOST_DNS_CACHE_TTL: '0',
        AGENTPOST_MX_HOST: `mx.${DOMAIN}`,
        AGENTPOST_LOG_LEVEL: 'silent',
        ...env,
      }),
    }).then(
      ({ stdout }) => ({ code: 0, report: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        report: error.stdout + error.stderr,
      }),
    );
  }

  it('passes every check when the records are published as expected', async () => {
    await dns.restart(published);
    const { code, report } = await doctor();
    expect(report).not.toMatch(/^FAIL/m);
    for (const name of [
      'http 127.0.0.1',
      'smtp 127.0.0.1',
      'secret key',
      'database',
      ...['mx', 'spf', 'dkim', 'dmarc'].map((type) => `${DOMAIN} ${type}`),
    ])
      expect(report).toMatch(new RegExp(`^ok {4}${name.replace(/\./g, '\\.')}`, 'm'));
    expect(code).toBe(0);
  }, 60_000);

  it('names what fails: a DKIM record not published, a relay that does not answer; and exits 1', async () => {
    await dns.restart({ ...published, txt: published.txt!.filter(([host]) => !host.includes('._domainkey.')) });
    const closed = await freePort();
    const { code, report } = await doctor({ AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${closed}` });
    expect(report).toMatch(new RegExp(`^FAIL {2}${DOMAIN.replace('.', '\\.')} dkim: `, 'm'));
    expect(report).toMatch(new RegExp(`^FAIL {2}relay 127\\.0\\.0\\.1:${closed}: `, 'm'));
    expect(report).toMatch(new RegExp(`^ok {4}${DOMAIN.replace('.', '\\.')} spf`, 'm'));
    expect(code).toBe(1);
  }, 60_000);
});
