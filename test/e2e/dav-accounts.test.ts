/**
 * Calendars and contacts of a connected account over CalDAV and CardDAV (issue 38 item 5), through the `nylas` SDK
 * against our HTTP server, with Debian's Radicale on loopback as the account's server, Dovecot as its IMAP server and
 * an SMTP sink as its submission server. A second client (raw HTTP, as a calendar app speaks it) changes events and
 * contacts on Radicale directly. Checked: the settings are discovered from a base URL (`/.well-known/caldav`) and
 * stored sealed; an event created through the API appears on Radicale; one created there appears through the API
 * after a sync, with `event.created`, and in free/busy; a write the server's copy has moved past answers 409 naming
 * the event, and the next sync brings the server's version; deletions both ways; contacts and their groups
 * (CATEGORIES) both ways; and a connected account without CalDAV answers calendar calls with a 400 saying so.
 */
import { eq } from 'drizzle-orm';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { imapConnectSettings } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { davPeer, radicaleMissing, startRadicale, type DavPeer, type Radicale } from '../helpers/radicale.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const missing = dovecotMissing() ?? radicaleMissing();
if (missing) console.warn(`dav-accounts: skipped: ${missing}`);

/** Fixed ports of this file (36800-36809 of the range): Dovecot and Radicale cannot pick one and say which. */
const IMAP_PORT = 36801;
const RADICALE_PORT = 36802;

/** Passwords unlike anything else in the database, so a scan of its files finds them only if stored in clear. */
const ALICE = { user: 'alice@example.test', password: 'alice-Dav-Clear-Text-3391' };
const BOB = { user: 'bob@example.test', password: 'bob-Dav-Clear-Text-7120' };

const at = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** An iCalendar object as a calendar app writes it. */
const vevent = (uid: string, summary: string, start: string, end: string) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Second Client//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${start}`,
    `DTEND:${end}`,
    `SUMMARY:${summary}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

/** Three weekly standups from 6 April 2026, the second moved from 08:00 to 11:00 and renamed. */
const SERIES = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Second Client//EN',
  'BEGIN:VEVENT',
  'UID:series-1',
  'DTSTAMP:20260101T000000Z',
  'DTSTART:20260406T080000Z',
  'DTEND:20260406T083000Z',
  'RRULE:FREQ=WEEKLY;COUNT=3',
  'SUMMARY:Standup',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:series-1',
  'DTSTAMP:20260101T000000Z',
  'RECURRENCE-ID:20260413T080000Z',
  'DTSTART:20260413T110000Z',
  'DTEND:20260413T113000Z',
  'SUMMARY:Standup (moved)',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe.skipIf(missing !== undefined)(
  'calendars and contacts of a connected account (Radicale over CalDAV and CardDAV)',
  { timeout: 60_000 },
  () => {
    let dovecot: Dovecot;
    let radicale: Radicale;
    let smtp: SmtpSink;
    let service: TestService;
    let receiver: WebhookReceiver;
    let peer: DavPeer;
    let calendarUrl: string;
    let bookUrl: string;
    let grantId: string;
    let calendarId: string;
    let apiEventId: string;

    const sync = () => service.core.accounts.davSync.run(grantId);
    const delivered = (type: string, objectId: string) =>
      eventually(
        async () =>
          receiver.deliveries.find(
            (delivery) => delivery.json?.type === type && delivery.json?.data?.object?.id === objectId,
          ),
        10_000,
      );

    beforeAll(async () => {
      dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [ALICE, BOB] });
      radicale = await startRadicale({ port: RADICALE_PORT, users: [ALICE] });
      smtp = await startSmtpSink({ auth: { user: ALICE.user, pass: ALICE.password } });
      peer = davPeer(radicale, ALICE.user, ALICE.password);
      calendarUrl = await peer.makeCalendar('work', 'Work');
      bookUrl = await peer.makeAddressBook('people', 'People');
      // One event on the server before the account is connected: the initial sync brings it.
      await peer.put(
        new URL('before.ics', calendarUrl).href,
        vevent('before-1', 'Planning', '20260302T090000Z', '20260302T100000Z'),
        'text/calendar',
      );
      // And a weekly series with one instance moved (a RECURRENCE-ID exception in the same object).
      await peer.put(new URL('series.ics', calendarUrl).href, SERIES, 'text/calendar');
      receiver = await startReceiver();
      service = await startTestService({
        env: {
          AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
          AGENTPOST_WORKER_POLL_MS: '50',
          AGENTPOST_RATE_LIMIT_APPLICATION: '0',
        },
      });
      await service.nylas.webhooks.create({
        requestBody: {
          triggerTypes: [
            'event.created',
            'event.updated',
            'event.deleted',
            'contact.updated',
            'contact.deleted',
          ] as never,
          webhookUrl: receiver.url,
        },
      });
    }, 60_000);
    afterAll(async () => {
      await receiver?.close();
      await service?.close();
      await smtp?.close();
      await radicale?.stop();
      await dovecot?.stop();
    });

    it('connects with a base URL: the calendar home is discovered, the server calendars are the grant calendars, passwords sealed', async () => {
      const { data: grant } = await service.nylas.auth.customAuthentication({
        requestBody: {
          provider: 'imap',
          settings: imapConnectSettings(
            { user: ALICE.user, password: ALICE.password, imapPort: IMAP_PORT, smtpPort: smtp.port },
            // The CalDAV login is the IMAP one by default; the CardDAV one is given (the same here).
            {
              caldav_url: radicale.url,
              carddav_url: radicale.url,
              carddav_username: ALICE.user,
              carddav_password: ALICE.password,
            },
          ),
        },
      });
      grantId = grant.id;
      expect(JSON.stringify(grant)).not.toMatch(/Clear-Text/);
      const [account] = await service.core.deps.db.orm
        .select()
        .from(tables.davAccounts)
        .where(eq(tables.davAccounts.grantId, grantId));
      expect(account).toMatchObject({
        caldavUrl: radicale.url,
        caldavHome: new URL(`/${encodeURIComponent(ALICE.user)}/`, radicale.url).href,
        caldavUsername: null,
        caldavPasswordSealed: null,
        carddavUsername: ALICE.user,
      });
      expect(account!.carddavPasswordSealed).not.toContain('Clear-Text');
      const { data: calendars } = await service.nylas.calendars.list({ identifier: grantId });
      expect(calendars.map((calendar) => [calendar.name, calendar.isPrimary])).toEqual([['Work', true]]);
      calendarId = calendars[0]!.id;
    });

    it('changes the DAV servers and logins only by connecting again: a PATCH naming one is a 400', async () => {
      const error = await sdkError(
        service.nylas.grants.update({
          grantId,
          requestBody: { settings: { caldav_url: 'https://elsewhere.example/' } },
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toContain('caldav_url');
    });

    it('brings the events already on the server (initial sync), and counts them in free/busy', async () => {
      await sync();
      const { data: events } = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId, start: String(at('2026-03-01T00:00:00Z')), end: String(at('2026-03-31T00:00:00Z')) },
      });
      expect(events.map((event) => [event.title, event.icalUid])).toEqual([['Planning', 'before-1']]);
      // The series and its moved instance, written by the first sync's batched inserts, expand as the server has them.
      const { data: standups } = await service.nylas.events.list({
        identifier: grantId,
        queryParams: {
          calendarId,
          start: String(at('2026-04-01T00:00:00Z')),
          end: String(at('2026-04-30T00:00:00Z')),
          expandRecurring: true,
        },
      });
      expect(
        standups.map((event) => [event.title, (event.when as { startTime: number }).startTime, event.icalUid]),
      ).toEqual([
        ['Standup', at('2026-04-06T08:00:00Z'), 'series-1'],
        ['Standup (moved)', at('2026-04-13T11:00:00Z'), 'series-1'],
        ['Standup', at('2026-04-20T08:00:00Z'), 'series-1'],
      ]);
      const { data: freeBusy } = await service.nylas.calendars.getFreeBusy({
        identifier: grantId,
        requestBody: {
          startTime: at('2026-03-02T00:00:00Z'),
          endTime: at('2026-03-03T00:00:00Z'),
          emails: [ALICE.user],
        },
      });
      expect(freeBusy).toMatchObject([
        {
          email: ALICE.user,
          timeSlots: [{ startTime: at('2026-03-02T09:00:00Z'), endTime: at('2026-03-02T10:00:00Z'), status: 'busy' }],
        },
      ]);
    });

    it('writes an event created through the API to the server', async () => {
      const { data: event } = await service.nylas.events.create({
        identifier: grantId,
        queryParams: { calendarId },
        requestBody: {
          title: 'Design review',
          when: { startTime: at('2026-03-03T14:00:00Z'), endTime: at('2026-03-03T15:00:00Z') },
        },
      });
      apiEventId = event.id;
      const urls = await peer.list(calendarUrl);
      const objects = await Promise.all(urls.map((url) => peer.get(url)));
      const written = objects.find((object) => object.text.includes(`UID:${event.icalUid}`));
      expect(written?.text).toContain('SUMMARY:Design review');
      expect(written?.text).toContain('DTSTART:20260303T140000Z');
      expect(written?.text).not.toMatch(/^METHOD:/m);
      // Our own write is not brought back as a change.
      const pass = await sync();
      expect(pass.changed).toBe(0);
    });

    it('brings an event created on the server by another client, with event.created, into availability', async () => {
      await peer.put(
        new URL('peer-1.ics', calendarUrl).href,
        vevent('peer-1', 'Dentist', '20260304T080000Z', '20260304T090000Z'),
        'text/calendar',
      );
      const pass = await sync();
      expect(pass).toMatchObject({ changed: 1, removed: 0 });
      const { data: events } = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId, icalUid: 'peer-1', start: String(at('2026-03-01T00:00:00Z')) },
      });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ title: 'Dentist', calendarId });
      const delivery = await delivered('event.created', events[0]!.id);
      expect(delivery.json.data.object.title).toBe('Dentist');
      const { data: availability } = await service.nylas.calendars.getAvailability({
        requestBody: {
          startTime: at('2026-03-04T07:00:00Z'),
          endTime: at('2026-03-04T10:00:00Z'),
          durationMinutes: 60,
          participants: [{ email: ALICE.user }],
        },
      });
      const starts = availability.timeSlots.map((slot) => slot.startTime);
      expect(starts).not.toContain(at('2026-03-04T08:00:00Z'));
      expect(starts).toContain(at('2026-03-04T09:00:00Z'));
    });

    it('answers 409 naming the event when the server copy changed since the sync; the next sync brings the server version', async () => {
      const urls = await peer.list(calendarUrl);
      const objects = await Promise.all(urls.map(async (url) => ({ url, ...(await peer.get(url)) })));
      const ours = objects.find((object) => object.text.includes('SUMMARY:Design review'))!;
      const changed = await peer.put(
        ours.url,
        ours.text.replace('SUMMARY:Design review', 'SUMMARY:Moved by Alice'),
        'text/calendar',
        ours.etag!,
      );
      expect(changed.status).toBeLessThan(300);
      const error = await sdkError(
        service.nylas.events.update({
          identifier: grantId,
          eventId: apiEventId,
          queryParams: { calendarId },
          requestBody: { title: 'Design review (API)' },
        }),
      );
      expect(error.statusCode).toBe(409);
      expect(error.message).toContain(apiEventId);
      expect(error.message).toMatch(/ETag/);
      // The server keeps its version.
      expect((await peer.get(ours.url)).text).toContain('SUMMARY:Moved by Alice');
      await sync();
      const { data: event } = await service.nylas.events.find({
        identifier: grantId,
        eventId: apiEventId,
        queryParams: { calendarId },
      });
      expect(event.title).toBe('Moved by Alice');
    });

    it('writes an update and a deletion made through the API, guarded by the ETag held', async () => {
      await service.nylas.events.update({
        identifier: grantId,
        eventId: apiEventId,
        queryParams: { calendarId },
        requestBody: { title: 'Design review final' },
      });
      const find = async () => {
        const objects = await Promise.all((await peer.list(calendarUrl)).map((url) => peer.get(url)));
        return objects.find(
          (object) => object.text.includes('Design review final') || object.text.includes('Moved by Alice'),
        );
      };
      expect((await find())?.text).toContain('SUMMARY:Design review final');
      await service.nylas.events.destroy({ identifier: grantId, eventId: apiEventId, queryParams: { calendarId } });
      expect(await find()).toBeUndefined();
    });

    it('removes an event deleted on the server, with event.deleted', async () => {
      const { data: events } = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId, icalUid: 'peer-1', start: String(at('2026-03-01T00:00:00Z')) },
      });
      expect(await peer.remove(new URL('peer-1.ics', calendarUrl).href)).toBeLessThan(300);
      expect((await sync()).removed).toBe(1);
      const error = await sdkError(
        service.nylas.events.find({ identifier: grantId, eventId: events[0]!.id, queryParams: { calendarId } }),
      );
      expect(error.statusCode).toBe(404);
      await delivered('event.deleted', events[0]!.id);
    });

    it('syncs contacts and their groups from the address book, and writes API changes back', async () => {
      await peer.put(
        new URL('ada.vcf', bookUrl).href,
        [
          'BEGIN:VCARD',
          'VERSION:3.0',
          'UID:ada-1',
          'FN:Ada Lovelace',
          'N:Lovelace;Ada;;;',
          'EMAIL;TYPE=WORK:ada@example.org',
          'CATEGORIES:Friends,Analysts',
          'END:VCARD',
          '',
        ].join('\r\n'),
        'text/vcard',
      );
      await sync();
      const { data: contacts } = await service.nylas.contacts.list({ identifier: grantId, queryParams: {} });
      const ada = contacts.find((contact) => contact.emails?.[0]?.email === 'ada@example.org');
      expect(ada).toMatchObject({
        givenName: 'Ada',
        surname: 'Lovelace',
        groups: [{ id: 'Friends' }, { id: 'Analysts' }],
      });
      const { data: groups } = await service.nylas.contacts.groups({ identifier: grantId });
      expect(groups.map((group) => group.id).sort()).toEqual(['Analysts', 'Friends']);

      // Changed through the API: the server's card changes, keeping its UID.
      await service.nylas.contacts.update({
        identifier: grantId,
        contactId: ada!.id,
        requestBody: { jobTitle: 'Analyst' },
      });
      const card = await peer.get(new URL('ada.vcf', bookUrl).href);
      expect(card.text).toContain('UID:ada-1');
      expect(card.text).toContain('TITLE:Analyst');

      // Created through the API: a new card on the server.
      const { data: grace } = await service.nylas.contacts.create({
        identifier: grantId,
        requestBody: { givenName: 'Grace', surname: 'Hopper', emails: [{ email: 'grace@example.org', type: 'work' }] },
      });
      const cards = await Promise.all((await peer.list(bookUrl)).map((url) => peer.get(url)));
      expect(cards.some((each) => each.text.includes('EMAIL;TYPE=WORK:grace@example.org'))).toBe(true);

      // Deleted on the server: gone here at the next sync, with contact.deleted.
      expect(await peer.remove(new URL('ada.vcf', bookUrl).href)).toBeLessThan(300);
      await sync();
      expect(
        (await sdkError(service.nylas.contacts.find({ identifier: grantId, contactId: ada!.id, queryParams: {} })))
          .statusCode,
      ).toBe(404);
      await delivered('contact.deleted', ada!.id);

      // Deleted through the API: gone from the server.
      await service.nylas.contacts.destroy({ identifier: grantId, contactId: grace.id });
      const left = await Promise.all((await peer.list(bookUrl)).map((url) => peer.get(url)));
      expect(left.some((each) => each.text.includes('grace@example.org'))).toBe(false);
    });

    it('answers calendar calls of an account connected without CalDAV with a 400 saying so', async () => {
      const { data: bob } = await service.nylas.auth.customAuthentication({
        requestBody: {
          provider: 'imap',
          settings: imapConnectSettings(
            { user: BOB.user, password: BOB.password, imapPort: IMAP_PORT, smtpPort: smtp.port },
            // The SMTP sink takes one login.
            { smtp_username: ALICE.user, smtp_password: ALICE.password },
          ),
        },
      });
      const error = await sdkError(service.nylas.calendars.list({ identifier: bob.id }));
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(/no calendar server/);
      expect(error.message).toMatch(/caldav_url/);
      const events = await sdkError(
        service.nylas.events.list({ identifier: bob.id, queryParams: { calendarId: 'primary' } }),
      );
      expect(events.statusCode).toBe(400);
    });

    it('refuses a CalDAV login the server refuses, naming the server, before anything is stored', async () => {
      const error = await sdkError(
        service.nylas.auth.customAuthentication({
          requestBody: {
            provider: 'imap',
            settings: imapConnectSettings(
              { user: BOB.user, password: BOB.password, imapPort: IMAP_PORT, smtpPort: smtp.port },
              {
                smtp_username: ALICE.user,
                smtp_password: ALICE.password,
                caldav_url: radicale.url,
                caldav_username: ALICE.user,
                caldav_password: 'wrong',
              },
            ),
          },
        }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toContain(`CalDAV server http://127.0.0.1:${RADICALE_PORT}`);
    });

    it('keeps no DAV password in clear in the database files', () => {
      const path = fileURLToPath(new URL(service.config.databaseUrl.replace(/^file:/, 'file://')));
      let scanned = 0;
      for (const file of [path, `${path}-wal`]) {
        if (!existsSync(file)) continue;
        const bytes = readFileSync(file);
        scanned += bytes.length;
        expect(bytes.includes(Buffer.from(ALICE.password)), `the password in ${file}`).toBe(false);
      }
      expect(scanned).toBeGreaterThan(0);
    });
  },
);
