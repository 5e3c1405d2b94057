/**
 * DMARC for custom domains, against a real DNS server (dnsmasq on loopback) that the service reaches through
 * AGENTPOST_DNS_SERVERS: the record to publish, its verification (and what a DNS failure does to it), and the aggregate
 * reports receivers mail to the rua address, over SMTP, read back through the API. Hostile reports (malformed, huge,
 * zip and gzip bombs, about another application's domain) store nothing while the service keeps answering.
 */
import { createSocket, type Socket } from 'node:dgram';
import { eq } from 'drizzle-orm';
import { ServiceAccountSigner } from 'nylas';
import { tables } from '../../storage/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateXml, gzipSync, reportEmail, zipOf } from '../helpers/dmarc.js';
import { dnsmasqMissing, startDnsmasq, startServfailServer, type Dnsmasq } from '../helpers/dnsmasq.js';
import { request } from '../helpers/http.js';
import { sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = dnsmasqMissing();
if (missing) console.warn(`dmarc: skipped: ${missing}`);

/** Fixed ports of this file's range (dnsmasq cannot take port 0). */
const DNSMASQ_PORT = 36500;
const SILENT_PORT = 36501;
const SERVFAIL_PORT = 36502;

const DOMAIN = 'agents.dmarc.test';
const RUA = `dmarc-reports@${DOMAIN}`;
const OTHER_DOMAIN = 'other.dmarc.test';
const RECORD = `v=DMARC1; p=none; rua=mailto:${RUA}`;

describe.skipIf(missing !== undefined)('DMARC through a real resolver (dnsmasq)', { timeout: 60_000 }, () => {
  let dns: Dnsmasq;
  let servfail: { close(): Promise<void> };
  let service: TestService;
  let signer: ServiceAccountSigner;
  let domainId: string;
  let otherKey: string;
  let otherDomainId: string;

  beforeAll(async () => {
    servfail = await startServfailServer(SERVFAIL_PORT);
    dns = await startDnsmasq(DNSMASQ_PORT, {
      localZones: ['dmarc.test'],
      // broken.test goes to a server that answers SERVFAIL; names in no zone (refused.test) dnsmasq REFUSES.
      forward: [['broken.test', `127.0.0.1#${SERVFAIL_PORT}`]],
      txt: [[`_dmarc.${DOMAIN}`, RECORD]],
      mx: [[DOMAIN, 'mx.agentpost.localhost', 10]],
    });
    service = await startTestService({
      realDns: true,
      env: { AGENTPOST_DNS_SERVERS: dns.server, AGENTPOST_DNS_TIMEOUT: '1' },
    });
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const credentials = await service.core.accounts.applications.createServiceAccount(applicationId);
    signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    domainId = (await service.nylas.domains.create({ requestBody: { name: 'Agents', domainAddress: DOMAIN }, signer }))
      .data.id!;
    const second = await service.core.accounts.applications.createApplication({ name: 'Second', plan: 'trial' });
    otherKey = second.apiKey;
    const other = await request(service.url, 'POST', '/v3/admin/domains', {
      key: otherKey,
      body: { name: 'Other', domain_address: OTHER_DOMAIN },
    });
    expect(other.status).toBe(200);
    otherDomainId = other.body.data.id;
  });
  afterAll(async () => {
    await service?.close();
    await dns?.stop();
    await servfail?.close();
  });

  /** The reports of a domain as the API lists them (all pages). */
  async function reportsOf(id: string, key = service.apiKey): Promise<Record<string, unknown>[]> {
    const all: Record<string, unknown>[] = [];
    let token: string | undefined;
    do {
      const page = await request(
        service.url,
        'GET',
        `/v3/admin/domains/${id}/dmarc-reports?limit=2${token ? `&page_token=${token}` : ''}`,
        { key },
      );
      expect(page.status).toBe(200);
      all.push(...page.body.data);
      token = page.body.next_cursor;
    } while (token);
    return all;
  }

  /** Mails `email` to the rua address while asking the API for something; both must answer. */
  async function mailWhileServing(email: Buffer, to = RUA) {
    const [reply, api] = await Promise.all([
      sendRaw(service.smtpPort, 'noreply-dmarc-support@receiver.example', [to], email),
      request(service.url, 'GET', '/v3/admin/domains', { key: service.apiKey }),
    ]);
    expect(api.status).toBe(200);
    return reply;
  }

  describe('the record and its verification', () => {
    it('domain info shows the DMARC record to publish (type dmarc, an extension)', async () => {
      const info = (await service.nylas.domains.info({ domainId, requestBody: { type: 'dmarc' as 'mx' }, signer }))
        .data;
      expect(info.status).toBe('pending');
      expect(info.attempt).toMatchObject({
        type: 'dmarc',
        options: { type: 'TXT', host: `_dmarc.${DOMAIN}`, value: RECORD },
      });
      expect(info.message).toContain(`_dmarc.${DOMAIN}`);
    });

    it('verify finds the published record through dnsmasq and sets verified_dmarc; verified_arc stays false', async () => {
      const verified = (
        await service.nylas.domains.verify({ domainId, requestBody: { type: 'dmarc' as 'mx' }, signer })
      ).data;
      expect(verified.status).toBe('done');
      expect(verified.details).toMatchObject({ found: [RECORD] });
      const domain = (await service.nylas.domains.find({ domainId, signer })).data;
      expect(domain).toMatchObject({ verifiedDmarc: true, verifiedArc: false });
      // The MX record dnsmasq serves verifies through the same resolver.
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'mx' }, signer })).data.status).toBe(
        'done',
      );
    });

    it('a domain without a DMARC record fails with what to publish', async () => {
      const created = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'Bare', domain_address: 'bare.dmarc.test' },
      });
      const verified = await request(service.url, 'POST', `/v3/admin/domains/${created.body.data.id}/verify`, {
        key: service.apiKey,
        body: { type: 'dmarc' },
      });
      expect(verified.status).toBe(200);
      expect(verified.body.data).toMatchObject({
        status: 'failed',
        message: expect.stringContaining('v=DMARC1; p=none; rua=mailto:dmarc-reports@bare.dmarc.test'),
      });
      expect(
        (await request(service.url, 'GET', `/v3/admin/domains/${created.body.data.id}`, { key: service.apiKey })).body
          .data.verified_dmarc,
      ).toBe(false);
    });

    it('a resolver answering SERVFAIL or REFUSED makes the check failed with the reason, not a 500', async () => {
      for (const [address, code, why] of [
        ['agents.broken.test', 'ESERVFAIL', 'the resolver answered SERVFAIL'],
        ['agents.refused.test', 'EREFUSED', 'the resolver refused the query'],
      ] as const) {
        const created = await request(service.url, 'POST', '/v3/admin/domains', {
          key: service.apiKey,
          body: { name: address, domain_address: address },
        });
        for (const type of ['dmarc', 'ownership', 'mx']) {
          const verified = await request(service.url, 'POST', `/v3/admin/domains/${created.body.data.id}/verify`, {
            key: service.apiKey,
            body: { type },
          });
          expect(verified.status).toBe(200);
          expect(verified.body.data).toMatchObject({ status: 'failed', details: { dns_error: code } });
          expect(verified.body.data.message).toMatch(
            new RegExp(`^DNS look-up of (TXT|MX) \\S*${address.replace(/\./g, '\\.')} failed: ${why} \\(${code}\\)`),
          );
        }
        const domain = await request(service.url, 'GET', `/v3/admin/domains/${created.body.data.id}`, {
          key: service.apiKey,
        });
        expect(domain.body.data).toMatchObject({
          verified_dmarc: false,
          verified_ownership: false,
          verified_mx: false,
        });
      }
    });
  });

  describe('a resolver that never answers', () => {
    let silent: Socket;
    let quiet: TestService;

    beforeAll(async () => {
      // A UDP socket that reads every query and answers none.
      silent = createSocket('udp4');
      silent.on('message', () => {});
      await new Promise<void>((resolve) => silent.bind(SILENT_PORT, '127.0.0.1', resolve));
      quiet = await startTestService({
        realDns: true,
        env: { AGENTPOST_DNS_SERVERS: `127.0.0.1:${SILENT_PORT}`, AGENTPOST_DNS_TIMEOUT: '1' },
      });
    });
    afterAll(async () => {
      await quiet?.close();
      silent?.close();
    });

    it('makes verification failed with a timeout, not a 500', async () => {
      const created = await request(quiet.url, 'POST', '/v3/admin/domains', {
        key: quiet.apiKey,
        body: { name: 'Slow', domain_address: 'slow.dmarc.test' },
      });
      const verified = await request(quiet.url, 'POST', `/v3/admin/domains/${created.body.data.id}/verify`, {
        key: quiet.apiKey,
        body: { type: 'dmarc' },
      });
      expect(verified.status).toBe(200);
      expect(verified.body.data).toMatchObject({ status: 'failed', details: { dns_error: 'ETIMEOUT' } });
      expect(verified.body.data.message).toContain('no answer from the resolver in time (ETIMEOUT)');
    });
  });

  describe('aggregate reports mailed to the rua address', () => {
    it('stores a gzip report and lists it with its counts by source address', async () => {
      const xml = aggregateXml({
        domain: DOMAIN,
        reportId: 'gz-1',
        records: [
          { ip: '192.0.2.10', count: 5 },
          { ip: '198.51.100.7', count: 2, dkim: 'fail', spf: 'fail', disposition: 'quarantine' },
          { ip: '192.0.2.10', count: 1, dkim: 'fail', spf: 'pass' },
        ],
      });
      const reply = await mailWhileServing(
        reportEmail({
          to: RUA,
          file: gzipSync(xml),
          filename: `receiver.example!${DOMAIN}!1700000000!1700086399.xml.gz`,
          contentType: 'application/gzip',
        }),
      );
      expect(reply.code).toBe(250);
      expect(reply.text).toContain('DMARC report stored');
      const [report] = await reportsOf(domainId);
      expect(report).toEqual({
        id: expect.any(String),
        object: 'dmarc_report',
        domain_id: domainId,
        org_name: 'receiver.example',
        email: 'noreply-dmarc-support@receiver.example',
        report_id: 'gz-1',
        date_range: { begin: 1_700_000_000, end: 1_700_086_399 },
        policy_published: { domain: DOMAIN, adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100 },
        message_count: 8,
        sources: [
          {
            source_ip: '192.0.2.10',
            count: 6,
            dkim: { pass: 5, fail: 1 },
            spf: { pass: 6, fail: 0 },
            disposition: { none: 6, quarantine: 0, reject: 0 },
          },
          {
            source_ip: '198.51.100.7',
            count: 2,
            dkim: { pass: 0, fail: 2 },
            spf: { pass: 0, fail: 2 },
            disposition: { none: 0, quarantine: 2, reject: 0 },
          },
        ],
        received_at: expect.any(Number),
      });
    });

    it('stores zip and plain XML reports too, keeps a repeated one once, and pages newest first', async () => {
      const zip = zipOf(
        'report.xml',
        Buffer.from(
          aggregateXml({
            domain: DOMAIN,
            reportId: 'zip-1',
            records: [{ ip: '2001:db8::1', count: 3, disposition: 'reject', dkim: 'fail', spf: 'fail' }],
          }),
        ),
      );
      expect(
        (
          await sendRaw(
            service.smtpPort,
            'r@receiver.example',
            [RUA],
            reportEmail({ to: RUA, file: zip, filename: 'r.zip', contentType: 'application/zip' }),
          )
        ).code,
      ).toBe(250);
      const plain = Buffer.from(
        aggregateXml({ domain: DOMAIN, reportId: 'xml-1', records: [{ ip: '203.0.113.5', count: 1 }] }),
      );
      const email = reportEmail({ to: RUA, file: plain, filename: 'r.xml', contentType: 'text/xml' });
      expect(
        (await sendRaw(service.smtpPort, 'r@receiver.example', ['DMARC-Reports@Agents.Dmarc.Test'], email)).code,
      ).toBe(250);
      const again = await sendRaw(service.smtpPort, 'r@receiver.example', [RUA], email);
      expect(again.code).toBe(250);
      expect(again.text).toContain('received before');
      const reports = await reportsOf(domainId);
      expect(reports.map((report) => report.report_id)).toEqual(['xml-1', 'zip-1', 'gz-1']);
      expect(reports.find((report) => report.report_id === 'zip-1')).toMatchObject({
        message_count: 3,
        sources: [{ source_ip: '2001:db8::1', disposition: { reject: 3 } }],
      });
    });

    it('another application sees none of them: its key gets 404 for the domain', async () => {
      const response = await request(service.url, 'GET', `/v3/admin/domains/${domainId}/dmarc-reports`, {
        key: otherKey,
      });
      expect(response.status).toBe(404);
      expect(response.body.error.type).toBe('not_found_error');
      expect(await reportsOf(otherDomainId, otherKey)).toEqual([]);
    });

    it('a deleted domain takes its reports with it', async () => {
      const created = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'Brief', domain_address: 'brief.dmarc.test' },
      });
      const id = created.body.data.id as string;
      const xml = aggregateXml({
        domain: 'brief.dmarc.test',
        reportId: 'brief-1',
        records: [{ ip: '192.0.2.3', count: 1 }],
      });
      expect(
        (
          await sendRaw(
            service.smtpPort,
            'r@receiver.example',
            ['dmarc-reports@brief.dmarc.test'],
            reportEmail({
              to: 'dmarc-reports@brief.dmarc.test',
              file: Buffer.from(xml),
              filename: 'r.xml',
              contentType: 'text/xml',
            }),
          )
        ).text,
      ).toContain('DMARC report stored');
      expect(await reportsOf(id)).toHaveLength(1);
      expect((await request(service.url, 'DELETE', `/v3/admin/domains/${id}`, { key: service.apiKey })).status).toBe(
        200,
      );
      const left = await service.core.deps.db.orm
        .select()
        .from(tables.dmarcReports)
        .where(eq(tables.dmarcReports.domainId, id));
      expect(left).toEqual([]);
      // Its rua address is no longer taken: mail to it is refused as relaying.
      expect(
        (
          await sendRaw(
            service.smtpPort,
            'r@receiver.example',
            ['dmarc-reports@brief.dmarc.test'],
            'Subject: x\r\n\r\nx',
          )
        ).code,
      ).toBe(550);
    });

    it('the rua address of a domain nobody registered is refused as relaying', async () => {
      const reply = await sendRaw(
        service.smtpPort,
        'r@receiver.example',
        ['dmarc-reports@unregistered.example'],
        'Subject: x\r\n\r\nx',
      );
      expect(reply.code).toBe(550);
      expect(reply.text).toContain('5.7.1');
    });
  });

  describe('hostile reports store nothing and the service keeps answering', () => {
    let before: number;
    beforeAll(async () => {
      before = (await reportsOf(domainId)).length;
    });
    const nothingStored = async () => {
      expect((await reportsOf(domainId)).length).toBe(before);
      expect(await reportsOf(otherDomainId, otherKey)).toEqual([]);
    };

    it('a malformed report', async () => {
      for (const xml of [
        '<feedback><report_metadata><org_name>x</org_name></feedback>',
        '<?xml version="1.0"?><!DOCTYPE feedback [<!ENTITY a "aaaaaaaaaa">]><feedback>&a;</feedback>',
        aggregateXml({ domain: DOMAIN, reportId: 'bad-ip', records: [{ ip: 'not-an-ip', count: 1 }] }),
        'this is not xml at all, but starts like <feedback',
      ]) {
        const reply = await mailWhileServing(
          reportEmail({ to: RUA, file: gzipSync(xml), filename: 'r.xml.gz', contentType: 'application/gzip' }),
        );
        expect(reply.code).toBe(250);
        expect(reply.text).toContain('DMARC report ignored');
      }
      const truncated = gzipSync(
        aggregateXml({ domain: DOMAIN, reportId: 'cut', records: [{ ip: '192.0.2.1', count: 1 }] }),
      ).subarray(0, 60);
      expect(
        (
          await mailWhileServing(
            reportEmail({ to: RUA, file: truncated, filename: 'r.xml.gz', contentType: 'application/gzip' }),
          )
        ).text,
      ).toContain('corrupt');
      await nothingStored();
    });

    it('a huge report (more than 5 MB as attached)', async () => {
      const huge = Buffer.from(
        aggregateXml({
          domain: DOMAIN,
          reportId: 'huge',
          records: Array.from({ length: 11_000 }, (_, index) => ({
            ip: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`,
            count: 1,
          })),
        }),
      );
      expect(huge.length).toBeGreaterThan(5 * 1024 * 1024);
      const reply = await mailWhileServing(
        reportEmail({ to: RUA, file: huge, filename: 'r.xml', contentType: 'text/xml' }),
      );
      expect(reply.code).toBe(250);
      expect(reply.text).toMatch(/DMARC report ignored.*larger than 5242880 bytes/);
      // Under the byte caps but over the record cap.
      const many = gzipSync(
        aggregateXml({
          domain: DOMAIN,
          reportId: 'many',
          records: Array.from({ length: 6_000 }, (_, index) => ({
            ip: `10.0.${(index >> 8) & 255}.${index & 255}`,
            count: 1,
          })),
        }),
      );
      expect(
        (
          await mailWhileServing(
            reportEmail({ to: RUA, file: many, filename: 'r.xml.gz', contentType: 'application/gzip' }),
          )
        ).text,
      ).toContain('more than 5000 records');
      await nothingStored();
    });

    it('a gzip bomb', async () => {
      const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20));
      const reply = await mailWhileServing(
        reportEmail({ to: RUA, file: bomb, filename: 'r.xml.gz', contentType: 'application/gzip' }),
      );
      expect(reply.code).toBe(250);
      expect(reply.text).toMatch(/DMARC report ignored.*expands past/);
      await nothingStored();
    });

    it('a zip bomb', async () => {
      const bomb = zipOf('report.xml', Buffer.alloc(32 * 1024 * 1024, 0x20));
      const reply = await mailWhileServing(
        reportEmail({ to: RUA, file: bomb, filename: 'r.zip', contentType: 'application/zip' }),
      );
      expect(reply.code).toBe(250);
      expect(reply.text).toMatch(/DMARC report ignored.*expands past/);
      await nothingStored();
    });

    it("a report about another application's domain, mailed to ours", async () => {
      const xml = aggregateXml({
        domain: OTHER_DOMAIN,
        reportId: 'planted',
        records: [{ ip: '192.0.2.99', count: 100, dkim: 'fail', spf: 'fail' }],
      });
      const reply = await mailWhileServing(
        reportEmail({ to: RUA, file: gzipSync(xml), filename: 'r.xml.gz', contentType: 'application/gzip' }),
      );
      expect(reply.code).toBe(250);
      expect(reply.text).toContain(`about ${OTHER_DOMAIN} mailed to ${DOMAIN}`);
      await nothingStored();
    });
  });
});
