/**
 * @module calendar/hold-service
 * Tentative holds (issue 40, item 5): candidate slots held for several participants while an agent negotiates.
 * A hold belongs to its organizer grant (a key that does not reach that grant sees a 404). While it is live its slots
 * are busy for every participant in free/busy and availability (./availability-service.ts reads them through
 * {@link heldIntervals}); confirming one slot creates the event through the event service, so the participants get
 * the same iMIP REQUEST as any new event; releasing frees the slots; past its ttl it is free at once (the reads
 * compare with the clock) and the purge loop marks it expired with an `event.hold_expired` for the organizer.
 */
import type { Principal } from '../access.js';
import { AppError, invalid, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import { eventRecorder } from '../outbox/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { ConfirmedHold, ConfirmHoldInput, CreateHoldInput, Hold, HoldRefInput } from '../schemas/holds.js';
import { DEFAULT_HOLD_TTL_SECONDS, MAX_HOLD_SLOT_SECONDS } from '../schemas/holds.js';
import { unixSeconds } from '../time.js';
import type { BusyInterval } from './availability-types.js';
import type { EventService, HoldService } from './contracts.js';
import {
  closeHold,
  findHold,
  insertHold,
  lapsedHolds,
  nextHoldExpiry,
  liveSlots,
  reopenHold,
  setHoldEvent,
  type HoldRow,
} from './hold-store.js';

type Db = CoreDeps['db'];

/** Expiries handled per purge pass; the next pass takes the rest. */
const EXPIRE_BATCH = 200;
/** The id marker of a hold among the busy intervals' event ids (event ids never contain a colon). */
export const HOLD_MARK = 'hold:';

/** The wire form of a hold row. */
export function toHold(row: HoldRow): Hold {
  return {
    hold_id: row.id,
    object: 'hold',
    grant_id: row.grantId,
    status: row.status,
    participants: row.participants,
    slots: row.slots,
    ...(row.title !== null ? { title: row.title } : {}),
    expires_at: row.expiresAt,
    ...(row.eventId !== null ? { event_id: row.eventId } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/**
 * The live holds' slots of some grants overlapping `[from, to)`, as busy intervals keyed by grant id, each named
 * `hold:<id>` so explanations can tell a hold from an event.
 */
export async function heldIntervals(
  db: Db,
  applicationId: string,
  owners: { grantId: string; email: string }[],
  window: { from: number; to: number; now: number },
): Promise<Map<string, BusyInterval[]>> {
  const byEmail = new Map(owners.map((owner) => [owner.email.toLowerCase(), owner.grantId]));
  const rows = await liveSlots(db, applicationId, [...byEmail.keys()], window.from, window.to, window.now);
  const result = new Map<string, BusyInterval[]>();
  for (const row of rows) {
    const grantId = byEmail.get(row.email);
    if (grantId === undefined) continue;
    const list = result.get(grantId) ?? [];
    list.push({ start: row.startTime, end: row.endTime, eventId: `${HOLD_MARK}${row.holdId}` });
    result.set(grantId, list);
  }
  return result;
}

/** Checks the slots: each ends after it starts, lasts at most a day, is not over, and none is listed twice. */
function checkSlots(slots: CreateHoldInput['slots'], now: number): void {
  const seen = new Set<string>();
  slots.forEach((slot, index) => {
    const field = `slots[${index}]`;
    if (slot.end_time <= slot.start_time) throw invalid(`${field}.end_time`, 'must be after start_time.');
    if (slot.end_time - slot.start_time > MAX_HOLD_SLOT_SECONDS)
      throw invalid(`${field}.end_time`, `a held slot lasts at most ${MAX_HOLD_SLOT_SECONDS / 3600} hours.`);
    if (slot.end_time <= now) throw invalid(`${field}.end_time`, 'the slot is already over.');
    const key = `${slot.start_time}-${slot.end_time}`;
    if (seen.has(key)) throw invalid(field, 'this slot is listed twice.');
    seen.add(key);
  });
}

/** Creates the hold service; `events` makes the event of a confirmation (with its invitations). */
export function createHoldService(
  { db, clock, newId }: CoreDeps,
  grants: GrantService,
  events: Pick<EventService, 'create'>,
): HoldService {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

  /** The hold, when the principal reaches its organizer grant; else a 404 (as for a hold that does not exist). */
  async function load(principal: Principal, id: string): Promise<HoldRow> {
    const row = await findHold(db, principal.applicationId, id);
    // A key scoped to some grants reaches only the holds of those (issue 36), as it reaches only their events.
    // The hold's grant exists: a deleted grant takes its holds with it (the foreign key cascades).
    if (!row || (principal.grantIds && !principal.grantIds.has(row.grantId))) throw notFound('Hold', id);
    return row;
  }

  /** A 409 for a hold that is no longer held (or is past its ttl), naming its state. */
  function notLive(row: HoldRow, at: number): AppError {
    const state = row.status === 'held' && row.expiresAt <= at ? 'expired' : row.status;
    return new AppError('conflict', `Hold ${row.id} is ${state}; its slots are no longer held. Create a new hold.`, {
      hold_id: row.id,
      status: state,
    });
  }

  return {
    async create(principal: Principal, input: CreateHoldInput): Promise<Hold> {
      const grant = await grants.require(principal, input.grant_id);
      if (principal.grantIds && !principal.grantIds.has(grant.id)) throw notFound('Grant', input.grant_id);
      const at = now();
      checkSlots(input.slots, at);
      const emails = [grant.email.toLowerCase()];
      for (const participant of input.participants) {
        const email = participant.email.trim().toLowerCase();
        if (!emails.includes(email)) emails.push(email);
      }
      const row: HoldRow = {
        id: newId(),
        applicationId: principal.applicationId,
        grantId: grant.id,
        status: 'held',
        participants: emails.map((email) => ({ email })),
        slots: input.slots.map((slot) => ({ start_time: slot.start_time, end_time: slot.end_time })),
        title: input.title ?? null,
        expiresAt: at + (input.ttl_seconds ?? DEFAULT_HOLD_TTL_SECONDS),
        eventId: null,
        createdAt: at,
        updatedAt: at,
      };
      await db.write((tx) => insertHold(tx, row));
      return toHold(row);
    },

    async find(principal: Principal, input: HoldRefInput): Promise<Hold> {
      const row = await load(principal, input.hold_id);
      // Past its ttl a hold is expired at once, whether or not the purge loop has marked it yet.
      return toHold(row.status === 'held' && row.expiresAt <= now() ? { ...row, status: 'expired' } : row);
    },

    async release(principal: Principal, input: HoldRefInput): Promise<void> {
      const row = await load(principal, input.hold_id);
      const at = now();
      const released = await db.write((tx) => closeHold(tx, row.id, 'released', at));
      if (!released && row.status !== 'released') throw notLive(row, at);
    },

    async confirm(principal: Principal, input: ConfirmHoldInput): Promise<ConfirmedHold> {
      const row = await load(principal, input.hold_id);
      const slot = row.slots.find((one) => one.start_time === input.start_time && one.end_time === input.end_time);
      if (!slot)
        throw invalid(
          'start_time',
          `${input.start_time}-${input.end_time} is not one of the hold's slots (${row.slots.map((one) => `${one.start_time}-${one.end_time}`).join(', ')}).`,
        );
      const at = now();
      // The hold is closed first, so a concurrent release or expiry cannot also win; undone if the event fails.
      const closed = await db.write((tx) => closeHold(tx, row.id, 'confirmed', at));
      if (!closed) throw notLive(row, at);
      const organizer = row.participants[0]?.email;
      let eventId: string;
      try {
        const event = await events.create(principal, {
          grant_id: row.grantId,
          calendar_id: input.calendar_id ?? 'primary',
          when: { start_time: slot.start_time, end_time: slot.end_time },
          ...(input.title !== undefined || row.title !== null ? { title: input.title ?? row.title ?? '' } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.location !== undefined ? { location: input.location } : {}),
          participants: row.participants.filter(({ email }) => email !== organizer).map(({ email }) => ({ email })),
        });
        eventId = event.id ?? '';
      } catch (error) {
        await db.write((tx) => reopenHold(tx, row, now()));
        throw error;
      }
      await db.write((tx) => setHoldEvent(tx, row.id, eventId));
      return { hold: toHold({ ...closed, eventId }), event_id: eventId };
    },

    async expire(applicationId?: string): Promise<number> {
      const at = now();
      const rows = await lapsedHolds(db, at, EXPIRE_BATCH, applicationId);
      let expired = 0;
      for (const row of rows) {
        const done = await db.write(async (tx) => {
          const closed = await closeHold(tx, row.id, 'expired', at);
          if (!closed) return false;
          await record(tx, {
            applicationId: closed.applicationId,
            grantId: closed.grantId,
            type: 'event.hold_expired',
            objectId: closed.id,
            object: toHold(closed),
            createdAt: at,
          });
          return true;
        });
        if (done) expired++;
      }
      return expired;
    },

    nextExpiry: (applicationId: string) => nextHoldExpiry(db, applicationId),
  };
}
