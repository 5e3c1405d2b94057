/**
 * The audit of the official `nylas` SDK's methods against connected accounts (issue 38, "How it is checked"): every
 * method of `auth`, `connectors`, `connectors.credentials`, `grants`, `messages` (with `messages.smartCompose`),
 * `threads`, `drafts`, `events`, `calendars` and `contacts` — all in scope but notetakers and scheduler — called
 * through the SDK against
 * - an **OAuth grant**: a Google connector pointed at oidc-provider on loopback, the grant made by the hosted sign-in;
 *   its mail over Dovecot (IMAP `XOAUTH2`, tokens introspected) and Postfix (SMTP `XOAUTH2` through Dovecot's SASL),
 *   its calendars and contacts over CalDAV and CardDAV with `Authorization: Bearer` at the connector's `caldav_url`
 *   and `carddav_url`: Radicale behind a proxy that checks each token at the provider, standing for Google's servers;
 * - a **CalDAV grant**: an IMAP account (a password on the same Dovecot and Postfix) with `caldav_url` and
 *   `carddav_url` on Radicale, made through the hosted IMAP form and connected again with `connect/custom`.
 * Each SDK client is wrapped so that a method counts only when its call resolved; the last test of each grant checks
 * that every in-scope method of the SDK (read from its classes, so a method added to the SDK is missed loudly) ran and
 * passed, and prints the counts. Each call also asserts what it answered.
 */
import type { ImapFlow } from 'imapflow';
import { CredentialType } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBearerDavProxy, type BearerDavProxy } from '../helpers/bearer-dav-proxy.js';
import { dovecotMissing, type Dovecot } from '../helpers/dovecot.js';
import { imapClient, imapConnectSettings } from '../helpers/imap-grant.js';
import { eventually } from '../helpers/mail.js';
import { refreshTokenFor, startOidcProvider, walkSignIn, type OidcServer } from '../helpers/oidc.js';
import { startFakeModelServer, type FakeModelServer } from '../helpers/openai-compatible.js';
import { arrivesIn, startOAuthMail } from '../helpers/oauth-mail.js';
import { postfixMissing, type Postfix } from '../helpers/postfix.js';
import { davPeer, radicaleMissing, startRadicale, type DavPeer, type Radicale } from '../helpers/radicale.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

const missing = dovecotMissing() ?? postfixMissing() ?? radicaleMissing();
if (missing) console.warn(`sdk-audit: skipped: ${missing}`);

/** Fixed ports of this file (42400-42499): Dovecot, Postfix and Radicale cannot pick one and say which. */
const IMAP_PORT = 42401;
const LMTP_PORT = 42402;
const AUTH_PORT = 42403;
const SMTP_PORT = 42404;
const RADICALE_PORT = 42405;

/** The OAuth grant's account (Google), the CalDAV grant's account (a password), and their correspondent. */
const ALICE = { user: 'alice@example.test', password: 'alice-password-audit' };
const CAROL = { user: 'carol@example.test', password: 'carol-password-audit' };
const BOB = { user: 'bob@example.test', password: 'bob-password-audit' };
/** The Google connector's IMAP and SMTP servers: this file's Dovecot and Postfix. */
const SERVERS: Record<string, string | number> = {
  imapHost: '127.0.0.1',
  imapPort: IMAP_PORT,
  smtpHost: '127.0.0.1',
  smtpPort: SMTP_PORT,
};
const APP_REDIRECT = 'http://127.0.0.1:9/app/callback';
const WAIT_MS = 20_000;

/** The SDK resources in scope (issue 38): every one but notetakers and scheduler, with their sub-resources. */
const IN_SCOPE = [
  'auth',
  'connectors',
  'connectors.credentials',
  'grants',
  'messages',
  'messages.smartCompose',
  'threads',
  'drafts',
  'events',
  'calendars',
  'contacts',
] as const;
/** Methods on the SDK's prototypes that are private in its types (helpers of `auth`), not API calls. */
const PRIVATE_METHODS = new Set(['constructor', 'urlAuthBuilder', 'hashPKCESecret', 'getTokenInfo']);

const resourceAt = (nylas: Nylas, path: string): object =>
  path.split('.').reduce<Record<string, unknown>>((at, key) => at[key] as Record<string, unknown>, nylas as never);

/** Every public method of the in-scope resources, as `resource.method`, read from the SDK's classes. */
function inScopeMethods(nylas: Nylas): string[] {
  return IN_SCOPE.flatMap((path) => {
    const resource = resourceAt(nylas, path);
    return Object.getOwnPropertyNames(Object.getPrototypeOf(resource))
      .filter((name) => !PRIVATE_METHODS.has(name) && typeof (resource as Record<string, unknown>)[name] === 'function')
      .map((name) => `${path}.${name}`);
  });
}

/** The SDK client, wrapped: each in-scope method whose call resolves (or returns, when synchronous) is added to `passed`. */
function audited(nylas: Nylas, passed: Set<string>): Nylas {
  const scoped = new Set<string>(IN_SCOPE);
  const wrap = (target: object, path: string): object =>
    new Proxy(target, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property);
        const name = `${path}.${String(property)}`;
        if (typeof value === 'function') {
          return (...args: unknown[]) => {
            const result: unknown = (value as (...values: unknown[]) => unknown).apply(object, args);
            if (result && typeof (result as PromiseLike<unknown>).then === 'function')
              (result as PromiseLike<unknown>).then(
                () => passed.add(name),
                () => undefined,
              );
            else passed.add(name);
            return result;
          };
        }
        return scoped.has(name) && value && typeof value === 'object' ? wrap(value, name) : value;
      },
    });
  return new Proxy(nylas, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property);
      return scoped.has(String(property)) && value && typeof value === 'object' ? wrap(value, String(property)) : value;
    },
  });
}

function message(from: string, to: string, subject: string): string {
  return [
    `From: Bob <${from}>`,
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, '-')}-${to.split('@')[0]}@example.test>`,
    'Date: Sun, 29 Nov 2026 12:00:00 +0000',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Hello, <b>can we meet</b> on Monday?</p><blockquote>older text</blockquote>',
    '',
  ].join('\r\n');
}

/** An invitation from Bob to `attendee`, as a calendar app writes it on the attendee's server. */
const invitation = (uid: string, attendee: string) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Second Client//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20261101T000000Z',
    'DTSTART:20261207T150000Z',
    'DTEND:20261207T160000Z',
    'SUMMARY:Review with Bob',
    `ORGANIZER;CN=Bob:mailto:${BOB.user}`,
    `ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:${attendee}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

/**
 * What a CalDAV grant (an IMAP account with a password) has no use for, and why. Connectors and their credentials
 * belong to the application, not to a grant: they are audited once, with the OAuth grant's connector.
 */
const CALDAV_NOT_APPLICABLE: Record<string, string> = {
  'auth.urlForAdminConsent': "Microsoft's admin consent for a tenant; an IMAP account has no tenant",
  'auth.idTokenInfo': 'an ID token comes from an OpenID provider; an IMAP login has none, so none is issued',
  ...Object.fromEntries(
    ['list', 'find', 'create', 'update', 'destroy'].flatMap((method) => [
      [`connectors.${method}`, 'application-level, audited with the OAuth grant'],
      [`connectors.credentials.${method}`, 'application-level, audited with the OAuth grant'],
    ]),
  ),
};

const at = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe.skipIf(missing !== undefined)(
  'the SDK method audit against an OAuth grant and a CalDAV grant',
  { timeout: 90_000 },
  () => {
    let oidc: OidcServer;
    let dovecot: Dovecot;
    let postfix: Postfix;
    let radicale: Radicale;
    let proxy: BearerDavProxy;
    let model: FakeModelServer;
    let service: TestService;
    let bob: ImapFlow;
    let applicationId: string;
    const summary: string[] = [];

    beforeAll(async () => {
      model = await startFakeModelServer();
      service = await startTestService({
        env: {
          AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
          AGENTPOST_WORKER_POLL_MS: '100',
          AGENTPOST_RATE_LIMIT_APPLICATION: '0',
          AGENTPOST_AI_PROVIDER: 'openai-compatible',
          AGENTPOST_AI_MODEL: 'loopback-model',
          AGENTPOST_AI_BASE_URL: model.baseUrl,
        },
      });
      oidc = await startOidcProvider({ redirectUris: [`${service.url}/v3/connect/callback`] });
      ({ dovecot, postfix } = await startOAuthMail(
        { imap: IMAP_PORT, lmtp: LMTP_PORT, auth: AUTH_PORT, smtp: SMTP_PORT },
        [ALICE, BOB, CAROL],
        oidc,
      ));
      radicale = await startRadicale({ port: RADICALE_PORT, users: [ALICE, CAROL] });
      proxy = await startBearerDavProxy({
        upstream: radicale.url,
        introspection: { url: oidc.introspectionUrl, ...oidc.introspectionClient },
        logins: { [ALICE.user]: ALICE.password },
      });
      for (const account of [ALICE, CAROL]) {
        const peer = davPeer(radicale, account.user, account.password);
        const calendar = await peer.makeCalendar('work', 'Work');
        await peer.makeAddressBook('people', 'People');
        // An invitation from Bob already on the account's calendar: what events.sendRsvp answers.
        await peer.put(
          new URL('invite.ics', calendar).href,
          invitation(`invite-${account.user}`, account.user),
          'text/calendar',
        );
      }
      await service.nylas.applications.redirectUris.create({ requestBody: { url: APP_REDIRECT, platform: 'web' } });
      applicationId = (await service.nylas.applications.getDetails()).data.applicationId;
      bob = await imapClient(IMAP_PORT, BOB.user, BOB.password);
      for (const account of [ALICE, CAROL]) {
        const client = await imapClient(IMAP_PORT, account.user, account.password);
        await client.append('INBOX', message(BOB.user, account.user, 'Monday meeting'));
        await client.logout();
      }
    }, 90_000);
    afterAll(async () => {
      if (summary.length > 0) console.log(`sdk-audit:\n${summary.join('\n')}`);
      await bob?.logout().catch(() => undefined);
      await service?.close();
      await proxy?.stop();
      await radicale?.stop();
      postfix?.stop();
      await dovecot?.stop();
      await oidc?.stop();
      await model?.close();
    });

    /**
     * The grant-level methods (messages with smart compose, threads, drafts, calendars, events, contacts, grants) against
     * one grant, the last test checking that every in-scope method but those `notApplicable` to it passed.
     */
    function grantAudit(
      kind: string,
      notApplicable: Record<string, string>,
      context: () => { nylas: Nylas; grantId: string; email: string; peer: DavPeer; passed: Set<string> },
    ) {
      let inbound: { messageId: string; threadId: string };

      it(`${kind}: messages.list, find, update, cleanMessages and smartCompose on the synced mail`, async () => {
        const { nylas, grantId } = context();
        const found = await eventually(async () => {
          const listed = await nylas.messages.list({ identifier: grantId, queryParams: { subject: 'Monday meeting' } });
          return listed.data[0];
        }, WAIT_MS);
        expect(found.from?.[0]?.email).toBe(BOB.user);
        inbound = { messageId: found.id, threadId: found.threadId! };
        const read = await nylas.messages.find({ identifier: grantId, messageId: found.id });
        expect(read.data.body).toContain('can we meet');
        const updated = await nylas.messages.update({
          identifier: grantId,
          messageId: found.id,
          requestBody: { unread: false, starred: true },
        });
        expect(updated.data).toMatchObject({ unread: false, starred: true });
        const cleaned = await nylas.messages.cleanMessages({
          identifier: grantId,
          requestBody: { messageId: [found.id], ignoreLinks: true, ignoreImages: true, removeConclusionPhrases: true },
        });
        expect(cleaned.data[0]!.conversation).toContain('can we meet');
        expect(cleaned.data[0]!.conversation).not.toMatch(/<p>|<b>/);

        model.answer({ kind: 'text', pieces: ['Dear Bob, see you Monday.'] });
        const composed = await nylas.messages.smartCompose.composeMessage({
          identifier: grantId,
          requestBody: { prompt: 'Tell Bob I will see him Monday' },
        });
        expect(composed.data.suggestion).toBe('Dear Bob, see you Monday.');
        model.answer({ kind: 'text', pieces: ['Monday works for me.'] });
        const reply = await nylas.messages.smartCompose.composeMessageReply({
          identifier: grantId,
          messageId: found.id,
          requestBody: { prompt: 'Accept' },
        });
        expect(reply.data.suggestion).toBe('Monday works for me.');
      });

      it(`${kind}: messages.send leaves through the account's SMTP server; a scheduled send is listed, found and stopped`, async () => {
        const { nylas, grantId } = context();
        const subject = `Sent by the ${kind} grant`;
        const sent = await nylas.messages.send({
          identifier: grantId,
          requestBody: { to: [{ email: BOB.user }], subject, body: 'Hello Bob' },
        });
        expect(sent.data.subject).toBe(subject);
        await arrivesIn(bob, subject, WAIT_MS);

        const later = await nylas.messages.send({
          identifier: grantId,
          requestBody: {
            to: [{ email: BOB.user }],
            subject: `Later from the ${kind} grant`,
            body: 'Later',
            sendAt: Math.floor(Date.now() / 1000) + 3600,
          },
        });
        const scheduleId = (later.data as { scheduleId?: string }).scheduleId!;
        expect(scheduleId).toEqual(expect.any(String));
        const scheduled = await nylas.messages.listScheduledMessages({ identifier: grantId });
        // The list's data is an array of schedules, as Nylas answers and its CLI reads (the SDK's type says
        // `{schedules: [...]}`, which its own list call does not check).
        const schedules = scheduled.data as unknown as { scheduleId: string }[];
        expect(schedules.map((item) => item.scheduleId)).toContain(scheduleId);
        const one = await nylas.messages.findScheduledMessage({ identifier: grantId, scheduleId });
        expect(one.data.scheduleId).toBe(scheduleId);
        const stopped = await nylas.messages.stopScheduledMessage({ identifier: grantId, scheduleId });
        expect(stopped.data.message).toEqual(expect.any(String));
      });

      it(`${kind}: threads.list, find, update and destroy; messages.destroy`, async () => {
        const { nylas, grantId } = context();
        const threads = await nylas.threads.list({ identifier: grantId, queryParams: { subject: 'Monday meeting' } });
        expect(threads.data.map((thread) => thread.id)).toContain(inbound.threadId);
        const thread = await nylas.threads.find({ identifier: grantId, threadId: inbound.threadId });
        expect(thread.data.messageIds).toContain(inbound.messageId);
        const updated = await nylas.threads.update({
          identifier: grantId,
          threadId: inbound.threadId,
          requestBody: { starred: false, unread: true },
        });
        expect(updated.data).toMatchObject({ starred: false, unread: true });

        // The sent copy's thread goes to the trash; the inbound message too.
        const sent = await eventually(async () => {
          const listed = await nylas.threads.list({
            identifier: grantId,
            queryParams: { subject: `Sent by the ${kind} grant` },
          });
          return listed.data[0];
        }, WAIT_MS);
        await nylas.threads.destroy({ identifier: grantId, threadId: sent.id });
        const trashed = await nylas.threads.find({ identifier: grantId, threadId: sent.id });
        expect(trashed.data.folders).toContain('trash');
        await nylas.messages.destroy({ identifier: grantId, messageId: inbound.messageId });
        const gone = await nylas.messages.find({ identifier: grantId, messageId: inbound.messageId });
        expect(gone.data.folders).toContain('trash');
      });

      it(`${kind}: drafts.create, list, find, update, send and destroy`, async () => {
        const { nylas, grantId } = context();
        const draft = await nylas.drafts.create({
          identifier: grantId,
          requestBody: { to: [{ email: BOB.user }], subject: `Draft of the ${kind} grant`, body: 'first' },
        });
        const listed = await nylas.drafts.list({ identifier: grantId });
        expect(listed.data.map((item) => item.id)).toContain(draft.data.id);
        const updated = await nylas.drafts.update({
          identifier: grantId,
          draftId: draft.data.id,
          requestBody: { body: 'second', subject: `Draft sent by the ${kind} grant` },
        });
        expect(updated.data.subject).toBe(`Draft sent by the ${kind} grant`);
        const found = await nylas.drafts.find({ identifier: grantId, draftId: updated.data.id });
        expect(found.data.body).toContain('second');
        await nylas.drafts.send({ identifier: grantId, draftId: updated.data.id });
        await arrivesIn(bob, `Draft sent by the ${kind} grant`, WAIT_MS);

        const other = await nylas.drafts.create({
          identifier: grantId,
          requestBody: { to: [{ email: BOB.user }], subject: `Discarded draft of the ${kind} grant`, body: 'no' },
        });
        await nylas.drafts.destroy({ identifier: grantId, draftId: other.data.id });
        const after = await nylas.drafts.list({ identifier: grantId });
        expect(after.data.map((item) => item.id)).not.toContain(other.data.id);
      });

      let workId: string;

      it(`${kind}: calendars.list, find, create, update and destroy, on the account's server`, async () => {
        const { nylas, grantId, email, peer } = context();
        const listed = await eventually(async () => {
          const answer = await nylas.calendars.list({ identifier: grantId });
          return answer.data.some((calendar) => calendar.name === 'Work') ? answer : undefined;
        }, WAIT_MS);
        workId = listed.data.find((calendar) => calendar.name === 'Work')!.id;
        const work = await nylas.calendars.find({ identifier: grantId, calendarId: workId });
        expect(work.data.name).toBe('Work');

        const created = await nylas.calendars.create({
          identifier: grantId,
          requestBody: { name: `Projects of the ${kind} grant`, description: 'made through the API' },
        });
        // Made on the account's server (MKCALENDAR), where the second client sees it.
        const home = `${radicale.url}${encodeURIComponent(email)}/`;
        const collection = `${home}${encodeURIComponent(created.data.id)}/`;
        expect(await peer.list(home)).toContain(collection);
        const updated = await nylas.calendars.update({
          identifier: grantId,
          calendarId: created.data.id,
          requestBody: { name: `Renamed projects of the ${kind} grant` },
        });
        expect(updated.data.name).toBe(`Renamed projects of the ${kind} grant`);
        // The server has the new name (PROPPATCH): the next sync, which takes names from the server, keeps it.
        await service.core.accounts.davSync.run(grantId);
        expect((await nylas.calendars.find({ identifier: grantId, calendarId: created.data.id })).data.name).toBe(
          `Renamed projects of the ${kind} grant`,
        );
        await nylas.calendars.destroy({ identifier: grantId, calendarId: created.data.id });
        const after = await nylas.calendars.list({ identifier: grantId });
        expect(after.data.map((calendar) => calendar.id)).not.toContain(created.data.id);
        expect(await peer.list(home)).not.toContain(collection);
      });

      it(`${kind}: events.create, list, find, update, listImportEvents, sendRsvp and destroy, on the account's server; free/busy and availability`, async () => {
        const { nylas, grantId, email, peer } = context();
        const created = await nylas.events.create({
          identifier: grantId,
          queryParams: { calendarId: workId },
          requestBody: {
            title: `Planning of the ${kind} grant`,
            when: { startTime: at('2026-12-08T09:00:00Z'), endTime: at('2026-12-08T10:00:00Z') },
          },
        });
        // Written to the account's calendar, where the second client sees it.
        const work = `${radicale.url}${encodeURIComponent(email)}/work/`;
        const object = `${work}${encodeURIComponent(created.data.icalUid!)}.ics`;
        expect(await peer.list(work)).toContain(object);
        const listed = await nylas.events.list({
          identifier: grantId,
          queryParams: {
            calendarId: workId,
            start: String(at('2026-12-01T00:00:00Z')),
            end: String(at('2026-12-31T00:00:00Z')),
          },
        });
        expect(listed.data.map((event) => event.title)).toEqual(
          expect.arrayContaining([`Planning of the ${kind} grant`, 'Review with Bob']),
        );
        const found = await nylas.events.find({
          identifier: grantId,
          eventId: created.data.id,
          queryParams: { calendarId: workId },
        });
        expect(found.data.title).toBe(`Planning of the ${kind} grant`);
        const updated = await nylas.events.update({
          identifier: grantId,
          eventId: created.data.id,
          queryParams: { calendarId: workId },
          requestBody: { title: `Moved planning of the ${kind} grant` },
        });
        expect(updated.data.title).toBe(`Moved planning of the ${kind} grant`);
        const imported = await nylas.events.listImportEvents({
          identifier: grantId,
          queryParams: { calendarId: workId, start: at('2026-12-01T00:00:00Z'), end: at('2026-12-31T00:00:00Z') },
        });
        expect(imported.data.length).toBeGreaterThanOrEqual(2);

        const invite = listed.data.find((event) => event.title === 'Review with Bob')!;
        const rsvp = await nylas.events.sendRsvp({
          identifier: grantId,
          eventId: invite.id,
          queryParams: { calendarId: workId },
          requestBody: { status: 'yes' },
        });
        expect(rsvp.sendIcsError).toBeUndefined();

        const busy = await nylas.calendars.getFreeBusy({
          identifier: grantId,
          requestBody: { startTime: at('2026-12-08T00:00:00Z'), endTime: at('2026-12-09T00:00:00Z'), emails: [email] },
        });
        expect(JSON.stringify(busy.data)).toContain(String(at('2026-12-08T09:00:00Z')));
        const availability = await nylas.calendars.getAvailability({
          requestBody: {
            startTime: at('2026-12-08T08:00:00Z'),
            endTime: at('2026-12-08T11:00:00Z'),
            durationMinutes: 60,
            participants: [{ email }],
          },
        });
        const starts = availability.data.timeSlots.map((slot) => slot.startTime);
        expect(starts).not.toContain(at('2026-12-08T09:00:00Z'));
        expect(starts).toContain(at('2026-12-08T10:00:00Z'));

        await nylas.events.destroy({
          identifier: grantId,
          eventId: created.data.id,
          queryParams: { calendarId: workId },
        });
        expect(await peer.list(work)).not.toContain(object);
      });

      it(`${kind}: contacts.create, list, find, update, groups and destroy, on the account's server`, async () => {
        const { nylas, grantId, email, peer } = context();
        const created = await nylas.contacts.create({
          identifier: grantId,
          requestBody: {
            givenName: 'Dora',
            surname: `Audit ${kind}`,
            emails: [{ email: 'dora@example.test', type: 'work' }],
            groups: [{ id: 'Friends', object: 'contact_group' }],
          },
        });
        // Written to the account's address book, where the second client sees it.
        const book = `${radicale.url}${encodeURIComponent(email)}/people/`;
        expect(await peer.list(book)).toContain(`${book}${encodeURIComponent(created.data.id)}.vcf`);
        const listed = await nylas.contacts.list({ identifier: grantId, queryParams: {} });
        expect(listed.data.map((contact) => contact.id)).toContain(created.data.id);
        const updated = await nylas.contacts.update({
          identifier: grantId,
          contactId: created.data.id,
          requestBody: { companyName: 'Example Ltd' },
        });
        expect(updated.data.companyName).toBe('Example Ltd');
        const found = await nylas.contacts.find({ identifier: grantId, contactId: created.data.id, queryParams: {} });
        expect(found.data.surname).toBe(`Audit ${kind}`);
        const groups = await nylas.contacts.groups({ identifier: grantId });
        expect(groups.data.map((group) => group.name)).toContain('Friends');
        await nylas.contacts.destroy({ identifier: grantId, contactId: created.data.id });
        expect(await peer.list(book)).not.toContain(`${book}${encodeURIComponent(created.data.id)}.vcf`);
      });

      it(`${kind}: grants.list, find and update; grants.destroy last`, async () => {
        const { nylas, grantId } = context();
        const listed = await nylas.grants.list();
        expect(listed.data.map((grant) => grant.id)).toContain(grantId);
        const found = await nylas.grants.find({ grantId });
        expect(found.data.grantStatus).toBe('valid');
        const updated = await nylas.grants.update({ grantId, requestBody: { settings: { audited: true } } });
        expect(updated.data.id).toBe(grantId);
        await nylas.grants.destroy({ grantId });
        const after = await nylas.grants.list();
        expect(after.data.map((grant) => grant.id)).not.toContain(grantId);
      });

      it(`${kind}: every in-scope SDK method was called and passed`, () => {
        const { nylas, passed } = context();
        const expected = inScopeMethods(nylas).filter((name) => !(name in notApplicable));
        const missed = expected.filter((name) => !passed.has(name));
        summary.push(
          `  ${kind} grant: ${expected.length - missed.length} of ${expected.length} passed` +
            (missed.length ? `; failed or not reached: ${missed.join(', ')}` : '') +
            Object.entries(notApplicable)
              .map(([name, why]) => `\n    not applicable: ${name} (${why})`)
              .join(''),
        );
        expect(missed).toEqual([]);
      });
    }

    describe('an OAuth grant (Google through oidc-provider; mail over XOAUTH2; CalDAV and CardDAV with the bearer token)', () => {
      const passed = new Set<string>();
      let nylas: Nylas;
      let grantId: string;

      it('connectors.create, find, list, update and destroy; connectors.credentials.create, find, list, update and destroy', async () => {
        nylas = audited(service.nylas, passed);
        const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
        const created = await nylas.connectors.create({
          requestBody: {
            name: 'Google (loopback)',
            provider: 'google',
            settings: {
              clientId: clientId!,
              clientSecret: clientSecret!,
              ...endpoints,
              ...SERVERS,
            },
            scope: [
              'openid',
              'email',
              'offline_access',
              'https://mail.google.com/',
              'https://www.googleapis.com/auth/calendar',
              'https://www.googleapis.com/auth/carddav',
            ],
          },
        });
        expect(created.data.provider).toBe('google');
        // The connector's CalDAV and CardDAV bases: the bearer-checking proxy in front of Radicale.
        const updated = await nylas.connectors.update({
          provider: 'google',
          // A PUT: the settings given replace the old ones (the client secret is kept).
          requestBody: { settings: { ...endpoints, ...SERVERS, caldavUrl: proxy.url, carddavUrl: proxy.url } },
        });
        expect(updated.data.settings).toMatchObject({ caldavUrl: proxy.url, carddavUrl: proxy.url });
        expect((await nylas.connectors.find({ provider: 'google' })).data.provider).toBe('google');
        await nylas.connectors.create({
          requestBody: {
            name: 'Microsoft',
            provider: 'microsoft',
            settings: { clientId: 'ms-app', clientSecret: 'ms-secret' },
          },
        });
        expect((await nylas.connectors.list({})).data.map((item) => item.provider)).toEqual(['google', 'microsoft']);

        const credential = await nylas.connectors.credentials.create({
          provider: 'microsoft',
          requestBody: {
            name: 'Admin consent',
            credentialType: CredentialType.ADMINCONSENT,
            credentialData: { clientId: 'ms-app', clientSecret: 'ms-secret' },
          },
        });
        const credentialId = credential.data.id;
        expect(
          (await nylas.connectors.credentials.find({ provider: 'microsoft', credentialsId: credentialId })).data.name,
        ).toBe('Admin consent');
        expect((await nylas.connectors.credentials.list({ provider: 'microsoft' })).data).toHaveLength(1);
        const renamed = await nylas.connectors.credentials.update({
          provider: 'microsoft',
          credentialsId: credentialId,
          requestBody: { name: 'Tenant consent' },
        });
        expect(renamed.data.name).toBe('Tenant consent');
        await nylas.connectors.credentials.destroy({ provider: 'microsoft', credentialsId: credentialId });
        expect((await nylas.connectors.credentials.list({ provider: 'microsoft' })).data).toHaveLength(0);
        await nylas.connectors.destroy({ provider: 'microsoft' });
        expect((await nylas.connectors.list({})).data.map((item) => item.provider)).toEqual(['google']);
      });

      it('auth: detectProvider, urlForOAuth2PKCE and the hosted sign-in, exchangeCodeForToken, refreshAccessToken, accessTokenInfo, idTokenInfo, revoke, urlForAdminConsent, urlForOAuth2, customAuthentication', async () => {
        expect((await nylas.auth.detectProvider({ email: 'someone@gmail.com' })).data.provider).toBe('google');
        const { url, secret } = nylas.auth.urlForOAuth2PKCE({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          provider: 'google',
          accessType: 'offline',
          state: 'audit-state',
        });
        const walk = await walkSignIn(url, { login: ALICE.user, stopAt: APP_REDIRECT });
        expect(walk.final.searchParams.get('state')).toBe('audit-state');
        const exchanged = await nylas.auth.exchangeCodeForToken({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          code: walk.final.searchParams.get('code')!,
          codeVerifier: secret,
        });
        expect(exchanged).toMatchObject({ provider: 'google', email: ALICE.user });
        grantId = exchanged.grantId;
        const refreshed = await nylas.auth.refreshAccessToken({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          refreshToken: exchanged.refreshToken!,
        });
        expect(refreshed.grantId).toBe(grantId);
        expect((await nylas.auth.accessTokenInfo(refreshed.accessToken)).data.sub).toBe(ALICE.user);
        expect((await nylas.auth.idTokenInfo(exchanged.idToken!)).data.sub).toBe(ALICE.user);
        expect(await nylas.auth.revoke(refreshed.accessToken)).toBe(true);

        const consent = await fetch(
          nylas.auth.urlForAdminConsent({ clientId: applicationId, redirectUri: APP_REDIRECT, credentialId: 'none' }),
          { redirect: 'manual' },
        );
        expect(consent.status).toBeLessThan(500);
        const plain = await fetch(
          nylas.auth.urlForOAuth2({ clientId: applicationId, redirectUri: APP_REDIRECT, provider: 'google' }),
          { redirect: 'manual' },
        );
        expect(new URL(plain.headers.get('location')!).origin).toBe(oidc.issuer);

        // Connecting again with a refresh token the application got itself (bring your own token) re-authenticates it
        // (with the calendar and contacts scopes, so it keeps its DAV servers: see the last test of this grant).
        const providerToken = await refreshTokenFor(
          oidc,
          `${service.url}/v3/connect/callback`,
          ALICE.user,
          'openid email offline_access https://mail.google.com/ https://www.googleapis.com/auth/calendar https://www.googleapis.com/auth/carddav',
        );
        const again = await nylas.auth.customAuthentication({
          requestBody: { provider: 'google', settings: { refresh_token: providerToken } },
        });
        expect(again.data.id).toBe(grantId);
      });

      it("the grant's calendars and contacts are on the CalDAV and CardDAV servers of the connector, reached with its bearer token; an expired token is refreshed", async () => {
        const account = await service.core.deps.db.orm.query.davAccounts.findFirst({
          where: (table, { eq }) => eq(table.grantId, grantId),
        });
        expect(account).toMatchObject({
          caldavUrl: proxy.url,
          caldavHome: `${proxy.url}${encodeURIComponent(ALICE.user)}/`,
          carddavUrl: proxy.url,
          caldavUsername: null,
          caldavPasswordSealed: null,
        });
        await service.core.accounts.davSync.run(grantId);
        const tokens = service.core.accounts.grantTokens;
        const before = (await tokens.accessToken(grantId)).accessToken;
        expect(proxy.accepted).toContain(before);
        // The provider stops honouring the token (as at its expiry): the server answers 401, the token is refreshed,
        // and the request goes again with the new one.
        await oidc.expireAccessToken(before);
        const refusedBefore = proxy.refused;
        await service.core.accounts.davSync.run(grantId);
        const after = (await tokens.accessToken(grantId)).accessToken;
        expect(after).not.toBe(before);
        expect(proxy.refused).toBeGreaterThan(refusedBefore);
        expect(proxy.accepted.at(-1)).toBe(after);
        expect((await nylas.grants.find({ grantId })).data.grantStatus).toBe('valid');
      });

      grantAudit('OAuth', {}, () => ({
        nylas,
        grantId,
        email: ALICE.user,
        peer: davPeer(radicale, ALICE.user, ALICE.password),
        passed,
      }));

      it('signed in again with the mail scope alone, the grant drops its calendar and contact servers: its calendar calls answer the 400 of an account without CalDAV', async () => {
        // (The audit destroyed the grant last: a first sign-in with every scope makes it again, with its DAV servers.)
        const signIn = async (scope: string[]) => {
          const { url, secret } = nylas.auth.urlForOAuth2PKCE({
            clientId: applicationId,
            redirectUri: APP_REDIRECT,
            provider: 'google',
            accessType: 'offline',
            scope,
          });
          const walk = await walkSignIn(url, { login: ALICE.user, stopAt: APP_REDIRECT });
          const code = walk.final.searchParams.get('code');
          expect(code, walk.final.href).toBeTruthy();
          return nylas.auth.exchangeCodeForToken({
            clientId: applicationId,
            redirectUri: APP_REDIRECT,
            code: code!,
            codeVerifier: secret,
          });
        };
        const davAccount = (id: string) =>
          service.core.deps.db.orm.query.davAccounts.findFirst({ where: (table, { eq }) => eq(table.grantId, id) });
        const mail = ['openid', 'email', 'offline_access', 'https://mail.google.com/'];
        const first = await signIn([
          ...mail,
          'https://www.googleapis.com/auth/calendar',
          'https://www.googleapis.com/auth/carddav',
        ]);
        expect(await davAccount(first.grantId)).toMatchObject({ caldavUrl: proxy.url, carddavUrl: proxy.url });

        const again = await signIn(mail);
        expect(again.grantId).toBe(first.grantId);
        expect(again.scope).not.toContain('auth/calendar');
        expect(await davAccount(first.grantId)).toBeUndefined();
        const refused = await fetch(`${service.url}/v3/grants/${first.grantId}/calendars`, {
          headers: { authorization: `Bearer ${service.apiKey}` },
        });
        const body = await refused.text();
        expect(refused.status, body).toBe(400);
        expect(body).toContain('has no calendar server');
        // Its mail is untouched.
        expect((await nylas.grants.find({ grantId: first.grantId })).data.grantStatus).toBe('valid');
      });
    });

    describe('a CalDAV grant (an IMAP account with CalDAV and CardDAV on Radicale)', () => {
      const passed = new Set<string>();
      let nylas: Nylas;
      let grantId: string;
      const davSettings = () =>
        imapConnectSettings(
          { user: CAROL.user, password: CAROL.password, imapPort: IMAP_PORT, smtpPort: SMTP_PORT },
          { caldav_url: radicale.url, carddav_url: radicale.url },
        );

      it('auth: urlForOAuth2 to the hosted IMAP form, exchangeCodeForToken, refreshAccessToken, accessTokenInfo, revoke; customAuthentication connects it again', async () => {
        nylas = audited(service.nylas, passed);
        expect((await nylas.auth.detectProvider({ email: CAROL.user, allProviderTypes: true })).data.detected).toBe(
          false,
        );
        const { url, secret } = nylas.auth.urlForOAuth2PKCE({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          provider: 'imap',
          accessType: 'offline',
          state: 'dav-state',
        });
        const plain = await fetch(
          nylas.auth.urlForOAuth2({ clientId: applicationId, redirectUri: APP_REDIRECT, provider: 'imap' }),
        );
        expect(await plain.text()).toMatch(/<form method="post" action="\/v3\/connect\/imap">/);
        const page = await fetch(url);
        const html = await page.text();
        const hidden = (name: string) =>
          new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1]?.replace(/&amp;/g, '&');
        const cookie = page.headers
          .getSetCookie()
          .find((line) => line.startsWith('agentpost_oauth='))!
          .split(';')[0]!;
        const posted = await fetch(`${service.url}/v3/connect/imap`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams({
            flow: hidden('flow')!,
            csrf_token: hidden('csrf_token')!,
            preset: 'other',
            email: CAROL.user,
            password: CAROL.password,
            imap_host: '127.0.0.1',
            imap_port: String(IMAP_PORT),
            smtp_host: '127.0.0.1',
            smtp_port: String(SMTP_PORT),
            caldav_url: radicale.url,
            carddav_url: radicale.url,
            action: 'connect',
          }).toString(),
        });
        expect(posted.status).toBe(302);
        const landed = new URL(posted.headers.get('location')!);
        expect(landed.searchParams.get('state')).toBe('dav-state');
        const exchanged = await nylas.auth.exchangeCodeForToken({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          code: landed.searchParams.get('code')!,
          codeVerifier: secret,
        });
        expect(exchanged).toMatchObject({ provider: 'imap', email: CAROL.user });
        grantId = exchanged.grantId;
        const refreshed = await nylas.auth.refreshAccessToken({
          clientId: applicationId,
          redirectUri: APP_REDIRECT,
          refreshToken: exchanged.refreshToken!,
        });
        expect((await nylas.auth.accessTokenInfo(refreshed.accessToken)).data).toMatchObject({
          sub: grantId,
          email: CAROL.user,
        });
        expect(await nylas.auth.revoke(refreshed.accessToken)).toBe(true);

        const again = await nylas.auth.customAuthentication({
          requestBody: { provider: 'imap', settings: davSettings() },
        });
        expect(again.data.id).toBe(grantId);
      });

      grantAudit('CalDAV', CALDAV_NOT_APPLICABLE, () => ({
        nylas,
        grantId,
        email: CAROL.user,
        peer: davPeer(radicale, CAROL.user, CAROL.password),
        passed,
      }));
    });
  },
);
