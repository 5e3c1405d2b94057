/**
 * @module outbound/scheduled-sends-schedule
 * A send scheduled (./scheduled-sends.ts): checked by the outbound stage without the quota, its message held as a
 * draft, the schedule and its `mail.send_scheduled` job written in one transaction with the idempotency answer.
 */
import { tables } from '../../storage/index.js';
import { currentTestClock } from '../clock-scope.js';
import { invalid } from '../errors.js';
import { presentMessages } from '../messages/index.js';
import type { SendResult } from '../schemas/send.js';
import type { Composition, DraftRecord, ScheduleOptions } from './contracts.js';
import { sendCandidateOf } from './submission-state.js';
import { SCHEDULED_SEND_JOB, type ScheduledSendsState } from './scheduled-sends-state.js';

/** How far ahead a send may be scheduled (as Nylas: 30 days). */
const MAX_SCHEDULE_AHEAD_SECONDS = 30 * 86_400;

/** Holds a message as a draft until `sendAt` and schedules its sending. Answers with HTTP status 202. */
export async function schedule(
  state: ScheduledSendsState,
  composition: Composition,
  options: ScheduleOptions,
): Promise<SendResult> {
  const { db, clock, newId, jobs, idempotency, build, stage, now } = state;
  const { assertCurrent, writeVersion } = state.versions;
  const at = now();
  if (options.sendAt <= at)
    throw invalid('send_at', `must be in the future (now is ${at}); leave send_at out to send at once.`);
  if (options.sendAt > at + MAX_SCHEDULE_AHEAD_SECONDS)
    throw invalid('send_at', `may be at most 30 days ahead (until ${at + MAX_SCHEDULE_AHEAD_SECONDS}).`);
  const { grant } = composition;
  const existing = options.existing;
  const built = existing
    ? undefined
    : await build(composition, `${newId()}@${grant.email.slice(grant.email.lastIndexOf('@') + 1)}`, clock.now());
  const check = await stage.prepare(grant, sendCandidateOf(composition, built?.raw.length ?? existing!.row.rawSize));
  return stage.settle(
    db.write(async (tx) => {
      const replay = await idempotency.find(tx, options.claim);
      if (replay) return replay.response as SendResult;
      let record: DraftRecord;
      if (existing) {
        await assertCurrent(tx, existing);
        record = existing;
      } else {
        record = await writeVersion(tx, composition, built!, undefined, {
          starred: false,
          unread: false,
          sendAt: options.sendAt,
        });
      }
      const admitted = await stage.admit(tx, check, 'schedule');
      const id = newId();
      await tx.insert(tables.scheduledMessages).values({
        id,
        applicationId: grant.applicationId,
        grantId: grant.id,
        draftId: record.details.id,
        keepDraft: existing !== undefined || options.useDraft,
        sendAt: options.sendAt,
        status: 'pending',
        provenance: options.provenance ?? null,
        createdAt: at,
        updatedAt: at,
      });
      // A test-mode application's send waits for its test clock (src/background/test-clock.ts), not for the worker's
      // real time: no job, the schedule's row is all it needs.
      if (currentTestClock() === undefined)
        await jobs.enqueueIn(tx, {
          kind: SCHEDULED_SEND_JOB,
          payload: { schedule_id: id },
          runAt: new Date(options.sendAt * 1000),
          dedupeKey: `${SCHEDULED_SEND_JOB}:${id}`,
        });
      const [message] = await presentMessages(tx, [record.row]);
      const { delivery_status: _status, ...data } = message!;
      const answer: SendResult = {
        data: {
          ...data,
          id: record.details.id,
          schedule_id: id,
          send_at: options.sendAt,
          use_draft: options.useDraft,
          ...(composition.replyToMessageId ? { reply_to_message_id: composition.replyToMessageId } : {}),
        },
        schedule_id: id,
        send_at: options.sendAt,
        use_draft: options.useDraft,
        grant_id: grant.id,
      };
      await stage.record(tx, admitted, undefined);
      await idempotency.save(tx, options.claim, { status: 202, response: answer });
      return answer;
    }),
  );
}
