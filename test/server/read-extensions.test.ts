/**
 * The `/v3` query extensions of issue 35 on message reads: `body_format` and `max_tokens` (numbers from the query
 * string), on the marketing mail of test/fixtures/agent/bodies; without them the body is the stored HTML, as in Nylas.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/tokens/index.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'extensions.agentpost.localhost';
const MAILBOX = `agent@${DOMAIN}`;
const MARKETING = readFileSync(join(import.meta.dirname, '../fixtures/agent/bodies/marketing-fall-sale.html'), 'utf8');

type Json = Record<string, unknown>;

describe('/v3 message reads with body_format and max_tokens', () => {
  let service: TestService;
  let grantId: string;
  let messageId: string;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, MAILBOX);
    const raw = Buffer.from(
      `From: Shop <news@shop.example>\r\nTo: ${MAILBOX}\r\nSubject: Fall sale\r\nMessage-ID: <sale@shop.example>\r\n` +
        `MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${MARKETING.replace(/\r?\n/g, '\r\n')}\r\n`,
    );
    const delivered = await service.core.mail.inbound.deliverInbound({
      rawMime: raw,
      envelope: { mailFrom: 'news@shop.example', rcptTo: [MAILBOX] },
    });
    messageId = delivered.deliveries[0]!.messageId;
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  const read = async (query: string) => {
    const answer = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${messageId}${query}`, {
      key: service.apiKey,
    });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as Json;
  };

  it('answers the stored HTML without them, as Nylas does', async () => {
    const message = await read('');
    expect(message.body).toContain('<');
    expect(message.body_cut).toBeUndefined();
  });

  it('answers Markdown that keeps the links, within max_tokens, and says what was cut', async () => {
    const whole = await read('?body_format=markdown&max_tokens=100000');
    const markdown = String(whole.body);
    expect(markdown).not.toMatch(/<(table|div|td)\b/i);
    expect(markdown).toMatch(/\[[^\]]+\]\(https?:\/\/[^)]+\)/);
    expect(markdown.length).toBeLessThan(MARKETING.length / 2);

    const cut = await read('?body_format=markdown&max_tokens=500');
    expect(await countTokens(String(cut.body))).toBeLessThanOrEqual(500);
    expect(cut.body_cut).toMatchObject({ omitted_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(markdown.startsWith(String(cut.body).slice(0, 200))).toBe(true);
  });

  it('answers plain text with body_format=text', async () => {
    const message = await read('?body_format=text');
    expect(String(message.body)).not.toMatch(/<[a-z]+[\s>]/i);
    expect(String(message.body)).not.toMatch(/\]\(https?:/);
  });

  it('refuses a budget outside its bounds with a clear 400', async () => {
    const answer = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${messageId}?max_tokens=10`, {
      key: service.apiKey,
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/max_tokens/);
  });
});
