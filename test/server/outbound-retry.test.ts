/**
 * The outbound retry schedule and give-up, with a controlled clock: a recipient deferred with 4xx is retried at
 * the configured times and delivered once; a relay that never comes back makes the message fail for good at the
 * give-up time, with a message.send_failed event. Also the service's own emails (webhook alerts) go out through
 * the same queue from AGENTPOST_SYSTEM_FROM.
 */
import { and, eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const SENDER = 'retry@retry.agentpost.localhost';

interface Status {
  email: string;
  status: string;
  attempts: number;
  code?: number;
  response?: string;
  nextAttemptAt?: number;
}

describe('outbound retries and give-up', () => {
  const clock = fixedClock('2026-06-01T12:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let grant: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      deps: { clock },
      env: {
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_OUTBOUND_RETRY_SCHEDULE: '2m,10m',
        AGENTPOST_OUTBOUND_GIVE_UP_AFTER: '30m',
        AGENTPOST_SYSTEM_FROM: 'alerts@ops.agentpost.localhost',
      },
    });
    grant = await createMailbox(service, SENDER);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  async function statuses(messageId: string): Promise<Status[]> {
    const message = await service.nylas.messages.find({ identifier: grant, messageId });
    return (message.data as unknown as { deliveryStatus?: Status[] }).deliveryStatus ?? [];
  }

  async function tick(ms: number): Promise<void> {
    clock.advance(ms);
    service.background.wake();
    await new Promise((resolve) => setTimeout(resolve, 150));
  }

  it('retries a 4xx recipient on the schedule and delivers it once, without resending to the one already delivered', async () => {
    let deferrals = 2;
    sink.onRecipient = (address) =>
      address === 'later@example.com' && deferrals-- > 0
        ? { code: 451, message: '4.2.1 mailbox busy, try later' }
        : undefined;
    try {
      const sent = await service.nylas.messages.send({
        identifier: grant,
        requestBody: {
          to: [{ email: 'now@example.com' }, { email: 'later@example.com' }],
          subject: 'Busy mailbox',
          body: 'x',
        },
      });
      const accepted = Math.floor(clock.now().getTime() / 1000);
      const first = await eventually(async () => {
        const list = await statuses(sent.data.id);
        return list.find((entry) => entry.email === 'later@example.com')?.status === 'deferred' ? list : undefined;
      });
      expect(first.find((entry) => entry.email === 'now@example.com')).toMatchObject({
        status: 'delivered',
        attempts: 1,
      });
      expect(first.find((entry) => entry.email === 'later@example.com')).toMatchObject({
        status: 'deferred',
        attempts: 1,
        code: 451,
        nextAttemptAt: accepted + 120,
      });

      // Before the retry time nothing happens.
      await tick(60_000);
      expect((await statuses(sent.data.id)).find((entry) => entry.email === 'later@example.com')?.attempts).toBe(1);
      await tick(60_000);
      const second = await eventually(async () => {
        const entry = (await statuses(sent.data.id)).find((item) => item.email === 'later@example.com');
        return entry?.attempts === 2 ? entry : undefined;
      });
      expect(second).toMatchObject({ status: 'deferred', nextAttemptAt: accepted + 120 + 600 });
      await tick(600_000);
      const delivered = await eventually(async () => {
        const entry = (await statuses(sent.data.id)).find((item) => item.email === 'later@example.com');
        return entry?.status === 'delivered' ? entry : undefined;
      });
      expect(delivered.attempts).toBe(3);
      const copies = sink.messages.filter((message) =>
        message.rcptTo.some((address) => address === 'now@example.com' || address === 'later@example.com'),
      );
      expect(copies.map((message) => message.rcptTo)).toEqual([['now@example.com'], ['later@example.com']]);
    } finally {
      sink.onRecipient = undefined;
    }
  });

  it('gives up at AGENTPOST_OUTBOUND_GIVE_UP_AFTER: the recipient fails for good with a message.send_failed event', async () => {
    await sink.stop();
    try {
      const sent = await service.nylas.messages.send({
        identifier: grant,
        requestBody: { to: [{ email: 'unreachable@example.com' }], subject: 'Never arrives', body: 'x' },
      });
      await eventually(async () => ((await statuses(sent.data.id))[0]?.status === 'deferred' ? true : undefined));
      // 2 m, 10 m, 10 m, then the last attempt at the 30 m deadline.
      for (let step = 0; step < 6; step += 1) await tick(10 * 60_000);
      const [final] = await eventually(async () => {
        const list = await statuses(sent.data.id);
        return list[0]?.status === 'failed' ? list : undefined;
      });
      expect(final!.response).toMatch(/gave up after/);
      expect(final!.attempts).toBeGreaterThanOrEqual(4);
      const events = await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(
          and(eq(tables.outboxEvents.type, 'message.send_failed'), eq(tables.outboxEvents.objectId, sent.data.id)),
        );
      expect(events).toHaveLength(1);
      // No job is left for it.
      const jobs = await service.core.deps.db.orm
        .select()
        .from(tables.jobs)
        .where(eq(tables.jobs.kind, 'mail.deliver'));
      expect(jobs.filter((job) => job.deadAt === null)).toEqual([]);
    } finally {
      await sink.start();
    }
  });

  it("sends the service's own emails (the Notifier) from AGENTPOST_SYSTEM_FROM through the queue", async () => {
    sink.messages.length = 0;
    await service.core.sending.outbound.notifier.send({
      to: ['ops@example.com'],
      subject: 'Webhook failing',
      text: 'Your endpoint https://example.com/hook is failing.',
    });
    const [alert] = await sink.waitFor(1);
    expect(alert!.mailFrom).toBe('alerts@ops.agentpost.localhost');
    const parsed = await simpleParser(alert!.raw);
    expect(parsed.from?.value[0]).toEqual({ name: 'Agentpost', address: 'alerts@ops.agentpost.localhost' });
    expect(parsed.subject).toBe('Webhook failing');
    expect(parsed.text).toContain('is failing');
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
  });
});
