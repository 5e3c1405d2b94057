/**
 * @module outbound/scheduled-sends-state
 * What the parts of the scheduled sends (./scheduled-sends.ts) share: the parts they are made with, the state
 * `createScheduledSends` makes of them, the job kind, and the removal of a draft with its pending schedules.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { GrantService } from '../grants/contracts.js';
import type { JobQueue } from '../jobs/index.js';
import type { MailStore } from '../messages/index.js';
import type { Providers } from '../providers/index.js';
import type { SendResult } from '../schemas/send.js';
import type {
  AcceptOptions,
  Composer,
  Composition,
  DraftRecord,
  DraftVersions,
  IdempotencyStore,
  OutboundStage,
} from './contracts.js';

/** The job kind of a scheduled send. */
export const SCHEDULED_SEND_JOB = 'mail.send_scheduled';

/** Parts the scheduled sends use. */
export interface ScheduledSendParts {
  grants: GrantService;
  store: MailStore;
  jobs: JobQueue;
  idempotency: IdempotencyStore;
  versions: DraftVersions;
  build: Composer['build'];
  accept: (composition: Composition, options: AcceptOptions) => Promise<SendResult>;
  /** The outbound stage: a send is checked when scheduled (without the quota) and again when it fires (in `accept`). */
  stage: OutboundStage;
  /** The mailbox providers: a removed draft of a connected account goes from its server too. */
  providers: Providers;
}

/** What the functions of the scheduled sends share, made once by `createScheduledSends`: its deps and parts. */
export interface ScheduledSendsState extends ScheduledSendParts, Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger'> {
  /** The clock's time in unix seconds. */
  now: () => number;
}

/** Removes a draft in the caller's transaction and cancels its pending schedules (except `keep`). */
export async function removeDraft(
  state: ScheduledSendsState,
  tx: Tx,
  record: DraftRecord,
  keep?: string,
): Promise<void> {
  const { store, providers, now } = state;
  const pending = await tx
    .select()
    .from(tables.scheduledMessages)
    .where(
      and(eq(tables.scheduledMessages.draftId, record.details.id), eq(tables.scheduledMessages.status, 'pending')),
    );
  for (const schedule of pending) {
    if (schedule.id === keep) continue;
    await tx
      .update(tables.scheduledMessages)
      .set({ status: 'cancelled', error: 'the draft was sent or deleted', closeTime: now(), updatedAt: now() })
      .where(eq(tables.scheduledMessages.id, schedule.id));
    await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${schedule.id}`));
  }
  const { grant, provider } = await providers.ofGrantId(tx, record.details.grantId);
  await provider.draftRemoved(tx, grant, {
    draftId: record.details.id,
    grantId: grant.id,
    messageId: record.row.id,
    headerMessageId: record.details.headerMessageId,
  });
  await store.destroy(tx, [record.row]);
}
