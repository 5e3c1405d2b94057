/**
 * Warm-up by default (issue 23 part 4), through the nylas SDK: a custom domain registered through the domains API
 * starts on the ramp of `AGENTPOST_WARMUP_SCHEDULE` (day 1 first); a grant on it reaches the day's cap and gets 429
 * with `Retry-After`, naming the warm-up; trial subdomains and `AGENTPOST_DOMAINS` domains are established (no cap);
 * `off` starts custom domains without a ramp, and the API still puts one on the default ramp.
 */
import { ServiceAccountSigner } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/** A service, a signer for its Manage Domains calls, and a helper that registers and verifies a custom domain. */
async function setUp(env: Record<string, string>, clock: ReturnType<typeof fixedClock>) {
  const service = await startTestService({ env, deps: { clock } });
  const credentials = await service.core.accounts.applications.createServiceAccount(
    await service.core.accounts.applications.defaultApplicationId(),
  );
  const signer = new ServiceAccountSigner({
    privateKeyPem: credentials.private_key,
    privateKeyId: credentials.private_key_id,
  });
  /** Registers a custom domain through the SDK and verifies its ownership record (published in the test's DNS). */
  const customDomain = async (address: string, warmUp?: boolean) => {
    const { data: domain } = await service.nylas.domains.create({
      requestBody: { name: address, domainAddress: address, ...(warmUp !== undefined ? { warmUp } : {}) },
      signer,
    });
    const { data: info } = await service.nylas.domains.info({
      domainId: domain.id!,
      requestBody: { type: 'ownership' },
      signer,
    });
    const record = (info as unknown as { attempt: { options: { host: string; value: string } } }).attempt.options;
    service.dns.txt.set(record.host, [[record.value]]);
    expect(
      (await service.nylas.domains.verify({ domainId: domain.id!, requestBody: { type: 'ownership' }, signer })).data,
    ).toMatchObject({ status: 'done' });
    return domain as unknown as { id: string; warmUp: boolean; warmUpStartedAt?: number };
  };
  return { service, signer, customDomain };
}

const people = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({ email: `${prefix}${index}@example.com` }));

describe('warm-up by default: custom domains ramp up, established domains do not', () => {
  // The server's clock starts at the real time (the SDK signs with Date.now()) and moves on later.
  const clock = fixedClock(new Date().toISOString());
  let sink: SmtpSink;
  let service: TestService;
  let setup: Awaited<ReturnType<typeof setUp>>;
  let fresh: { id: string; warmUp: boolean; warmUpStartedAt?: number };
  let agent: string;
  const send = (grant: string, to: { email: string }[]) =>
    service.nylas.messages.send({ identifier: grant, requestBody: { to, subject: 'Hello', body: 'Hi' } });

  beforeAll(async () => {
    sink = await startSmtpSink();
    setup = await setUp(
      {
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_WARMUP_SCHEDULE: '3,5',
        AGENTPOST_DOMAINS: 'declared.example.org',
      },
      clock,
    );
    service = setup.service;
    fresh = await setup.customDomain('fresh.example.net');
    agent = await createMailbox(service, 'agent@fresh.example.net');
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  it('puts a custom domain on the ramp when it is registered; trial and declared domains count as established', async () => {
    expect(fresh).toMatchObject({ warmUp: true, warmUpStartedAt: Math.floor(clock.now().getTime() / 1000) });
    const { data: all } = await service.nylas.domains.list({ signer: setup.signer });
    const byAddress = new Map(all.map((domain) => [domain.domainAddress, domain as unknown as { warmUp: boolean }]));
    expect(byAddress.get('declared.example.org')!.warmUp).toBe(false);
    const { data: trial } = await service.nylas.domains.create({
      requestBody: { name: 'Trial', domainAddress: 'warmless.agentpost.localhost' },
      signer: setup.signer,
    });
    expect((trial as unknown as { warmUp: boolean }).warmUp).toBe(false);
    // The API overrides the default per domain.
    const quiet = await setup.customDomain('quiet.example.net', false);
    expect(quiet.warmUp).toBe(false);
    const { data: keen } = await service.nylas.domains.create({
      requestBody: { name: 'Keen', domainAddress: 'keen.agentpost.localhost', warmUp: true } as never,
      signer: setup.signer,
    });
    expect((keen as unknown as { warmUp: boolean }).warmUp).toBe(true);

    for (const address of [
      'agent@declared.example.org',
      'agent@warmless.agentpost.localhost',
      'agent@quiet.example.net',
    ]) {
      const grant = await createMailbox(service, address);
      expect((await send(grant, people('bulk', 20))).data.id, address).toBeDefined();
    }
  });

  it("caps a grant on the new domain at the day's cap with 429 and Retry-After naming the warm-up, day by day", async () => {
    await send(agent, people('a', 2));
    await send(agent, people('b', 1));
    const refused = await sdkError(send(agent, people('c', 1)));
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers?.['retry-after']);
    const midnight = (Math.floor(clock.now().getTime() / 86_400_000) + 1) * 86_400_000;
    expect(retryAfter).toBe(Math.max(1, Math.ceil((midnight - clock.now().getTime()) / 1000)));
    expect(refused.message).toMatch(
      /^The domain fresh\.example\.net is warming up: on day 1 of its 2-day warm-up ramp it may send to 3 recipients a day \(UTC\); 3 were sent today and this send has 1, so nothing was sent\. The cap resets at .* to 5 recipients\./,
    );

    clock.advance(86_400_000);
    await send(agent, people('d', 5));
    const dayTwo = await sdkError(send(agent, people('e', 1)));
    expect(dayTwo.statusCode).toBe(429);
    expect(dayTwo.message).toContain('on day 2 of its 2-day warm-up ramp it may send to 5 recipients a day (UTC)');
    expect(dayTwo.message).toContain('and the ramp is then over (no cap)');

    clock.advance(86_400_000);
    expect((await send(agent, people('f', 40))).data.id).toBeDefined();
  });
});

describe('AGENTPOST_WARMUP_SCHEDULE=off', () => {
  const clock = fixedClock(new Date().toISOString());
  let sink: SmtpSink;
  let setup: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    sink = await startSmtpSink();
    setup = await setUp(
      { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`, AGENTPOST_WARMUP_SCHEDULE: 'off' },
      clock,
    );
  });
  afterAll(async () => {
    await setup?.service.close();
    await sink?.close();
  });

  it('registers custom domains without a ramp; warm_up: true through the API follows the default four-week ramp', async () => {
    const plain = await setup.customDomain('plain.example.net');
    expect(plain.warmUp).toBe(false);
    const plainAgent = await createMailbox(setup.service, 'agent@plain.example.net');
    expect(
      (
        await setup.service.nylas.messages.send({
          identifier: plainAgent,
          requestBody: { to: people('p', 60), subject: 'x', body: 'x' },
        })
      ).data.id,
    ).toBeDefined();

    const ramped = await setup.customDomain('ramped.example.net', true);
    expect(ramped.warmUp).toBe(true);
    const agent = await createMailbox(setup.service, 'agent@ramped.example.net');
    await setup.service.nylas.messages.send({
      identifier: agent,
      requestBody: { to: people('r', 50), subject: 'x', body: 'x' },
    });
    const refused = await sdkError(
      setup.service.nylas.messages.send({
        identifier: agent,
        requestBody: { to: people('s', 1), subject: 'x', body: 'x' },
      }),
    );
    expect(refused.statusCode).toBe(429);
    expect(refused.message).toContain(
      'is warming up: on day 1 of its 28-day warm-up ramp it may send to 50 recipients a day (UTC)',
    );
  });
});
