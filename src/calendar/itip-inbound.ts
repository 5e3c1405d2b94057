/**
 * @module calendar/itip-inbound
 * Incoming iTIP (RFC 5546) applied to a grant's calendar, as an iMIP message's `text/calendar` part
 * arrives: REQUEST creates or (by UID and SEQUENCE) updates the event on the primary calendar with the
 * organizer as organizer; CANCEL cancels it (or one instance); REPLY records an attendee's answer on an
 * event the grant organizes. Anything unreadable, stale or from the wrong person changes nothing and is
 * logged; the mail itself is the caller's business (it stays in the inbox). The iCalendar text is parsed off the
 * event loop, under a deadline and a heap cap (ical-bounded.ts); a cancellation or reply for an event the grant
 * does not have is answered from one read, without a write transaction.
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { CalendarService, EventStore, InboundInvitation, InvitationOutcome } from './contracts.js';
import { eventTimeColumns, eventTimeOf, type EventInsert, type EventRow } from './event-mapper.js';
import { shiftTo, utcRange } from './event-time.js';
import { sharedCalendarParser, type CalendarParser } from './ical-bounded.js';
import { parseRecurrence, type ParsedEvent } from './ical.js';
import { instanceId, storedRange } from './recurrence.js';

export type { InboundInvitation, InvitationOutcome } from './contracts.js';

/** Creates the handler of incoming invitations. `parser` parses their iCalendar (default: the shared bounded parser). */
export function createInvitationInbox(
  { db, clock, newId, logger }: CoreDeps,
  calendars: CalendarService,
  store: EventStore,
  parser: CalendarParser = sharedCalendarParser(),
) {
  const now = () => unixSeconds(clock.now());

  const ignore = (grant: GrantRow, reason: string, fields: Record<string, unknown> = {}): InvitationOutcome => {
    logger.info('calendar message ignored', { grant_id: grant.id, reason, ...fields });
    return { action: 'ignored', reason };
  };

  const findMaster = (tx: Tx, grant: GrantRow, uid: string) =>
    tx.query.events.findFirst({
      where: and(
        eq(tables.events.grantId, grant.id),
        eq(tables.events.icalUid, uid),
        isNull(tables.events.masterEventId),
      ),
    });
  /** The stored row of one instance of a series (an override), by its instance id. */
  const findInstance = (tx: Tx, grant: GrantRow, id: string) =>
    tx.query.events.findFirst({ where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, id)) });

  /** Which of these UIDs name a series or single event of the grant (one read, by events_grant_uid_idx). */
  async function knownUids(grant: GrantRow, uids: string[]): Promise<Set<string>> {
    const known = new Set<string>();
    for (let index = 0; index < uids.length; index += 500) {
      const rows = await db.orm
        .select({ uid: tables.events.icalUid })
        .from(tables.events)
        .where(
          and(
            eq(tables.events.grantId, grant.id),
            inArray(tables.events.icalUid, uids.slice(index, index + 500)),
            isNull(tables.events.masterEventId),
          ),
        );
      for (const row of rows) known.add(row.uid);
    }
    return known;
  }

  /** Row values of a parsed event (a series master or a single event). */
  function valuesOf(
    event: ParsedEvent & { when: NonNullable<ParsedEvent['when']> },
    organizer: { email: string; name?: string | undefined },
  ) {
    const recurrence = event.recurrence ? parseRecurrence(event.recurrence, event.when) : null;
    return {
      icalUid: event.uid,
      sequence: event.sequence,
      title: event.title,
      description: event.description,
      location: event.location,
      ...eventTimeColumns(event.when),
      ...storedRange(event.when, recurrence?.ok ? recurrence.value : null),
      recurrence: recurrence?.ok ? event.recurrence : null,
      busy: event.busy,
      status: event.status,
      visibility: event.visibility,
      readOnly: true,
      organizer,
      creator: organizer,
      participants: event.participants.map(({ email, name, status, comment }) => ({
        email,
        status,
        ...(name ? { name } : {}),
        ...(comment ? { comment } : {}),
      })),
      resources: event.resources.length > 0 ? event.resources : null,
      conferencing: event.conferencing,
      reminders: event.reminders,
    } satisfies Partial<EventInsert>;
  }

  /** Keeps the grant's own answer when the organizer resends the same revision. */
  function keepOwnAnswer(
    grant: GrantRow,
    incoming: EventRow['participants'],
    existing: EventRow | undefined,
    sameSequence: boolean,
  ): EventRow['participants'] {
    if (!existing || !sameSequence) return incoming;
    const mine = existing.participants.find((participant) => participant.email.toLowerCase() === grant.email);
    if (!mine) return incoming;
    return incoming.map((participant) =>
      participant.email.toLowerCase() === grant.email
        ? { ...participant, status: mine.status, ...(mine.comment ? { comment: mine.comment } : {}) }
        : participant,
    );
  }

  async function applyRequest(grant: GrantRow, events: ParsedEvent[], sender: string): Promise<InvitationOutcome[]> {
    const master = events.find((event) => event.recurrenceId === undefined);
    const first = master ?? events[0]!;
    const organizer = first.organizer ?? { email: sender };
    if (organizer.email === grant.email) return [ignore(grant, 'the grant organizes this event', { uid: first.uid })];
    if (organizer.email !== sender)
      logger.info('invitation sent by someone other than its organizer', {
        grant_id: grant.id,
        uid: first.uid,
        organizer: organizer.email,
        sender,
      });
    const primary = await calendars.primaryOf(grant.id);
    if (!primary) return [ignore(grant, 'the grant has no primary calendar', { uid: first.uid })];
    const at = now();
    return db.write(async (tx) => {
      const outcomes: InvitationOutcome[] = [];
      let existing = await findMaster(tx, grant, first.uid);
      if (existing && existing.organizer?.email.toLowerCase() !== organizer.email) {
        return [
          ignore(grant, 'an event with this UID has another organizer', { uid: first.uid, organizer: organizer.email }),
        ];
      }
      if (master) {
        if (!master.when) return [ignore(grant, 'REQUEST without DTSTART', { uid: master.uid })];
        if (existing && master.sequence < existing.sequence)
          return [ignore(grant, 'stale REQUEST (older SEQUENCE)', { uid: master.uid, sequence: master.sequence })];
        const values = valuesOf(master as ParsedEvent & { when: NonNullable<ParsedEvent['when']> }, organizer);
        values.participants = keepOwnAnswer(
          grant,
          values.participants,
          existing,
          existing?.sequence === master.sequence,
        );
        if (existing) {
          const timing =
            existing.rangeStart !== values.rangeStart ||
            JSON.stringify(existing.recurrence) !== JSON.stringify(values.recurrence);
          if (timing)
            for (const override of await store.overridesOf(tx, grant, existing.id))
              await tx.delete(tables.events).where(eq(tables.events.id, override.id));
          existing = await store.update(tx, grant, existing, { ...values, updatedAt: at });
          outcomes.push({ action: 'updated', eventId: existing.id });
        } else {
          const id = newId();
          existing = await store.insert(tx, grant, {
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
          const id = newId();
          await store.insert(tx, grant, {
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
          await store.update(tx, grant, stored, { ...overrideValues, updatedAt: at });
          outcomes.push({ action: 'updated', eventId: id });
        } else {
          await store.insert(tx, grant, {
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

  async function applyCancel(grant: GrantRow, events: ParsedEvent[], sender: string): Promise<InvitationOutcome[]> {
    const at = now();
    return db.write(async (tx) => {
      const outcomes: InvitationOutcome[] = [];
      for (const event of events) {
        const master = await findMaster(tx, grant, event.uid);
        if (!master) {
          outcomes.push(ignore(grant, 'CANCEL for an unknown event', { uid: event.uid }));
          continue;
        }
        const organizer = (event.organizer ?? { email: sender }).email;
        if (
          !master.organizer ||
          master.organizer.email.toLowerCase() === grant.email ||
          master.organizer.email.toLowerCase() !== organizer
        ) {
          outcomes.push(ignore(grant, "CANCEL not from the event's organizer", { uid: event.uid, sender }));
          continue;
        }
        if (event.recurrenceId === undefined || !master.recurrence) {
          if (event.recurrenceId !== undefined && utcRange(eventTimeOf(master)).start !== event.recurrenceId) {
            outcomes.push(ignore(grant, 'CANCEL for an instance the event does not have', { uid: event.uid }));
            continue;
          }
          const updated = await store.update(tx, grant, master, {
            status: 'cancelled',
            sequence: Math.max(master.sequence, event.sequence),
            updatedAt: at,
          });
          for (const override of await store.overridesOf(tx, grant, master.id))
            await store.update(tx, grant, override, { status: 'cancelled', updatedAt: at });
          outcomes.push({ action: 'cancelled', eventId: updated.id });
          continue;
        }
        const id = instanceId(master.id, event.recurrenceId);
        const stored = await findInstance(tx, grant, id);
        if (stored) {
          await store.update(tx, grant, stored, {
            status: 'cancelled',
            sequence: Math.max(stored.sequence, event.sequence),
            updatedAt: at,
          });
        } else {
          const { id: _id, createdAt: _created, ...copy } = master;
          const when = shiftTo(eventTimeOf(master), event.recurrenceId);
          await store.insert(tx, grant, {
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

  async function applyReply(grant: GrantRow, events: ParsedEvent[], sender: string): Promise<InvitationOutcome[]> {
    const at = now();
    return db.write(async (tx) => {
      const outcomes: InvitationOutcome[] = [];
      for (const event of events) {
        const attendee = event.participants[0];
        if (!attendee) {
          outcomes.push(ignore(grant, 'REPLY without ATTENDEE', { uid: event.uid }));
          continue;
        }
        const master = await findMaster(tx, grant, event.uid);
        if (!master || (master.organizer && master.organizer.email.toLowerCase() !== grant.email)) {
          outcomes.push(ignore(grant, 'REPLY for an event the grant does not organize', { uid: event.uid }));
          continue;
        }
        if (!master.participants.some((participant) => participant.email.toLowerCase() === attendee.email)) {
          logger.warn('calendar REPLY from someone who is not a participant ignored', {
            grant_id: grant.id,
            uid: event.uid,
            attendee: attendee.email,
            sender,
          });
          outcomes.push({ action: 'ignored', reason: 'REPLY from someone who is not a participant' });
          continue;
        }
        if (sender && sender !== attendee.email)
          logger.info('calendar REPLY sent by another address than the attendee', {
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
            target = await store.insert(tx, grant, {
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
        const updated = await store.update(tx, grant, target, {
          participants: answer(target.participants),
          updatedAt: at,
        });
        outcomes.push({ action: 'reply_recorded', eventId: updated.id });
      }
      return outcomes;
    });
  }

  return {
    /**
     * Applies one incoming iMIP message to `grant`'s calendar. Returns what happened per event; never throws
     * for bad input (unreadable iCalendar is logged and reported `unreadable`, the calendar untouched).
     */
    async apply(this: void, grant: GrantRow, invitation: InboundInvitation): Promise<InvitationOutcome[]> {
      const primary = await calendars.primaryOf(grant.id);
      const parsed = await parser.parse(invitation.ics, { defaultTimeZone: primary?.timezone ?? 'UTC' });
      if (!parsed.ok) {
        if (parsed.unreadable) {
          logger.warn('calendar attachment unreadable: its parse was stopped', {
            grant_id: grant.id,
            error: parsed.error,
          });
          return [{ action: 'unreadable', reason: parsed.error }];
        }
        logger.warn('calendar attachment unreadable: not readable iCalendar', {
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
        const known = await knownUids(grant, [...byUid.keys()]);
        for (const uid of [...byUid.keys()]) {
          if (known.has(uid)) continue;
          byUid.delete(uid);
          outcomes.push(
            ignore(
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
            outcomes.push(...(await applyRequest(grant, events, sender)));
            break;
          case 'CANCEL':
            outcomes.push(...(await applyCancel(grant, events, sender)));
            break;
          case 'REPLY':
            outcomes.push(...(await applyReply(grant, events, sender)));
            break;
          default:
            outcomes.push(
              ignore(
                grant,
                `METHOD ${parsed.value.method ?? '(none)'} is not an invitation, update, cancellation or reply`,
              ),
            );
        }
      }
      return outcomes;
    },
  };
}
