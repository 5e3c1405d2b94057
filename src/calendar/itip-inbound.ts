/**
 * @module calendar/itip-inbound
 * Incoming iTIP (RFC 5546) applied to a grant's calendar, as an iMIP message's `text/calendar` part
 * arrives: REQUEST creates or (by UID and SEQUENCE) updates the event on the primary calendar with the
 * organizer as organizer; CANCEL cancels it (or one instance); REPLY records an attendee's answer on an
 * event the grant organizes. Anything unreadable, stale or from the wrong person changes nothing and is
 * logged; the mail itself is the caller's business (it stays in the inbox). The iCalendar text is parsed off the
 * event loop, under a deadline and a heap cap (ical-bounded.ts); a cancellation or reply for an event the grant
 * does not have is answered from one read, without a write transaction.
 *
 * The inbox is plain functions over a small state made here (./itip-inbound-state.ts): REQUEST
 * (./itip-inbound-request.ts), CANCEL and REPLY (./itip-inbound-answers.ts).
 */
import type { GrantRow } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { CalendarService, EventStore } from './contracts.js';
import { sharedCalendarParser, type CalendarParser } from './ical-bounded.js';
import type { ParsedEvent } from './ical.js';
import { applyCancel, applyReply } from './itip-inbound-answers.js';
import { applyRequest } from './itip-inbound-request.js';
import {
  ignore,
  knownUids,
  type InboundInvitation,
  type InboxState,
  type InvitationOutcome,
} from './itip-inbound-state.js';

export type { InboundInvitation, InvitationOutcome } from './contracts.js';

/** Creates the handler of incoming invitations. `parser` parses their iCalendar (default: the shared bounded parser). */
export function createInvitationInbox(
  { db, clock, newId, logger }: CoreDeps,
  calendars: CalendarService,
  store: EventStore,
  parser: CalendarParser = sharedCalendarParser(),
) {
  const state: InboxState = { db, newId, logger, calendars, store, parser, now: () => unixSeconds(clock.now()) };

  return {
    /**
     * Applies one incoming iMIP message to `grant`'s calendar. Returns what happened per event; never throws
     * for bad input (unreadable iCalendar is logged and reported `unreadable`, the calendar untouched).
     */
    apply: (grant: GrantRow, invitation: InboundInvitation) => applyInvitation(state, grant, invitation),
  };
}

/**
 * Applies one incoming iMIP message to `grant`'s calendar. Returns what happened per event; never throws
 * for bad input (unreadable iCalendar is logged and reported `unreadable`, the calendar untouched).
 */
async function applyInvitation(
  state: InboxState,
  grant: GrantRow,
  invitation: InboundInvitation,
): Promise<InvitationOutcome[]> {
  const primary = await state.calendars.primaryOf(grant.id);
  const parsed = await state.parser.parse(invitation.ics, { defaultTimeZone: primary?.timezone ?? 'UTC' });
  if (!parsed.ok) {
    if (parsed.unreadable) {
      state.logger.warn('calendar attachment unreadable: its parse was stopped', {
        grant_id: grant.id,
        error: parsed.error,
      });
      return [{ action: 'unreadable', reason: parsed.error }];
    }
    state.logger.warn('calendar attachment unreadable: not readable iCalendar', {
      grant_id: grant.id,
      error: parsed.error,
    });
    return [{ action: 'unreadable', reason: parsed.error }];
  }
  const sender = invitation.sender.trim().toLowerCase();
  const byUid = new Map<string, ParsedEvent[]>();
  for (const event of parsed.value.events) byUid.set(event.uid, [...(byUid.get(event.uid) ?? []), event]);
  const method = parsed.value.method;
  const outcomes: InvitationOutcome[] = [];
  if (method === 'CANCEL' || method === 'REPLY') {
    // Answers and cancellations are mostly about events we have; for the rest one read says so, and no write lock is taken.
    const known = await knownUids(state, grant, [...byUid.keys()]);
    for (const uid of [...byUid.keys()]) {
      if (known.has(uid)) continue;
      byUid.delete(uid);
      outcomes.push(
        ignore(
          state,
          grant,
          method === 'CANCEL' ? 'CANCEL for an unknown event' : 'REPLY for an event the grant does not organize',
          { uid },
        ),
      );
    }
  }
  for (const events of byUid.values()) {
    switch (parsed.value.method) {
      case 'REQUEST':
        outcomes.push(...(await applyRequest(state, grant, events, sender)));
        break;
      case 'CANCEL':
        outcomes.push(...(await applyCancel(state, grant, events, sender)));
        break;
      case 'REPLY':
        outcomes.push(...(await applyReply(state, grant, events, sender)));
        break;
      default:
        outcomes.push(
          ignore(
            state,
            grant,
            `METHOD ${parsed.value.method ?? '(none)'} is not an invitation, update, cancellation or reply`,
          ),
        );
    }
  }
  return outcomes;
}
