/**
 * @module calendar/invitation-message
 * What an outgoing iMIP message carries (RFC 6047): sender, recipients, subject, a plain-text summary and
 * the iCalendar part with its `text/calendar; method=…` type. Built here, sent by whoever implements
 * {@link InvitationSender} (the outbound mail flow). Pure functions.
 */
import { isAllDay, type EventTime } from './event-time.js';
import {
  buildItipCancel,
  buildItipReply,
  buildItipRequest,
  itipContentType,
  type CalendarEventData,
  type EmailName,
  type Participant,
} from './ical.js';

/** One iMIP email to send. */
export interface OutgoingInvitation {
  applicationId: string;
  grantId: string;
  /** The event (or instance) it is about, and its iCalendar UID. */
  eventId: string;
  icalUid: string;
  method: 'REQUEST' | 'CANCEL' | 'REPLY';
  /** The grant's address (and name). */
  from: EmailName;
  /** Participants (REQUEST, CANCEL) or the organizer (REPLY). */
  to: EmailName[];
  subject: string;
  /** Plain-text body. */
  text: string;
  /** The iCalendar object, sent as the `text/calendar` part (and, as many clients expect, also as an `invite.ics` attachment). */
  ics: string;
  /** `text/calendar; method=…; charset=UTF-8`. */
  contentType: string;
}

/**
 * Delivers iMIP messages through the outbound mail flow. Not wired yet: without one, events still change,
 * nothing is mailed, and `send_rsvp` reports `send_ics_error`. Must not throw for a single bad recipient.
 */
export interface InvitationSender {
  send(invitation: OutgoingInvitation): Promise<void>;
}

/** A human-readable time of an event, in its own time zone: `Mon, Jun 9, 2025, 09:00 – 10:00 (America/New_York)`. */
export function describeWhen(when: EventTime): string {
  if (isAllDay(when))
    return when.kind === 'date' ? `${when.date} (all day)` : `${when.startDate} – ${when.endDate} (all day)`;
  const zone = when.kind === 'time' ? when.timezone : when.startTimezone;
  const start = when.kind === 'time' ? when.time : when.startTime;
  const end = when.kind === 'time' ? when.time : when.endTime;
  const day = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
  });
  const clock = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const sameDay = day.format(start * 1000) === day.format(end * 1000);
  const endText = end === start ? '' : ` – ${sameDay ? '' : `${day.format(end * 1000)}, `}${clock.format(end * 1000)}`;
  return `${day.format(start * 1000)}, ${clock.format(start * 1000)}${endText} (${zone})`;
}

const REPLY_WORDS = { yes: 'Accepted', no: 'Declined', maybe: 'Tentatively accepted', noreply: 'Replied' } as const;

function summary(event: CalendarEventData, lines: string[]): string {
  const body = [...lines, '', `When: ${describeWhen(event.when)}`];
  if (event.location) body.push(`Where: ${event.location}`);
  if (event.conferencing?.details.url) body.push(`Join: ${event.conferencing.details.url}`);
  if (event.organizer)
    body.push(
      `Organizer: ${event.organizer.name ? `${event.organizer.name} <${event.organizer.email}>` : event.organizer.email}`,
    );
  if (event.description) body.push('', event.description.slice(0, 4000));
  return `${body.join('\n')}\n`;
}

interface Sender {
  applicationId: string;
  grantId: string;
  email: string;
  name?: string | null | undefined;
}

function from(sender: Sender): EmailName {
  return sender.name ? { email: sender.email, name: sender.name } : { email: sender.email };
}

/** A REQUEST (new invitation, or an update when `sequence` > 0) of a series master plus its overrides, to `to`. */
export function composeRequest(
  sender: Sender,
  eventId: string,
  events: CalendarEventData[],
  to: EmailName[],
  now: Date,
): OutgoingInvitation {
  const event = events[0]!;
  const title = event.title ?? '(no title)';
  const update = event.sequence > 0;
  return {
    applicationId: sender.applicationId,
    grantId: sender.grantId,
    eventId,
    icalUid: event.uid,
    method: 'REQUEST',
    from: from(sender),
    to,
    subject: `${update ? 'Updated invitation' : 'Invitation'}: ${title} @ ${describeWhen(event.when)}`,
    text: summary(event, [`${sender.name ?? sender.email} ${update ? 'updated' : 'invited you to'} "${title}".`]),
    ics: buildItipRequest(events, now),
    contentType: itipContentType('REQUEST'),
  };
}

/** A CANCEL of an event (or of one instance when `recurrenceId` is set), to `to`. */
export function composeCancel(
  sender: Sender,
  eventId: string,
  event: CalendarEventData,
  to: Participant[],
  now: Date,
): OutgoingInvitation {
  const title = event.title ?? '(no title)';
  return {
    applicationId: sender.applicationId,
    grantId: sender.grantId,
    eventId,
    icalUid: event.uid,
    method: 'CANCEL',
    from: from(sender),
    to: to.map(({ email, name }) => (name ? { email, name } : { email })),
    subject: `Cancelled: ${title} @ ${describeWhen(event.when)}`,
    text: summary(event, [`${sender.name ?? sender.email} cancelled "${title}".`]),
    ics: buildItipCancel(event, now, to),
    contentType: itipContentType('CANCEL'),
  };
}

/** A REPLY with the grant's answer, to the organizer. */
export function composeReply(
  sender: Sender,
  eventId: string,
  event: CalendarEventData,
  attendee: Participant,
  now: Date,
): OutgoingInvitation {
  const title = event.title ?? '(no title)';
  return {
    applicationId: sender.applicationId,
    grantId: sender.grantId,
    eventId,
    icalUid: event.uid,
    method: 'REPLY',
    from: from(sender),
    to: event.organizer ? [event.organizer] : [],
    subject: `${REPLY_WORDS[attendee.status]}: ${title} @ ${describeWhen(event.when)}`,
    text: summary(event, [
      `${sender.name ?? sender.email} ${REPLY_WORDS[attendee.status].toLowerCase()} "${title}".`,
      ...(attendee.comment ? ['', attendee.comment] : []),
    ]),
    ics: buildItipReply(event, attendee, now),
    contentType: itipContentType('REPLY'),
  };
}
