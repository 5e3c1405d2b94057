/**
 * @module calendar/itip-inbound-request
 * An incoming REQUEST (./itip-inbound.ts): creates or (by UID and SEQUENCE) updates the event on the grant's primary
 * calendar, with the organizer as organizer.
 */
import { eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { ParsedEvent } from './ical.js';
import { instanceId } from './recurrence.js';
import {
  findInstance,
  findMaster,
  ignore,
  keepOwnAnswer,
  valuesOf,
  type InboxState,
  type InvitationOutcome,
} from './itip-inbound-state.js';

export async function applyRequest(
  state: InboxState,
  grant: GrantRow,
  events: ParsedEvent[],
  sender: string,
): Promise<InvitationOutcome[]> {
  const master = events.find((event) => event.recurrenceId === undefined);
  const first = master ?? events[0]!;
  const organizer = first.organizer ?? { email: sender };
  if (organizer.email === grant.email)
    return [ignore(state, grant, 'the grant organizes this event', { uid: first.uid })];
  if (organizer.email !== sender)
    state.logger.info('invitation sent by someone other than its organizer', {
      grant_id: grant.id,
      uid: first.uid,
      organizer: organizer.email,
      sender,
    });
  const primary = await state.calendars.primaryOf(grant.id);
  if (!primary) return [ignore(state, grant, 'the grant has no primary calendar', { uid: first.uid })];
  const at = state.now();
  return state.db.write(async (tx) => {
    const outcomes: InvitationOutcome[] = [];
    let existing = await findMaster(tx, grant, first.uid);
    if (existing && existing.organizer?.email.toLowerCase() !== organizer.email) {
      return [
        ignore(state, grant, 'an event with this UID has another organizer', {
          uid: first.uid,
          organizer: organizer.email,
        }),
      ];
    }
    if (master) {
      if (!master.when) return [ignore(state, grant, 'REQUEST without DTSTART', { uid: master.uid })];
      if (existing && master.sequence < existing.sequence)
        return [ignore(state, grant, 'stale REQUEST (older SEQUENCE)', { uid: master.uid, sequence: master.sequence })];
      const values = valuesOf(master as ParsedEvent & { when: NonNullable<ParsedEvent['when']> }, organizer);
      values.participants = keepOwnAnswer(grant, values.participants, existing, existing?.sequence === master.sequence);
      if (existing) {
        const timing =
          existing.rangeStart !== values.rangeStart ||
          JSON.stringify(existing.recurrence) !== JSON.stringify(values.recurrence);
        if (timing)
          for (const override of await state.store.overridesOf(tx, grant, existing.id))
            await tx.delete(tables.events).where(eq(tables.events.id, override.id));
        existing = await state.store.update(tx, grant, existing, { ...values, updatedAt: at });
        outcomes.push({ action: 'updated', eventId: existing.id });
      } else {
        const id = state.newId();
        existing = await state.store.insert(tx, grant, {
          ...values,
          id,
          grantId: grant.id,
          calendarId: primary.id,
          metadata: null,
          createdAt: at,
          updatedAt: at,
        });
        outcomes.push({ action: 'created', eventId: id });
      }
    }
    for (const override of events.filter((event) => event.recurrenceId !== undefined)) {
      if (!override.when) continue;
      const values = valuesOf(
        { ...override, recurrence: null } as ParsedEvent & { when: NonNullable<ParsedEvent['when']> },
        organizer,
      );
      if (!existing || !existing.recurrence) {
        // Invited to one instance only: it stands alone.
        const id = state.newId();
        await state.store.insert(tx, grant, {
          ...values,
          id,
          grantId: grant.id,
          calendarId: primary.id,
          metadata: null,
          createdAt: at,
          updatedAt: at,
        });
        outcomes.push({ action: 'created', eventId: id });
        continue;
      }
      const id = instanceId(existing.id, override.recurrenceId!);
      const stored = await findInstance(tx, grant, id);
      if (stored && override.sequence < stored.sequence) continue;
      values.participants = keepOwnAnswer(grant, values.participants, stored, stored?.sequence === override.sequence);
      const overrideValues = {
        ...values,
        masterEventId: existing.id,
        originalStartTime: override.recurrenceId!,
        calendarId: existing.calendarId,
      };
      if (stored) {
        await state.store.update(tx, grant, stored, { ...overrideValues, updatedAt: at });
        outcomes.push({ action: 'updated', eventId: id });
      } else {
        await state.store.insert(tx, grant, {
          ...overrideValues,
          id,
          grantId: grant.id,
          metadata: existing.metadata,
          createdAt: at,
          updatedAt: at,
        });
        outcomes.push({ action: 'created', eventId: id });
      }
    }
    return outcomes;
  });
}
