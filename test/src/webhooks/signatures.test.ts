import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  nylasSignature,
  standardSignature,
  verifyWebhookSignature,
  WEBHOOK_SECRET_PREFIX,
} from '../../../src/index.js';
import { newWebhookSecret, signatureHeaders } from '../../../src/webhooks/signatures.js';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = '{"specversion":"1.0","type":"grant.created","id":"evt_1"}';
const now = new Date('2026-03-30T00:30:00Z');
const timestamp = Math.floor(now.getTime() / 1000);

describe('webhook signatures', () => {
  it('matches the Standard Webhooks reference test vector', () => {
    // From the standard-webhooks libraries' own tests.
    expect(
      standardSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs X-Nylas-Signature as hex HMAC-SHA256 of the body keyed with the whole secret string', () => {
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    expect(nylasSignature(secret, body)).toBe(expected);
    expect(nylasSignature(secret, Buffer.from(body))).toBe(expected);
  });

  it('makes secrets in the whsec_ format from 32 random bytes', () => {
    const made = newWebhookSecret(Buffer.alloc(32, 7));
    expect(made.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(made.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')).toEqual(Buffer.alloc(32, 7));
  });

  it('verifies both schemes and says why a request is rejected', () => {
    const headers = signatureHeaders(secret, 'evt_1', timestamp, body);
    expect(verifyWebhookSignature({ secret, body, headers, now })).toEqual({
      valid: true,
      scheme: 'standard',
      id: 'evt_1',
    });
    expect(verifyWebhookSignature({ secret, body, headers, scheme: 'nylas' })).toEqual({
      valid: true,
      scheme: 'nylas',
    });
    // Header names are case-insensitive; a WHATWG Headers object works too.
    expect(verifyWebhookSignature({ secret, body, headers: new Headers(headers), now }).valid).toBe(true);
    expect(
      verifyWebhookSignature({
        secret,
        body,
        headers: { 'X-Nylas-Signature': headers['x-nylas-signature'] },
        scheme: 'nylas',
      }).valid,
    ).toBe(true);

    const tampered = `${body} `;
    expect(verifyWebhookSignature({ secret, body: tampered, headers, now })).toMatchObject({
      valid: false,
      reason: 'no webhook-signature matches the body',
    });
    expect(verifyWebhookSignature({ secret, body: tampered, headers, scheme: 'nylas' })).toMatchObject({
      valid: false,
      reason: 'X-Nylas-Signature does not match the body',
    });
    const otherSecret = newWebhookSecret(Buffer.alloc(32, 1));
    expect(verifyWebhookSignature({ secret: otherSecret, body, headers, now }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret: otherSecret, body, headers, scheme: 'nylas' }).valid).toBe(false);
  });

  it('rejects replays outside the timestamp tolerance, and a changed id', () => {
    const headers = signatureHeaders(secret, 'evt_1', timestamp, body);
    const later = new Date(now.getTime() + 301_000);
    expect(verifyWebhookSignature({ secret, body, headers, now: later })).toMatchObject({ valid: false });
    expect(verifyWebhookSignature({ secret, body, headers, now: later, toleranceSeconds: 600 }).valid).toBe(true);
    expect(verifyWebhookSignature({ secret, body, headers: { ...headers, 'webhook-id': 'evt_2' }, now }).valid).toBe(
      false,
    );
    expect(
      verifyWebhookSignature({ secret, body, headers: { ...headers, 'webhook-timestamp': String(timestamp + 1) }, now })
        .valid,
    ).toBe(false);
    expect(verifyWebhookSignature({ secret, body, headers })).toMatchObject({
      valid: false,
      reason: expect.stringContaining('current time'),
    });
  });

  it('accepts any one matching signature of a space-separated list, and rejects missing or malformed headers', () => {
    const headers = signatureHeaders(secret, 'evt_1', timestamp, body);
    const listed = { ...headers, 'webhook-signature': `v1,AAAA v2,zzz ${headers['webhook-signature']}` };
    expect(verifyWebhookSignature({ secret, body, headers: listed, now }).valid).toBe(true);
    expect(verifyWebhookSignature({ secret, body, headers: {}, now })).toMatchObject({ valid: false });
    expect(verifyWebhookSignature({ secret, body, headers: {}, scheme: 'nylas' })).toMatchObject({ valid: false });
    expect(
      verifyWebhookSignature({ secret, body, headers: { 'x-nylas-signature': 'abc' }, scheme: 'nylas' }).valid,
    ).toBe(false);
    expect(
      verifyWebhookSignature({ secret, body, headers: { ...headers, 'webhook-timestamp': 'soon' }, now }).valid,
    ).toBe(false);
    // The sha256= prefix some senders use is tolerated.
    expect(
      verifyWebhookSignature({
        secret,
        body,
        headers: { 'x-nylas-signature': `sha256=${headers['x-nylas-signature']}` },
        scheme: 'nylas',
      }).valid,
    ).toBe(true);
  });
});
