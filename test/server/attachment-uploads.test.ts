/**
 * Large-attachment upload sessions through the nylas SDK (`attachments.createUploadSession` /
 * `completeUploadSession`): the bytes go by a plain PUT to the pre-signed URL, and the session's id is then an
 * attachment of a send or a draft of the same mailbox, well past the 3 MB JSON limit.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

const DOMAIN = 'uploads.agentpost.localhost';

describe('large-attachment upload sessions', () => {
  let service: TestService;
  let sender: string;
  let recipient: string;
  let other: Nylas;
  let otherGrant: string;
  const clock = fixedClock(new Date().toISOString());

  beforeAll(async () => {
    service = await startTestService({ deps: { clock } });
    sender = await createMailbox(service, `sender@${DOMAIN}`);
    recipient = await createMailbox(service, `recipient@${DOMAIN}`);
    const second = await service.core.accounts.applications.createApplication({ name: 'Second', plan: 'production' });
    other = service.client(second.apiKey);
    await request(service.url, 'POST', '/v3/admin/domains', {
      key: second.apiKey,
      body: { name: 'o', domain_address: 'other-app.agentpost.localhost' },
    });
    otherGrant = (
      await other.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'x@other-app.agentpost.localhost' } } as never,
      })
    ).data.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  async function put(url: string, headers: Record<string, string>, bytes: Buffer): Promise<Response> {
    return fetch(url, { method: 'PUT', headers, body: new Uint8Array(bytes) });
  }

  it('stages an 8 MB file, then sends it and saves it in a draft by id', async () => {
    const file = randomBytes(8 * 1024 * 1024);
    const session = await service.nylas.attachments.createUploadSession({
      identifier: sender,
      requestBody: { filename: 'dataset.bin', contentType: 'application/octet-stream', size: file.length },
    });
    expect(session.data).toMatchObject({
      attachmentId: expect.any(String),
      method: 'PUT',
      url: expect.stringMatching(/^http:\/\/.+\/uploads\/.+\?token=/),
      headers: {},
      maxSize: 40 * 1024 * 1024,
      size: file.length,
      filename: 'dataset.bin',
      contentType: 'application/octet-stream',
      grantId: sender,
    });
    expect(Date.parse(session.data.expiresAt) - clock.now().getTime()).toBeGreaterThan(59 * 60 * 1000);

    const uploaded = await put(session.data.url, { 'content-type': 'application/octet-stream' }, file);
    expect(uploaded.status).toBe(200);
    const completed = await service.nylas.attachments.completeUploadSession({
      identifier: sender,
      attachmentId: session.data.attachmentId,
    });
    expect(completed.data).toEqual({ attachmentId: session.data.attachmentId, grantId: sender, status: 'ready' });
    // Completing again is harmless.
    expect(
      (
        await service.nylas.attachments.completeUploadSession({
          identifier: sender,
          attachmentId: session.data.attachmentId,
        })
      ).data.status,
    ).toBe('ready');

    const sent = await service.nylas.messages.send({
      identifier: sender,
      requestBody: {
        to: [{ email: `recipient@${DOMAIN}` }],
        subject: 'The dataset',
        body: 'attached',
        attachments: [{ id: session.data.attachmentId } as never],
      },
    });
    expect(sent.data.attachments?.[0]).toMatchObject({ filename: 'dataset.bin', size: file.length });

    const received = (
      await service.nylas.messages.list({ identifier: recipient, queryParams: { subject: 'The dataset' } })
    ).data[0]!;
    const attachment = received.attachments![0]!;
    expect(attachment).toMatchObject({ filename: 'dataset.bin', size: file.length });
    const bytes = await service.nylas.attachments.downloadBytes({
      identifier: recipient,
      attachmentId: attachment.id,
      queryParams: { messageId: received.id },
    });
    expect(Buffer.compare(bytes, file)).toBe(0);

    // The session stays usable until it expires: a draft takes it too.
    const draft = await service.nylas.drafts.create({
      identifier: sender,
      requestBody: {
        to: [{ email: `recipient@${DOMAIN}` }],
        subject: 'Draft with dataset',
        attachments: [{ id: session.data.attachmentId, filename: 'renamed.bin' } as never],
      },
    });
    expect(draft.data.attachments?.[0]).toMatchObject({ filename: 'renamed.bin', size: file.length });
  });

  it('refuses bad session requests with 400 naming the field', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['filename', { contentType: 'text/plain' }],
      ['content_type', { filename: 'a.txt', contentType: 'not a type' }],
      ['size', { filename: 'a.txt', contentType: 'text/plain', size: 40 * 1024 * 1024 + 1 }],
      ['filename', { filename: 'a\r\nb.txt', contentType: 'text/plain' }],
    ];
    for (const [field, body] of cases) {
      const error = await sdkError(
        service.nylas.attachments.createUploadSession({ identifier: sender, requestBody: body as never }),
      );
      expect(error.statusCode, field).toBe(400);
      expect(error.type, field).toBe('invalid_request_error');
      expect(error.message, field).toContain(field);
    }
  });

  it('refuses to complete before the upload, fails a size mismatch, and a wrong token is a 404', async () => {
    const session = (
      await service.nylas.attachments.createUploadSession({
        identifier: sender,
        requestBody: { filename: 'a.txt', contentType: 'text/plain', size: 10 },
      })
    ).data;
    const early = await sdkError(
      service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
    );
    expect(early.statusCode).toBe(400);
    expect(early.message).toContain('PUT the file');
    const unusable = await sdkError(
      service.nylas.messages.send({
        identifier: sender,
        requestBody: { to: [{ email: `recipient@${DOMAIN}` }], attachments: [{ id: session.attachmentId } as never] },
      }),
    );
    expect(unusable.statusCode).toBe(400);
    expect(unusable.message).toContain('attachments.0.id');

    const wrongToken = await put(session.url.replace(/token=[^&]+/, 'token=nope'), {}, Buffer.from('0123456789'));
    expect(wrongToken.status).toBe(404);
    const noToken = await put(session.url.replace(/\?.*$/, ''), {}, Buffer.from('0123456789'));
    expect(noToken.status).toBe(404);

    expect((await put(session.url, {}, Buffer.from('too short'))).status).toBe(200);
    const mismatch = await sdkError(
      service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
    );
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.message).toContain('size');
    const failed = await sdkError(
      service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
    );
    expect(failed.message).toContain('failed');
    expect((await put(session.url, {}, Buffer.from('0123456789'))).status).toBe(400);
  });

  it('a session expires after an hour', async () => {
    const session = (
      await service.nylas.attachments.createUploadSession({
        identifier: sender,
        requestBody: { filename: 'late.txt', contentType: 'text/plain' },
      })
    ).data;
    expect((await put(session.url, {}, Buffer.from('late'))).status).toBe(200);
    clock.advance(61 * 60 * 1000);
    const expired = await sdkError(
      service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
    );
    expect(expired.statusCode).toBe(400);
    expect(expired.message).toContain('expired');
    // Opening a new session removes the expired ones of the mailbox.
    await service.nylas.attachments.createUploadSession({
      identifier: sender,
      requestBody: { filename: 'next.txt', contentType: 'text/plain' },
    });
    expect(
      (
        await sdkError(
          service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
        )
      ).statusCode,
    ).toBe(404);
  });

  it("another application's or another mailbox's session is a 404", async () => {
    const session = (
      await service.nylas.attachments.createUploadSession({
        identifier: sender,
        requestBody: { filename: 'mine.txt', contentType: 'text/plain' },
      })
    ).data;
    expect((await put(session.url, {}, Buffer.from('mine'))).status).toBe(200);
    expect(
      (
        await sdkError(
          other.attachments.createUploadSession({
            identifier: sender,
            requestBody: { filename: 'x.txt', contentType: 'text/plain' },
          }),
        )
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await sdkError(
          other.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId }),
        )
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await sdkError(
          other.attachments.completeUploadSession({ identifier: otherGrant, attachmentId: session.attachmentId }),
        )
      ).statusCode,
    ).toBe(404);
    await service.nylas.attachments.completeUploadSession({ identifier: sender, attachmentId: session.attachmentId });
    // Another mailbox of the same application cannot send it either.
    const foreign = await sdkError(
      service.nylas.messages.send({
        identifier: recipient,
        requestBody: { to: [{ email: `sender@${DOMAIN}` }], attachments: [{ id: session.attachmentId } as never] },
      }),
    );
    expect(foreign.statusCode).toBe(404);
    expect(foreign.message).toContain('attachments[0].id');
  });
});
