/**
 * @module background/test-clock
 * The test clock of a test-mode application (issue 40, item 8; docs/testing-agents.md): `advance` moves its virtual
 * time forward and runs, in order of due time and before it answers, what fell due for that application, each
 * due-runner at the due time it reached (so what it stores carries that time):
 *
 * 1. scheduled sends (the worker's `mail.send_scheduled` handler, src/outbound/scheduled-sends.ts),
 * 2. follow-ups (src/outbound/follow-ups.ts: a reply cancels, the due ones are sent through `send_message`),
 * 3. hold expiries (src/calendar/hold-service.ts, `event.hold_expired`),
 * 4. calendar timers (src/calendar/event-timers.ts, `event.starting` and `event.ending`),
 * 5. the application's policy upkeep (retention periods of its mail, src/admin/policy-upkeep.ts),
 *
 * and any runner added to {@link DUE_RUNNERS}. Each runs inside the application's clock scope (src/clock-scope.ts).
 * The real worker leaves a test-mode application's due work alone (each pass above skips test-mode applications), so a
 * virtual clock behind real time never fires anything early. Provider tokens are refreshed when used, a minute before
 * they expire by the clock the operation reads, so they follow the test clock with nothing to run here.
 */
import { runInTestClock } from '../clock-scope.js';
import type { Core } from '../core-types.js';
import { AppError } from '../errors.js';
import type { FollowUpSender } from '../outbound/index.js';

/** What a due-runner is given besides the time: the application, and how a follow-up is sent. */
export interface DueRunOptions {
  /** The test-mode application whose due work runs (always set when the test clock calls). */
  applicationId: string;
  /** `send_message` through the operation runner, for work that sends as the agent would. */
  send: FollowUpSender;
  /** The clock's time before this stop: what fell due after it is due now. */
  since: Date;
}

/**
 * Work that falls due by time, for one test-mode application. `run` does what is due by `now` (the clock reads `now`
 * too) and answers how many things it did; `nextDueAt`, when it can tell, the earliest due time (unix ms) of what
 * is pending, so the test clock stops there first. A runner without it runs at every stop and at the target.
 */
export interface DueRunner {
  name: string;
  run(core: Core, now: Date, options: DueRunOptions): Promise<number>;
  nextDueAt?(core: Core, applicationId: string): Promise<number | undefined>;
}

const seconds = (at: number | undefined) => (at === undefined ? undefined : at * 1000);

/** The due-runners the test clock calls, in this order at each stop. */
export const DUE_RUNNERS: readonly DueRunner[] = [
  {
    name: 'scheduled_sends',
    run: (core, now, { applicationId }) =>
      core.sending.drafts.runDueScheduled(applicationId, Math.floor(now.getTime() / 1000)),
    nextDueAt: async (core, applicationId) => seconds(await core.sending.drafts.nextScheduledDue(applicationId)),
  },
  {
    name: 'follow_ups',
    run: async (core, now, options) => {
      const done = await core.sending.followUps.runDue(now, options);
      return done.sent + done.cancelled + done.failed;
    },
    nextDueAt: async (core, applicationId) => seconds(await core.sending.followUps.nextDue(applicationId)),
  },
  {
    name: 'holds_expired',
    run: async (core, _now, { applicationId }) => {
      let total = 0;
      // Expiries go in batches; a test clock takes them all.
      for (let batch = await core.calendar.holds.expire(applicationId); batch > 0;) {
        total += batch;
        batch = await core.calendar.holds.expire(applicationId);
      }
      return total;
    },
    nextDueAt: async (core, applicationId) => seconds(await core.calendar.holds.nextExpiry(applicationId)),
  },
  {
    // Calendar timers (event.starting, event.ending): everything due between the clock's last stop and this one.
    name: 'timers',
    run: (core, now, { applicationId, since }) => core.calendar.timers.runDue(now, { applicationId, since }),
  },
  {
    name: 'retention',
    run: async (core, _now, { applicationId }) => {
      const upkept = await core.admin.policyUpkeep.run(undefined, applicationId);
      return upkept.inboxDeleted + upkept.junkDeleted + upkept.foldersCreated;
    },
  },
];

/** Most stops of one advance: each is a due time reached; past this many the clock goes straight to the target. */
const MAX_STOPS = 10_000;

/** What an advance did. */
export interface AdvanceResult {
  /** Virtual unix ms before and after. */
  from: number;
  to: number;
  /** Things done by each due-runner (by name). */
  ran: Record<string, number>;
}

/**
 * Moves a test-mode application's clock to `target` (unix ms) and runs what falls due on the way, in order of due time:
 * the clock stops at each due time a runner names (stored, then the runners run in the scope of that time), then at
 * the target. A target before the clock's time is a 400; a production application, a 400.
 */
export async function advanceTestClock(
  core: Core,
  applicationId: string,
  target: number,
  send: FollowUpSender,
  runners: readonly DueRunner[] = DUE_RUNNERS,
): Promise<AdvanceResult> {
  const applications = core.accounts.applications;
  const from = await applications.testClockOf(applicationId);
  if (from === undefined) throw notTestMode();
  if (target < from)
    throw new AppError(
      'invalid_request',
      `A test clock never goes backwards: it stands at ${new Date(from).toISOString()}, after ${new Date(target).toISOString()}.`,
    );
  const ran: Record<string, number> = Object.fromEntries(runners.map((runner) => [runner.name, 0]));
  let current = from;
  for (let stops = 0; ; stops++) {
    const next = stops < MAX_STOPS ? await earliestDue(core, applicationId, runners) : undefined;
    // The next stop: the earliest due time ahead of the clock and before the target; else the target.
    const stop = next !== undefined && next > current && next < target ? next : target;
    if (!(await applications.advanceTestClock(applicationId, stop)))
      throw new AppError('conflict', 'The test clock was moved past this time by another call meanwhile.');
    await runInTestClock({ applicationId, at: stop }, async () => {
      for (const runner of runners)
        ran[runner.name]! += await runner.run(core, new Date(stop), { applicationId, send, since: new Date(current) });
    });
    current = stop;
    if (stop === target) break;
  }
  return { from, to: current, ran };
}

/** The earliest due time any runner names, unix ms. */
async function earliestDue(core: Core, applicationId: string, runners: readonly DueRunner[]) {
  let earliest: number | undefined;
  for (const runner of runners) {
    const at = await runner.nextDueAt?.(core, applicationId);
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** The error of a test clock asked of a production application. */
export function notTestMode(): AppError {
  return new AppError(
    'invalid_request',
    'This application is not in test mode: only an application created in test mode (agentpost apps create --test) has a test clock. A production application always runs on real time.',
  );
}
