/**
 * @module oversight/runaway-guards
 * The runaway and loop guards of the send gate (issue 37, item 4; docs/oversight.md), in their order:
 * 1. `automated_reply`: an agent's reply to an automated message (an out-of-office, a bounce, a list: the message's
 *    `automated` verdict, src/mail/stages/automated.ts) is refused, unless the send says `allow_automated_reply`;
 * 2. `loop`: when the thread's mailbox and another traded more than `loop_messages` messages within `loop_minutes`
 *    (every message of the thread, whatever face sent it), agent sends in that thread pause: they wait for approval
 *    in the gated modes, else 429 until the window has room again; `thread.loop_detected` is emitted once per episode;
 * 3. `thread_budget`: past `thread_agent_sends_per_hour` agent sends in one thread within the last hour, an agent's
 *    send waits for approval in the gated modes, else 429 until the oldest of them is an hour old.
 * The loop runs before the budget: when both hold, the loop is what the agent (and the webhook) must hear about.
 *
 * Only agent sends are guarded (the MCP and AI SDK faces, and keys marked as an agent's): `attempt.agent`. The guards
 * read what sends and deliveries wrote (./runaway-store.ts); the loop's event is their only write, made off the
 * send's path (it never holds the send up, and a send inside a transaction never waits for it).
 */
import { AppError } from '../errors.js';
import type { Logger } from '../ports/index.js';
import type { Database } from '../../storage/index.js';
import type { GuardVerdict, SendAttempt, SendGuard } from './contracts.js';
import { findLoop } from './loop.js';
import { agentSendDates, automatedOf, recordLoop, threadTraffic } from './runaway-store.js';

/** How far back the loop guard reads, in windows: enough to find when a long episode began. */
const EPISODE_LOOKBACK_WINDOWS = 6;

const gated = (attempt: SendAttempt) =>
  attempt.oversight.mode === 'gated_send' || attempt.oversight.mode === 'gated_all';

/** Seconds from `now` to `at`, at least 1 (a Retry-After of 0 would invite the same send at once). */
const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil(at - now));

/** `in 3 minutes` / `in 42 seconds`. */
function inWords(seconds: number): string {
  if (seconds < 120) return `in ${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes < 120 ? `in ${minutes} minutes` : `in ${Math.ceil(minutes / 60)} hours`;
}

/** The refusal of an agent's reply to an automated message. */
export function automatedReplyError(messageId: string, automated: { kind: string; reasons: string[] }): AppError {
  const why = automated.reasons.slice(0, 3).join(', ');
  return new AppError(
    'forbidden',
    `Message ${messageId} was written by a machine (${automated.kind.replace('_', ' ')}: ${why}). An agent does not answer automated mail (out-of-office replies, bounces, lists, no-reply senders): that is how mail loops start. Sending it again will not help. If a person asked for this answer, send it again with allow_automated_reply: true.`,
    { messageId, automated },
    { type: 'automated_reply' },
  );
}

/** 1. An agent's reply to automated mail. */
function automatedReply(db: Database): SendGuard {
  return {
    name: 'automated_reply',
    async check(attempt): Promise<GuardVerdict | undefined> {
      if (!attempt.agent || !attempt.replyToMessageId || attempt.intent.allowAutomatedReply === true) return undefined;
      const automated =
        attempt.repliedAutomated !== undefined
          ? attempt.repliedAutomated
          : await automatedOf(db, attempt.grant.id, attempt.replyToMessageId);
      if (!automated) return undefined;
      return { outcome: 'refuse', error: automatedReplyError(attempt.replyToMessageId, automated) };
    },
  };
}

/** 2. Loop detection. */
function loop(db: Database, logger: Logger | undefined): SendGuard {
  return {
    name: 'loop',
    async check(attempt): Promise<GuardVerdict | undefined> {
      if (!attempt.agent || !attempt.threadId) return undefined;
      const { loopMessages, loopMinutes } = attempt.oversight;
      const now = Math.floor(attempt.at / 1000);
      const windowSeconds = loopMinutes * 60;
      const traffic = await threadTraffic(
        db,
        attempt.grant.id,
        attempt.threadId,
        now - windowSeconds * EPISODE_LOOKBACK_WINDOWS,
      );
      const found = findLoop(traffic, attempt.grant.email, { limit: loopMessages, windowSeconds }, now);
      if (!found) return undefined;
      recordLoop(db, {
        applicationId: attempt.grant.applicationId,
        grantId: attempt.grant.id,
        threadId: attempt.threadId,
        counterpart: found.counterpart,
        messages: found.messages,
        windowMinutes: loopMinutes,
        since: found.since,
        pausedUntil: found.until,
        at: now,
      }).catch((error: unknown) =>
        logger?.warn('could not record thread.loop_detected', { thread_id: attempt.threadId, error: String(error) }),
      );
      const what = `This thread is in a mail loop: ${attempt.grant.email} and ${found.counterpart} traded ${found.messages} messages in the last ${loopMinutes} minutes (more than ${loopMessages}), so agent sends in it are paused`;
      if (gated(attempt))
        return { outcome: 'approve', request: { check: 'loop', reason: `${what}; a person decides this one.` } };
      const retryAfterSeconds = secondsUntil(found.until, now);
      return {
        outcome: 'refuse',
        error: new AppError(
          'rate_limited',
          `${what}. They may resume ${inWords(retryAfterSeconds)}; sending again before then will not help. Do not answer the other side automatically.`,
          { retryAfterSeconds, threadId: attempt.threadId, counterpart: found.counterpart, messages: found.messages },
          { type: 'loop_detected' },
        ),
      };
    },
  };
}

/** 3. The per-thread budget of agent sends. */
function threadBudget(db: Database): SendGuard {
  return {
    name: 'thread_budget',
    async check(attempt): Promise<GuardVerdict | undefined> {
      const limit = attempt.oversight.threadAgentSendsPerHour;
      if (!attempt.agent || !attempt.threadId || limit === null) return undefined;
      const now = Math.floor(attempt.at / 1000);
      const dates = await agentSendDates(db, attempt.grant.id, attempt.threadId, now - 3600 + 1);
      if (dates.length < limit) return undefined;
      const what = `Agents sent ${dates.length} messages in this thread in the last hour; the budget is ${limit} an hour (thread_agent_sends_per_hour)`;
      if (gated(attempt))
        return {
          outcome: 'approve',
          request: { check: 'thread_budget', reason: `${what}, so this send waits for a person.` },
        };
      // One more fits once all but limit - 1 of them are an hour old.
      const retryAfterSeconds = secondsUntil(dates[dates.length - limit]! + 3600, now);
      return {
        outcome: 'refuse',
        error: new AppError(
          'rate_limited',
          `${what}. The next agent send in it fits ${inWords(retryAfterSeconds)}; sending again before then will not help.`,
          { retryAfterSeconds, threadId: attempt.threadId, sent: dates.length, limit },
          { type: 'thread_budget_exceeded' },
        ),
      };
    },
  };
}

/**
 * The runaway and loop guards, in their order (see the module comment), for `createOversight(…, { guards })`.
 * `logger` hears of a loop event that could not be recorded.
 */
export function runawayGuards(db: Database, options: { logger?: Logger | undefined } = {}): SendGuard[] {
  return [automatedReply(db), loop(db, options.logger), threadBudget(db)];
}
