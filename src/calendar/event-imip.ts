/**
 * @module calendar/event-imip
 * The event service's mail (./event-service.ts): invitations, updates and cancellations composed as iMIP messages
 * and handed to the invitation sender after the commit, and the grant's answer to an invitation (RSVP). The
 * other way, mail that brings an invitation, is ./itip-inbound.ts.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { SendRsvpInput, SendRsvpResult } from '../schemas/events.js';
import { toCalendarEventData, type EventRow } from './event-mapper.js';
import type { Participant } from './ical.js';
import { pushSeries } from './event-remote.js';
import { composeReply, composeRequest, type OutgoingInvitation } from './invitation-message.js';
import { bad, context, locate, organizedBy, others, type EventState, type StoredParticipant } from './event-state.js';

/**
 * Hands an iMIP message to the invitation sender after the commit. Returns why it was not sent (no sender, or its
 * error), for the caller to tell; undefined when it was, or had no recipient.
 */
export async function dispatch(state: EventState, invitation: OutgoingInvitation): Promise<string | undefined> {
  if (invitation.to.length === 0) return undefined;
  const { invitations, logger } = state;
  if (!invitations) {
    logger.debug('iMIP message not sent: no invitation sender is configured', {
      grant_id: invitation.grantId,
      method: invitation.method,
      event_id: invitation.eventId,
    });
    return 'Outbound calendar email is not configured on this service; the change was saved but no email was sent.';
  }
  try {
    await invitations.send(invitation);
    return undefined;
  } catch (error) {
    logger.warn('iMIP message could not be sent', {
      grant_id: invitation.grantId,
      method: invitation.method,
      event_id: invitation.eventId,
      error: String(error),
    });
    return `The email could not be sent: ${(error as Error).message ?? String(error)}`;
  }
}

/** Sends the series (master first, then its overrides) as a REQUEST to its participants. */
export async function sendRequest(state: EventState, grant: GrantRow, master: EventRow): Promise<void> {
  const overrides = master.recurrence
    ? await state.db.orm
        .select()
        .from(tables.events)
        .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, master.id)))
    : [];
  const recipients = others(grant, master.participants);
  await dispatch(
    state,
    composeRequest(
      senderOf(grant),
      master.id,
      [master, ...overrides].map(toCalendarEventData),
      recipients,
      state.clock.now(),
    ),
  );
}

/** The grant as the sender of iMIP mail. */
export const senderOf = (grant: GrantRow) => ({
  applicationId: grant.applicationId,
  grantId: grant.id,
  email: grant.email,
  name: grant.name,
});

/**
 * Answers an invitation: sets the grant's participant status and sends an iMIP REPLY to the organizer.
 * Organizers cannot RSVP to their own events (400).
 */
export async function sendRsvp(state: EventState, principal: Principal, input: SendRsvpInput): Promise<SendRsvpResult> {
  const { db, store, now, clock } = state;
  const { grant, calendar } = await context(state, principal, input);
  const located = await locate(state, grant, calendar, input.event_id);
  if (located.instance) {
    throw bad(
      'event_id',
      `${input.event_id} is one instance of a recurring event; to answer the whole series, send_rsvp with event_id=${located.row.id}.`,
    );
  }
  const row = located.row;
  if (organizedBy(grant, row)) {
    throw bad(
      'event_id',
      'you organize this event; organizers do not RSVP. Change the event with update_event instead.',
    );
  }
  const me = grant.email.toLowerCase();
  const answer: StoredParticipant = {
    ...(row.participants.find((participant) => participant.email.toLowerCase() === me) ?? { email: me }),
    status: input.status,
    ...(input.comment !== undefined ? { comment: input.comment } : {}),
  };
  if (!answer.name && grant.name) answer.name = grant.name;
  const participants = row.participants.some((participant) => participant.email.toLowerCase() === me)
    ? row.participants.map((participant) => (participant.email.toLowerCase() === me ? answer : participant))
    : [...row.participants, answer];
  const updated = await db.write((tx) => store.update(tx, grant, row, { participants, updatedAt: now() }));
  // A CalDAV calendar keeps the answer too (the PARTSTAT in the server's copy), as calendar apps do.
  await pushSeries(state, grant, calendar.id, updated.icalUid, updated.id);
  const attendee: Participant = {
    email: answer.email,
    status: answer.status,
    ...(answer.name ? { name: answer.name } : {}),
    ...(answer.comment ? { comment: answer.comment } : {}),
  };
  const error = await dispatch(
    state,
    composeReply(senderOf(grant), updated.id, toCalendarEventData(updated), attendee, clock.now()),
  );
  return error
    ? { send_ics_error: { type: state.invitations ? 'provider_error' : 'not_configured', message: error } }
    : {};
}
