/**
 * The inbound stages' verdict kept on a message (messages.verdict) is returned by the API as the extension fields
 * `authentication_results` and `spam`, only when present: on GET, in lists, and through the `nylas` SDK.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables, type StoredMessageVerdict } from '../../storage/index.js';
import { createMimeParser } from '../../src/mime/parse-inbound.js';
import { createMailStore, type NewMessage } from '../../src/messages/index.js';
import { MessageSchema } from '../../src/schemas/messages.js';
import { fixedClock, sequentialIds } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const EMAIL = 'agent@verdicts.agentpost.localhost';

const VERDICT: StoredMessageVerdict = {
  authentication: {
    spf: { result: 'pass', domain: 'example.org' },
    dkim: [{ result: 'pass', domain: 'example.org', selector: 's1' }],
    dmarc: { result: 'pass', domain: 'example.org', policy: 'reject' },
    arc: { result: 'none' },
    header: 'Authentication-Results: mx.agentpost.localhost;\r\n dkim=pass header.i=@example.org',
  },
  spam: { spam: true, score: 15, threshold: 6, reasons: ['rspamd: 15 (reject)', 'rspamd GTUBE +0'] },
};

describe('verdict fields of a message', () => {
  let service: TestService;
  let grantId: string;
  const ids: Record<'judged' | 'spamOnly' | 'plain', string> = { judged: '', spamOnly: '', plain: '' };

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, EMAIL);
    const db = service.core.deps.db;
    const [grant] = await db.orm.select().from(tables.grants).where(eq(tables.grants.id, grantId));
    const parser = createMimeParser({ workers: 1 });
    const store = createMailStore({ newId: sequentialIds('verdict'), clock: fixedClock('2026-03-02T15:00:00Z') });
    try {
      const save = async (name: string, verdict: StoredMessageVerdict | undefined, minute: number) => {
        const raw = Buffer.from(
          `From: sender@example.org\r\nTo: ${EMAIL}\r\nSubject: ${name}\r\nMessage-ID: <${name}@example.org>\r\n\r\nbody\r\n`,
        );
        const parsed = await parser.parse(raw);
        if (!parsed.ok) throw new Error(parsed.error);
        const input: NewMessage = {
          applicationId: grant!.applicationId,
          grantId,
          parsed: parsed.value,
          raw,
          rawHash: parsed.rawHash,
          folders: ['inbox'],
          unread: true,
          date: 1_772_460_000 + minute * 60,
          envelopeFrom: 'sender@example.org',
          envelopeTo: EMAIL,
          parseError: null,
          verdict,
        };
        return (await db.write((tx) => store.insert(tx, input))).row.id;
      };
      ids.judged = await save('judged', VERDICT, 1);
      ids.spamOnly = await save(
        'spam-only',
        {
          spam: {
            spam: false,
            score: 1.5,
            threshold: 3,
            reasons: ['header MISSING_DATE +1', 'header SUBJECT_ALL_CAPS +0.5'],
          },
        },
        2,
      );
      ids.plain = await save('plain', undefined, 3);
    } finally {
      await parser.close();
    }
  });
  afterAll(async () => {
    await service?.close();
  });

  it('GET returns authentication_results and spam for a message with a verdict', async () => {
    const response = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${ids.judged}`, {
      key: service.apiKey,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.authentication_results).toEqual({
      spf: { result: 'pass', domain: 'example.org' },
      dkim: [{ result: 'pass', domain: 'example.org', selector: 's1' }],
      dmarc: { result: 'pass', domain: 'example.org', policy: 'reject' },
      arc: { result: 'none' },
    });
    expect(response.body.data.spam).toEqual({
      is_spam: true,
      score: 15,
      threshold: 6,
      reasons: ['rspamd: 15 (reject)', 'rspamd GTUBE +0'],
    });
    expect(MessageSchema.safeParse(response.body.data).success).toBe(true);
  });

  it('returns only the fields whose stage ran, and none for a message without a verdict', async () => {
    const spamOnly = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${ids.spamOnly}`, {
      key: service.apiKey,
    });
    expect(spamOnly.body.data.spam).toEqual({
      is_spam: false,
      score: 1.5,
      threshold: 3,
      reasons: ['header MISSING_DATE +1', 'header SUBJECT_ALL_CAPS +0.5'],
    });
    expect(spamOnly.body.data).not.toHaveProperty('authentication_results');
    const plain = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${ids.plain}`, {
      key: service.apiKey,
    });
    expect(plain.body.data).not.toHaveProperty('authentication_results');
    expect(plain.body.data).not.toHaveProperty('spam');
  });

  it('lists carry the same fields, and select can pick them', async () => {
    const listed = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?limit=10`, {
      key: service.apiKey,
    });
    const byId = new Map(
      (listed.body.data as { id: string; spam?: { is_spam: boolean } }[]).map((message) => [message.id, message]),
    );
    expect(byId.get(ids.judged)?.spam?.is_spam).toBe(true);
    expect(byId.get(ids.plain)).not.toHaveProperty('spam');
    const selected = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${ids.judged}?select=spam`, {
      key: service.apiKey,
    });
    expect(Object.keys(selected.body.data).sort()).toEqual(['grant_id', 'id', 'object', 'spam']);
  });

  it('reaches nylas SDK users as extra fields of the message', async () => {
    const found = await service.nylas.messages.find({ identifier: grantId, messageId: ids.judged });
    const extra = found.data as unknown as {
      authenticationResults?: { dkim?: { result: string }[] };
      spam?: { isSpam: boolean; score: number };
    };
    expect(extra.authenticationResults?.dkim?.[0]?.result).toBe('pass');
    expect(extra.spam).toMatchObject({ isSpam: true, score: 15 });
  });
});
