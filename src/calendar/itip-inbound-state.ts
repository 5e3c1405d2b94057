/**
 * @module calendar/itip-inbound-state
 * What the handling of incoming invitations (./itip-inbound.ts) shares: the state made once by
 * `createInvitationInbox`, its outcomes, and the reads and row values its methods (REQUEST, CANCEL, REPLY) use.
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { CalendarService } from './calendar-service.js';
import { eventTimeColumns, type EventInsert, type EventRow } from './event-mapper.js';
import type { EventStore } from './event-store.js';
import type { CalendarParser } from './ical-bounded.js';
import { parseRecurrence, type ParsedEvent } from './ical.js';
import { storedRange } from './recurrence.js';
import type { InvitationOutcome } from './contracts.js';

export type { InboundInvitation, InvitationOutcome } from './contracts.js';

/** What the functions of the invitation inbox share, made once by `createInvitationInbox`. */
export interface InboxState {
  db: CoreDeps['db'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  calendars: CalendarService;
  store: EventStore;
  parser: CalendarParser;
  /** The clock's time in unix seconds. */
  now: () => number;
}

export const ignore = (
  state: InboxState,
  grant: GrantRow,
  reason: string,
  fields: Record<string, unknown> = {},
): InvitationOutcome => {
  state.logger.info('calendar message ignored', { grant_id: grant.id, reason, ...fields });
  return { action: 'ignored', reason };
};

export const findMaster = (tx: Tx, grant: GrantRow, uid: string) =>
  tx.query.events.findFirst({
    where: and(
      eq(tables.events.grantId, grant.id),
      eq(tables.events.icalUid, uid),
      isNull(tables.events.masterEventId),
    ),
  });

/** The stored row of one instance of a series (an override), by its instance id. */
export const findInstance = (tx: Tx, grant: GrantRow, id: string) =>
  tx.query.events.findFirst({ where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, id)) });

/** Which of these UIDs name a series or single event of the grant (one read, by events_grant_uid_idx). */
export async function knownUids(state: InboxState, grant: GrantRow, uids: string[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (let index = 0; index < uids.length; index += 500) {
    const rows = await state.db.orm
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
export function valuesOf(
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
export function keepOwnAnswer(
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
