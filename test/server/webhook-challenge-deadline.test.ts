/**
 * The webhook challenge has its own 10-second deadline (the specification's), whatever the delivery deadline
 * `AGENTPOST_WEBHOOK_TIMEOUT_MS` is: an endpoint that echoes the challenge after 12 s is not verified even with a
 * 30 s delivery timeout. This test really waits about 10 seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

describe('the webhook challenge deadline', () => {
  let service: TestService;
  let endpoint: WebhookReceiver;

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true', AGENTPOST_WEBHOOK_TIMEOUT_MS: '30000' },
    });
    endpoint = await startReceiver();
  });
  afterAll(async () => {
    await endpoint?.close();
    await service?.close();
  });

  it('does not verify an endpoint that answers its challenge after 12 s, though deliveries may take 30 s', async () => {
    let hungUpBeforeAnswer = false;
    endpoint.onChallenge = (value, response) => {
      const timer = setTimeout(() => response.writeHead(200).end(value), 12_000);
      // The service closing the request before the 12 s are up is its deadline passing.
      response.on('close', () => {
        if (!response.writableEnded) hungUpBeforeAnswer = true;
        clearTimeout(timer);
      });
    };
    const error = await sdkError(
      service.nylas.webhooks.create({
        requestBody: { triggerTypes: ['grant.created' as never], webhookUrl: endpoint.url },
      }),
    );
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain('webhook_url: verification failed: no answer within 10 s');
    expect(error.message).toContain('within 10 s.');
    expect(endpoint.challenges).toHaveLength(1);
    // It gave up at its own deadline (not the 30 s one), before the endpoint's answer.
    await expect.poll(() => hungUpBeforeAnswer).toBe(true);
    expect((await service.nylas.webhooks.list()).data).toEqual([]);
  }, 40_000);
});
