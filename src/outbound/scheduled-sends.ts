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
import type { Job, JobHandler } from '../jobs/index.js';
import type { ScheduledMessageRefInput } from '../schemas/send.js';
import type { Composition, DraftRecord, ScheduledSends, ScheduleOptions } from './contracts.js';
import { findScheduled, listScheduled, stopScheduled } from './scheduled-sends-manage.js';
import { runSchedule } from './scheduled-sends-run.js';
import { schedule } from './scheduled-sends-schedule.js';
import { dueSchedules, nextScheduleDue } from './outbound-store.js';
import {
  removeDraft,
  SCHEDULED_SEND_JOB,
  type ScheduledSendParts,
  type ScheduledSendsState,
} from './scheduled-sends-state.js';

export { SCHEDULED_SEND_JOB } from './scheduled-sends-state.js';

/** Creates the scheduled sends: scheduling, the job that sends, and listing and stopping schedules. */
export function createScheduledSends(deps: CoreDeps, parts: ScheduledSendParts): ScheduledSends {
  const { db, clock, newId, logger } = deps;
  const state: ScheduledSendsState = { ...parts, db, clock, newId, logger, now: () => unixSeconds(clock.now()) };

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

    async runDue(applicationId: string, at: number): Promise<number> {
      let sent = 0;
      for (const row of await dueSchedules(db, applicationId, at)) {
        // The handler of the worker's job, given the job it would have had (src/outbound/scheduled-sends-run.ts).
        const job: Job = {
          id: `test-clock:${row.id}`,
          kind: SCHEDULED_SEND_JOB,
          payload: { schedule_id: row.id },
          runAt: row.sendAt * 1000,
          attempts: 1,
          leaseOwner: null,
          leaseExpiresAt: null,
          lastError: null,
          dedupeKey: null,
          createdAt: row.createdAt * 1000,
          deadAt: null,
          orderKey: null,
        };
        await runSchedule(state, job);
        sent++;
      }
      return sent;
    },

    nextDue: (applicationId: string) => nextScheduleDue(db, applicationId),
  };
}
