/**
 * Tentative holds (issue 40, item 5) through the core with a clock the test moves: availability and free/busy of
 * every participant count a live hold's slots as busy and `explain` names the hold; expiry frees them (at once for
 * reads, then marked with `event.hold_expired` for the organizer); confirmation makes the event with its iMIP
 * REQUEST to the participants and frees the hold; release frees it.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import type { Principal } from '../../../src/access.js';
import { createEventService } from '../../../src/calendar/event-service.js';
import { createHoldService } from '../../../src/calendar/hold-service.js';
import type { HoldService } from '../../../src/calendar/index.js';
import type { InvitationSender, OutgoingInvitation } from '../../../src/calendar/invitation-message.js';
import { AppError } from '../../../src/errors.js';
import type { Core } from '../../../src/index.js';
import { fixedClock } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';
import { utc } from '../../helpers/calendar.js';

const DOMAIN = 'holds.agentpost.localhost';
const ORGANIZER = `scheduler@${DOMAIN}`;
const ANA = `ana@${DOMAIN}`;
const BEN = `ben@${DOMAIN}`;
const HOUR = 3600;

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('tentative holds', () => {
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let core: Core;
  let holds: HoldService;
  const sent: OutgoingInvitation[] = [];
  const sender: InvitationSender = { send: async (invitation) => void sent.push(invitation) };
  const clock = fixedClock('2026-05-01T08:00:00Z');
  let principal: Principal;
  let organizerId: string;
  const day = utc('2026-05-04T09:00:00Z');
  const slotA = { start_time: day, end_time: day + HOUR };
  const slotB = { start_time: day + 2 * HOUR, end_time: day + 3 * HOUR };

  const availability = () =>
    core.calendar.availability.find(principal, {
      start_time: day,
      end_time: day + 4 * HOUR,
      duration_minutes: 60,
      participants: [{ email: ORGANIZER }, { email: ANA }, { email: BEN }],
      explain: true,
    });
  const starts = async () => (await availability()).time_slots.map((slot) => slot.start_time);
  /** The busy blocks free/busy gives for one address, as [start, end] pairs. */
  const busyOf = async (email: string) => {
    const [entry] = (
      await core.calendar.availability.freeBusy(principal, {
        grant_id: organizerId,
        start_time: day,
        end_time: day + 4 * HOUR,
        emails: [email],
      })
    ).data;
    if (entry?.object !== 'free_busy') throw new Error(`no free/busy for ${email}`);
    return entry.time_slots.map((slot) => [slot.start_time, slot.end_time]);
  };

  beforeAll(async () => {
    env = await createTestCore({ clock });
    core = env.core;
    const events = createEventService(core.deps, core.accounts.grants, core.calendar.calendars, sender);
    holds = createHoldService(core.deps, core.accounts.grants, events);
    const applicationId = await core.accounts.applications.defaultApplicationId();
    principal = { applicationId, via: 'local' };
    await core.accounts.domains.ensureVerified(applicationId, [DOMAIN]);
    for (const email of [ORGANIZER, ANA, BEN]) {
      const { grant } = await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
      if (email === ORGANIZER) organizerId = grant.id;
    }
  });
  afterAll(() => env?.close());

  it('availability for three participants leaves out the held slots and names the hold; free/busy shows them', async () => {
    expect(await starts()).toEqual([day, day + HOUR, day + 2 * HOUR, day + 3 * HOUR]);
    const hold = await holds.create(principal, {
      grant_id: organizerId,
      participants: [{ email: ANA }, { email: BEN.toUpperCase() }],
      slots: [slotA, slotB],
      ttl_seconds: 600,
      title: 'Kick-off',
    });
    expect(hold).toMatchObject({
      status: 'held',
      grant_id: organizerId,
      participants: [{ email: ORGANIZER }, { email: ANA }, { email: BEN }],
      expires_at: utc('2026-05-01T08:10:00Z'),
    });
    expect(await starts()).toEqual([day + HOUR, day + 3 * HOUR]);
    const explained = (await availability()).explanations!.find((one) => one.start_time === day)!;
    expect(explained.reasons).toEqual(
      [ORGANIZER, ANA, BEN].map((email) => ({ type: 'busy', email, event_ids: [], hold_ids: [hold.hold_id] })),
    );
    expect(await busyOf(BEN)).toEqual([
      [slotA.start_time, slotA.end_time],
      [slotB.start_time, slotB.end_time],
    ]);
    await holds.release(principal, { hold_id: hold.hold_id });
  });

  it('past its ttl a hold frees its slots at once; the purge pass marks it expired and tells the organizer', async () => {
    const hold = await holds.create(principal, {
      grant_id: organizerId,
      participants: [{ email: ANA }, { email: BEN }],
      slots: [slotA],
      ttl_seconds: 60,
    });
    expect(await starts()).toEqual([day + HOUR, day + 2 * HOUR, day + 3 * HOUR]);
    expect(await holds.expire()).toBe(0);
    clock.advance(61_000);
    expect(await starts()).toEqual([day, day + HOUR, day + 2 * HOUR, day + 3 * HOUR]);
    expect((await holds.find(principal, { hold_id: hold.hold_id })).status).toBe('expired');
    expect(await holds.expire()).toBe(1);
    const [told] = await env.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, 'event.hold_expired'), eq(tables.outboxEvents.objectId, hold.hold_id)));
    expect(told).toMatchObject({ grantId: organizerId, payload: { hold_id: hold.hold_id, status: 'expired' } });
    const error = await rejection(holds.confirm(principal, { hold_id: hold.hold_id, ...slotA }));
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('expired');
  });

  it('confirming a slot makes the event with invitations to the participants; the hold is gone', async () => {
    const hold = await holds.create(principal, {
      grant_id: organizerId,
      participants: [{ email: ANA }, { email: BEN }],
      slots: [slotA, slotB],
      ttl_seconds: 600,
      title: 'Design review',
    });
    const wrong = await rejection(
      holds.confirm(principal, { hold_id: hold.hold_id, start_time: day + 60, end_time: day + HOUR }),
    );
    expect(wrong.message).toContain("not one of the hold's slots");
    const confirmed = await holds.confirm(principal, { hold_id: hold.hold_id, ...slotB });
    expect(confirmed.hold).toMatchObject({ status: 'confirmed', event_id: confirmed.event_id });
    const event = await core.calendar.events.find(principal, {
      grant_id: organizerId,
      event_id: confirmed.event_id,
      calendar_id: 'primary',
    });
    expect(event).toMatchObject({
      title: 'Design review',
      when: { start_time: slotB.start_time, end_time: slotB.end_time },
      participants: [
        { email: ANA, status: 'noreply' },
        { email: BEN, status: 'noreply' },
      ],
    });
    const request = sent.find((one) => one.eventId === confirmed.event_id)!;
    expect(request).toMatchObject({ method: 'REQUEST', from: { email: ORGANIZER } });
    expect(request.to.map((to) => to.email)).toEqual([ANA, BEN]);
    expect(request.ics).toContain('METHOD:REQUEST');
    // Slot A is free again; slot B is now the organizer's event (the participants' copies come with the iMIP mail).
    expect(await starts()).toEqual([day, day + HOUR, day + 3 * HOUR]);
    const explained = (await availability()).explanations!.find((one) => one.start_time === slotB.start_time)!;
    expect(explained.reasons).toEqual([{ type: 'busy', email: ORGANIZER, event_ids: [confirmed.event_id] }]);
    expect((await holds.find(principal, { hold_id: hold.hold_id })).status).toBe('confirmed');
    expect((await rejection(holds.release(principal, { hold_id: hold.hold_id }))).code).toBe('conflict');
  });

  it('releasing frees the slots; a second release is a no-op; an unknown hold is a 404', async () => {
    const hold = await holds.create(principal, {
      grant_id: organizerId,
      participants: [{ email: ANA }],
      slots: [slotA],
    });
    expect(hold.expires_at).toBe(Math.floor(clock.now().getTime() / 1000) + 900);
    expect(await busyOf(ANA)).toEqual([[slotA.start_time, slotA.end_time]]);
    await holds.release(principal, { hold_id: hold.hold_id });
    expect(await busyOf(ANA)).toEqual([]);
    await holds.release(principal, { hold_id: hold.hold_id });
    expect((await holds.find(principal, { hold_id: hold.hold_id })).status).toBe('released');
    expect((await rejection(holds.find(principal, { hold_id: 'nope' }))).code).toBe('not_found');
  });

  it('refuses slots that end before they start, are over, or are listed twice', async () => {
    const create = (slots: { start_time: number; end_time: number }[]) =>
      rejection(holds.create(principal, { grant_id: organizerId, participants: [{ email: ANA }], slots }));
    expect((await create([{ start_time: day, end_time: day }])).message).toContain('must be after start_time');
    expect((await create([{ start_time: day - 30 * 86_400, end_time: day - 29 * 86_400 }])).message).toContain(
      'already over',
    );
    expect((await create([slotA, slotA])).message).toContain('listed twice');
    expect((await create([{ start_time: day, end_time: day + 2 * 86_400 }])).message).toContain('at most 24 hours');
  });
});
