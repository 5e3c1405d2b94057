/**
 * The kill switch and a scheduled send in flight (issue 37, item 6): the grant is suspended after the
 * `mail.send_scheduled` job read it as active and before its sending transaction commits. The transaction reads the
 * grant again and stops: nothing is sent, the schedule stays pending and the job is put back; after the resume the
 * same job sends it, once.
 */
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrate, tables, type Database } from '../../../storage/index.js';
import { createCore, createLogger, openSecretBox, randomId, type Core, type Principal } from '../../../src/index.js';
import { fixedClock } from '../../helpers/clock.js';
import { fakeDns } from '../../helpers/dns.js';
import { tempDir, testConfig } from '../../helpers/service.js';

const DOMAIN = 'inflight.agentpost.localhost';

describe('a scheduled send in flight when its grant is suspended', () => {
  const clock = fixedClock('2026-03-30T12:00:00Z');
  const dir = tempDir();
  let real: Database;
  let core: Core;
  let principal: Principal;
  /** Set to a grant id: the next write (the sending transaction) is preceded by that grant's suspension. */
  let suspendBeforeNextWrite: string | undefined;

  beforeAll(async () => {
    const config = testConfig(`file:${join(dir.path, 'agentpost.db')}`);
    real = await createDb({ url: config.databaseUrl });
    await migrate(real);
    // The database as the core sees it: the same, but a write can be made to wait behind a suspension.
    const db = new Proxy(real, {
      get(target, property) {
        if (property === 'write' && suspendBeforeNextWrite !== undefined) {
          const grantId = suspendBeforeNextWrite;
          suspendBeforeNextWrite = undefined;
          return async (work: Parameters<Database['write']>[0]) => {
            await target.write((tx) =>
              tx
                .update(tables.grants)
                .set({ suspendedAt: 1, suspendedReason: 'stopped mid-send' })
                .where(eq(tables.grants.id, grantId)),
            );
            return target.write(work);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const logger = createLogger('silent');
    core = createCore({
      db,
      config,
      clock,
      secrets: await openSecretBox({ db: real, config, logger, clock }),
      newId: randomId,
      randomBytes,
      dns: fakeDns(),
      logger,
    });
    await core.accounts.applications.ensureDefaultApplication();
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    await core.accounts.domains.create(principal, { name: DOMAIN, domain_address: DOMAIN });
  });
  afterAll(async () => {
    await core.mail.inbound.close();
    void real.close();
    dir.remove();
  });

  it('is stopped inside its sending transaction, waits, and leaves once after the resume', async () => {
    const newGrant = async (name: string) =>
      (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: `${name}@${DOMAIN}` } }))
        .grant.id;
    const sender = await newGrant('sender');
    await newGrant('receiver');
    const now = Math.floor(clock.now().getTime() / 1000);
    const scheduled = (await core.sending.outbound.send(principal, {
      grant_id: sender,
      to: [{ email: `receiver@${DOMAIN}` }],
      subject: 'In flight',
      body: 'Hello',
      send_at: now + 60,
    })) as { data: { schedule_id: string } };
    const scheduleId = scheduled.data.schedule_id;
    clock.advance(61_000);
    const [row] = await real.orm
      .select()
      .from(tables.jobs)
      .where(eq(tables.jobs.dedupeKey, `mail.send_scheduled:${scheduleId}`));
    const job = row!;
    const run = () =>
      core.jobs.handlers['mail.send_scheduled']!(job, { owner: 'test', extendLease: () => Promise.resolve(true) });
    const sent = () =>
      real.orm
        .select()
        .from(tables.outboundMessages)
        .where(and(eq(tables.outboundMessages.grantId, sender), eq(tables.outboundMessages.kind, 'message')));
    const schedule = async () =>
      (await real.orm.select().from(tables.scheduledMessages).where(eq(tables.scheduledMessages.id, scheduleId)))[0]!;

    suspendBeforeNextWrite = sender;
    const stopped = await run();
    // Stopped in the transaction (the check before it had seen an active grant).
    expect(stopped).toMatchObject({ type: 'retry', error: 'the grant was suspended' });
    expect(suspendBeforeNextWrite).toBeUndefined();
    expect(await sent()).toHaveLength(0);
    expect((await schedule()).status).toBe('pending');
    // Run again while still suspended: it waits again, without reaching the sending transaction.
    expect(await run()).toMatchObject({ type: 'retry', error: 'the grant is suspended' });

    await core.accounts.grants.resume(principal, sender);
    const [woken] = await real.orm
      .select({ runAt: tables.jobs.runAt })
      .from(tables.jobs)
      .where(eq(tables.jobs.dedupeKey, `mail.send_scheduled:${scheduleId}`));
    expect(woken!.runAt).toBe(Math.floor(clock.now().getTime() / 1000) * 1000);
    expect(await run()).toMatchObject({ type: 'done' });
    expect(await sent()).toHaveLength(1);
    expect((await schedule()).status).toBe('success');
    expect(await run()).toMatchObject({ type: 'done' });
    expect(await sent()).toHaveLength(1);
  });
});
