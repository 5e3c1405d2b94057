/**
 * @module calendar/itip-inbound-answers
 * An incoming CANCEL (the event, or one instance, cancelled) or REPLY (an attendee's answer on an event the grant
 * organizes), for ./itip-inbound.ts.
 */
import type { GrantRow } from '../../storage/index.js';
import { eventTimeColumns, eventTimeOf, type EventRow } from './event-mapper.js';
import { shiftTo, utcRange } from './event-time.js';
import type { ParsedEvent } from './ical.js';
import { instanceId, storedRange } from './recurrence.js';
import { findInstance, findMaster, ignore, type InboxState, type InvitationOutcome } from './itip-inbound-state.js';

export async function applyCancel(
  state: InboxState,
  grant: GrantRow,
  events: ParsedEvent[],
  sender: string,
): Promise<InvitationOutcome[]> {
  const at = state.now();
  return state.db.write(async (tx) => {
    const outcomes: InvitationOutcome[] = [];
    for (const event of events) {
      const master = await findMaster(tx, grant, event.uid);
      if (!master) {
        outcomes.push(ignore(state, grant, 'CANCEL for an unknown event', { uid: event.uid }));
        continue;
      }
      const organizer = (event.organizer ?? { email: sender }).email;
      if (
        !master.organizer ||
        master.organizer.email.toLowerCase() === grant.email ||
        master.organizer.email.toLowerCase() !== organizer
      ) {
        outcomes.push(ignore(state, grant, "CANCEL not from the event's organizer", { uid: event.uid, sender }));
        continue;
      }
      if (event.recurrenceId === undefined || !master.recurrence) {
        if (event.recurrenceId !== undefined && utcRange(eventTimeOf(master)).start !== event.recurrenceId) {
          outcomes.push(ignore(state, grant, 'CANCEL for an instance the event does not have', { uid: event.uid }));
          continue;
        }
        const updated = await state.store.update(tx, grant, master, {
          status: 'cancelled',
          sequence: Math.max(master.sequence, event.sequence),
          updatedAt: at,
        });
        for (const override of await state.store.overridesOf(tx, grant, master.id))
          await state.store.update(tx, grant, override, { status: 'cancelled', updatedAt: at });
        outcomes.push({ action: 'cancelled', eventId: updated.id });
        continue;
      }
      const id = instanceId(master.id, event.recurrenceId);
      const stored = await findInstance(tx, grant, id);
      if (stored) {
        await state.store.update(tx, grant, stored, {
          status: 'cancelled',
          sequence: Math.max(stored.sequence, event.sequence),
          updatedAt: at,
        });
      } else {
        const { id: _id, createdAt: _created, ...copy } = master;
        const when = shiftTo(eventTimeOf(master), event.recurrenceId);
        await state.store.insert(tx, grant, {
          ...copy,
          id,
          masterEventId: master.id,
          originalStartTime: event.recurrenceId,
          recurrence: null,
          ...eventTimeColumns(when),
          ...storedRange(when, null),
          status: 'cancelled',
          sequence: Math.max(master.sequence, event.sequence),
          createdAt: at,
          updatedAt: at,
        });
      }
      outcomes.push({ action: 'cancelled', eventId: id });
    }
    return outcomes;
  });
}

export async function applyReply(
  state: InboxState,
  grant: GrantRow,
  events: ParsedEvent[],
  sender: string,
): Promise<InvitationOutcome[]> {
  const at = state.now();
  return state.db.write(async (tx) => {
    const outcomes: InvitationOutcome[] = [];
    for (const event of events) {
      const attendee = event.participants[0];
      if (!attendee) {
        outcomes.push(ignore(state, grant, 'REPLY without ATTENDEE', { uid: event.uid }));
        continue;
      }
      const master = await findMaster(tx, grant, event.uid);
      if (!master || (master.organizer && master.organizer.email.toLowerCase() !== grant.email)) {
        outcomes.push(ignore(state, grant, 'REPLY for an event the grant does not organize', { uid: event.uid }));
        continue;
      }
      if (!master.participants.some((participant) => participant.email.toLowerCase() === attendee.email)) {
        state.logger.warn('calendar REPLY from someone who is not a participant ignored', {
          grant_id: grant.id,
          uid: event.uid,
          attendee: attendee.email,
          sender,
        });
        outcomes.push({ action: 'ignored', reason: 'REPLY from someone who is not a participant' });
        continue;
      }
      if (sender && sender !== attendee.email)
        state.logger.info('calendar REPLY sent by another address than the attendee', {
          grant_id: grant.id,
          uid: event.uid,
          attendee: attendee.email,
          sender,
        });
      const answer = (participants: EventRow['participants']) =>
        participants.map((participant) =>
          participant.email.toLowerCase() === attendee.email
            ? { ...participant, status: attendee.status, ...(attendee.comment ? { comment: attendee.comment } : {}) }
            : participant,
        );
      let target: EventRow = master;
      if (event.recurrenceId !== undefined && master.recurrence) {
        const id = instanceId(master.id, event.recurrenceId);
        const stored = await findInstance(tx, grant, id);
        if (stored) {
          target = stored;
        } else {
          const { id: _id, createdAt: _created, ...copy } = master;
          const when = shiftTo(eventTimeOf(master), event.recurrenceId);
          target = await state.store.insert(tx, grant, {
            ...copy,
            id,
            masterEventId: master.id,
            originalStartTime: event.recurrenceId,
            recurrence: null,
            ...eventTimeColumns(when),
            ...storedRange(when, null),
            createdAt: at,
            updatedAt: at,
          });
        }
      }
      const updated = await state.store.update(tx, grant, target, {
        participants: answer(target.participants),
        updatedAt: at,
      });
      outcomes.push({ action: 'reply_recorded', eventId: updated.id });
    }
    return outcomes;
  });
}
