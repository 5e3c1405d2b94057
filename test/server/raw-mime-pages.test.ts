/**
 * `fields=raw_mime` lists have a byte budget per page (AGENTPOST_RAW_MIME_PAGE_BYTES): a page ends early, with a
 * next_cursor, once its raw messages reach the budget, and holds at least one message however large.
 */
import { MessageFields } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'rawpages.agentpost.localhost';
const BUDGET = 5_000;

describe('raw MIME pages', () => {
  let service: TestService;
  let grantId: string;
  const sizes = new Map<string, number>();

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RAW_MIME_PAGE_BYTES: String(BUDGET) } });
    grantId = await createMailbox(service, `raw@${DOMAIN}`);
    // Nine messages of about 1.2 KB and one of 12 KB, more than the whole budget.
    for (let index = 0; index < 10; index++) {
      const filler = 'x'.repeat(index === 4 ? 12_000 : 1_200);
      const raw = `From: a@example.com\r\nTo: raw@${DOMAIN}\r\nSubject: raw ${index}\r\nMessage-ID: <raw-${index}@example.com>\r\nDate: Mon, 02 Mar 2026 10:0${index}:00 +0000\r\n\r\n${filler}\r\n`;
      sizes.set(`raw ${index}`, Buffer.byteLength(raw));
      await service.core.mail.inbound.deliverInbound({
        rawMime: Buffer.from(raw),
        envelope: { mailFrom: 'a@example.com', rcptTo: [`raw@${DOMAIN}`] },
      });
    }
  });
  afterAll(async () => {
    await service?.close();
  });

  it('ends a page at the byte budget, at least one message a page, and the cursor reaches every message once', async () => {
    const pages: { subjects: string[]; bytes: number }[] = [];
    let pageToken: string | undefined;
    // Plain requests: awaiting the SDK's list follows every next_cursor and hands back one array.
    do {
      const query = `fields=raw_mime&limit=200${pageToken ? `&page_token=${pageToken}` : ''}`;
      const page = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?${query}`, {
        key: service.apiKey,
      });
      expect(page.status).toBe(200);
      const raws = (page.body.data as { raw_mime: string }[]).map((message) =>
        Buffer.from(message.raw_mime, 'base64url'),
      );
      const subjects = raws.map((raw) => /^Subject: (.*)$/m.exec(raw.toString('latin1'))![1]!.trim());
      pages.push({ subjects, bytes: raws.reduce((total, raw) => total + raw.length, 0) });
      pageToken = page.body.next_cursor ?? undefined;
    } while (pageToken && pages.length < 20);

    const seen = pages.flatMap((page) => page.subjects);
    expect(new Set(seen).size).toBe(10);
    expect(seen).toHaveLength(10);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) {
      expect(page.subjects.length).toBeGreaterThanOrEqual(1);
      if (page.subjects.length > 1) expect(page.bytes).toBeLessThanOrEqual(BUDGET);
    }
    // The message larger than the budget comes alone on its page.
    expect(pages.find((page) => page.subjects.includes('raw 4'))!.subjects).toEqual(['raw 4']);
    expect(sizes.get('raw 4')).toBeGreaterThan(BUDGET);
  });

  it('leaves other lists alone: limit still decides the page size', async () => {
    const page = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?limit=200`, { key: service.apiKey });
    expect(page.body.data).toHaveLength(10);
    expect(page.body.next_cursor).toBeUndefined();
  });

  it('gives the SDK every message, page after page', async () => {
    const all = await service.nylas.messages.list({
      identifier: grantId,
      queryParams: { fields: MessageFields.RAW_MIME, limit: 200 },
    });
    expect(all.data).toHaveLength(10);
  });
});
