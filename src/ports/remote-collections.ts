/**
 * @module ports/remote-collections
 * The calendars and contacts side of the provider seam (src/providers): where a grant's calendars and contacts are,
 * and the writes of the API's changes to the account's own servers. An interface only, here because the calendar and
 * contacts areas that call it are built before the providers' mail side (which imports them); src/providers
 * re-exports it, src/dav/ implements it. Without one, every grant's calendars and contacts are ours.
 */

/** What the seam needs to know of a grant. */
export interface CollectionGrant {
  id: string;
  provider: string;
}

/** What a calendar on the server holds of the API's calendar. */
export interface RemoteCalendarFields {
  name: string;
  description: string | null;
  hexColor: string | null;
}

/** Where a grant's calendars (or contacts) live: our store, a CalDAV (CardDAV) server, or nowhere it can reach. */
export type CollectionHome = 'local' | 'remote' | 'none';

/**
 * Calendars and contacts kept on the account's own servers (CalDAV, CardDAV: src/dav/). The store holds a copy,
 * synced in by the account's sync; a change made through the API is written to the server right after it is
 * committed here, against the ETag of the version held (`If-Match`; `If-None-Match: *` for a new object). The server
 * refusing it (412: changed there since) is a 409 naming the object; the next sync brings the server's version.
 */
export interface RemoteCollections {
  /** Where the grant's calendars are; `none` makes every calendar call a 400 (the account has no CalDAV). */
  calendarsOf(grant: CollectionGrant): Promise<CollectionHome>;
  /** Where the grant's contacts are; `none` makes every contact call a 400 (the account has no CardDAV). */
  contactsOf(grant: CollectionGrant): Promise<CollectionHome>;
  /**
   * Makes a calendar on the server for the new calendar `calendarId` (before its row is stored here, so the sync
   * knows it as this calendar), with its name, description and colour.
   */
  createCalendar(grant: CollectionGrant, target: { calendarId: string } & RemoteCalendarFields): Promise<void>;
  /** Changes the server calendar of `calendarId` (only the fields given). */
  updateCalendar(grant: CollectionGrant, target: { calendarId: string } & Partial<RemoteCalendarFields>): Promise<void>;
  /** Deletes the server calendar of `calendarId`, with its events. */
  deleteCalendar(grant: CollectionGrant, target: { calendarId: string }): Promise<void>;
  /** Writes the iCalendar object of the event series `uid` (stored event `eventId`) to the server calendar of `calendarId`. */
  putEvent(
    grant: CollectionGrant,
    target: { calendarId: string; uid: string; eventId: string; ics: string },
  ): Promise<void>;
  /** Deletes the server object of the event series `uid` (a 409 when it changed there since it was read). */
  deleteEvent(grant: CollectionGrant, target: { calendarId: string; uid: string; eventId: string }): Promise<void>;
  /**
   * Writes the vCard of contact `contactId` to the account's address book; `vcard` builds it with the card's UID (the
   * server's, for a contact that came from there; else the contact id).
   */
  putContact(grant: CollectionGrant, target: { contactId: string; vcard: (uid: string) => string }): Promise<void>;
  /** Deletes the server object of contact `contactId`. */
  deleteContact(grant: CollectionGrant, target: { contactId: string }): Promise<void>;
}
