/**
 * @module outbound/scheduled-sends
 * Scheduled sends. A send with `send_at` is held as a draft until its time; a `mail.send_scheduled` job of the
 * durable queue sends it then. Stopping it cancels the job (and removes the draft unless it was the caller's own
 * draft or `use_draft` was set). The schedule's state is checked again inside the sending transaction, so a stop
 * that races the job either wins (nothing is sent) or comes too late (400: already sent), never both.
 *
 * The scheduled sends are plain functions over a small state made here (./scheduled-sends-state.ts): scheduling
 * (./scheduled-sends-schedule.ts), the job that sends (./scheduled-sends-run.ts), and listing and stopping schedules
 * (./scheduled-sends-manage.ts).
 */
import type { Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { GrantService } from '../grants/contracts.js';
import type { Job, JobQueue, JobHandler } from '../jobs/index.js';
import type { MailStore } from '../messages/index.js';
import type { ScheduledMessageRefInput, SendResult } from '../schemas/send.js';
import type {
  AcceptOptions,
  Composer,
  Composition,
  DraftRecord,
  DraftVersions,
  IdempotencyStore,
  OutboundStage,
  ScheduledSends,
  ScheduleOptions,
} from './contracts.js';
import type { Providers } from '../providers/index.js';
import { findScheduled, listScheduled, stopScheduled } from './scheduled-sends-manage.js';
import { runSchedule } from './scheduled-sends-run.js';
import { schedule } from './scheduled-sends-schedule.js';
import { removeDraft, SCHEDULED_SEND_JOB, type ScheduledSendsState } from './scheduled-sends-state.js';

export { SCHEDULED_SEND_JOB } from './scheduled-sends-state.js';

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

/** Creates the scheduled sends: scheduling, the job that sends, and listing and stopping schedules. */
export function createScheduledSends(deps: CoreDeps, parts: ScheduledSendParts): ScheduledSends {
  const { db, clock, newId, logger } = deps;
  const { grants, store, jobs, idempotency, versions, build, accept, stage, providers } = parts;
  const now = () => unixSeconds(clock.now());
  const state: ScheduledSendsState = {
    db,
    clock,
    newId,
    logger,
    grants,
    store,
    jobs,
    idempotency,
    versions,
    build,
    accept,
    stage,
    providers,
    now,
  };

  /** The `mail.send_scheduled` handler: sends the held draft, or records why it could not be sent. */
  const runScheduleHandler: JobHandler = (job: Job) => runSchedule(state, job);

  return {
    schedule: (composition: Composition, options: ScheduleOptions) => schedule(state, composition, options),
    removeDraft: (tx: Tx, record: DraftRecord, keep?: string) => removeDraft(state, tx, record, keep),

    /** Scheduled sends of a mailbox, the latest send time first (at most 200). */
    listScheduled: (principal: Principal, input: { grant_id: string }) => listScheduled(state, principal, input),

    /** One scheduled send. */
    findScheduled: (principal: Principal, input: ScheduledMessageRefInput) => findScheduled(state, principal, input),

    /** Stops a pending scheduled send. A send already made is a 400. */
    stopScheduled: (principal: Principal, input: ScheduledMessageRefInput) => stopScheduled(state, principal, input),

    handlers: { [SCHEDULED_SEND_JOB]: runScheduleHandler },
  };
}
