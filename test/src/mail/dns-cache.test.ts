/**
 * The authentication stage's DNS cache (src/mail/stages/dns-query.ts cachedDnsQuery): answers and "no such record"
 * are kept for the TTL, temporary failures are not, and the same question asked twice at once goes out once.
 */
import { describe, expect, it } from 'vitest';
import { cachedDnsQuery, type DnsQuery } from '../../../src/mail/stages/dns-query.js';
import { loadConfig } from '../../../src/index.js';

/** A query that counts what it is asked and answers from a table the test changes. */
function countingQuery() {
  const asked: string[] = [];
  const records = new Map<string, unknown[] | string>();
  const query: DnsQuery = async (name, rrtype) => {
    asked.push(`${rrtype} ${name}`);
    await new Promise((done) => setImmediate(done));
    const found = records.get(`${rrtype} ${name}`);
    if (typeof found === 'string') throw Object.assign(new Error(`query${rrtype} ${found} ${name}`), { code: found });
    if (!found) throw Object.assign(new Error(`query${rrtype} ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { asked, records, query };
}

describe('the DNS cache of the authentication stage', () => {
  it('keeps answers and "no such record" for the TTL, and asks again after it', async () => {
    const { asked, records, query } = countingQuery();
    const cached = cachedDnsQuery(query, 80);
    records.set('TXT example.com', [['v=spf1 -all']]);
    expect(await cached('example.com', 'TXT')).toEqual([['v=spf1 -all']]);
    expect(await cached('EXAMPLE.com', 'txt')).toEqual([['v=spf1 -all']]);
    await expect(cached('_dmarc.example.com', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    records.set('TXT _dmarc.example.com', [['v=DMARC1; p=none']]);
    await expect(cached('_dmarc.example.com', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(asked).toEqual(['TXT example.com', 'TXT _dmarc.example.com']);

    await new Promise((done) => setTimeout(done, 120));
    expect(await cached('_dmarc.example.com', 'TXT')).toEqual([['v=DMARC1; p=none']]);
    expect(asked).toHaveLength(3);
  });

  it('never keeps a temporary failure, and shares a question under way', async () => {
    const { asked, records, query } = countingQuery();
    const cached = cachedDnsQuery(query, 60_000);
    records.set('TXT flaky.example', 'ESERVFAIL');
    await expect(cached('flaky.example', 'TXT')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    records.set('TXT flaky.example', [['v=spf1 +all']]);
    const [first, second] = await Promise.all([cached('flaky.example', 'TXT'), cached('flaky.example', 'TXT')]);
    expect(first).toEqual([['v=spf1 +all']]);
    expect(second).toBe(first);
    expect(asked).toEqual(['TXT flaky.example', 'TXT flaky.example']);
  });

  it('is off with a TTL of 0, and AGENTPOST_DNS_CACHE_TTL sets it (60 s by default, 0 accepted)', async () => {
    const { asked, records, query } = countingQuery();
    records.set('TXT example.com', [['x']]);
    const uncached = cachedDnsQuery(query, 0);
    await uncached('example.com', 'TXT');
    await uncached('example.com', 'TXT');
    expect(asked).toHaveLength(2);
    expect(loadConfig({}).dnsCacheTtlMs).toBe(60_000);
    expect(loadConfig({ AGENTPOST_DNS_CACHE_TTL: '0' }).dnsCacheTtlMs).toBe(0);
    expect(loadConfig({ AGENTPOST_DNS_CACHE_TTL: '5m' }).dnsCacheTtlMs).toBe(300_000);
    expect(() => loadConfig({ AGENTPOST_DNS_CACHE_TTL: 'soon' })).toThrow(/AGENTPOST_DNS_CACHE_TTL/);
  });
});
