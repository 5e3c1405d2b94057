/**
 * Invitations over the real mail paths, through the nylas SDK: Agent Account A invites B (and a person on
 * another mail system); B's primary calendar gets the event from the iMIP message delivered to B's inbox; B's
 * RSVP (an iMIP REPLY mailed back) updates A's event; A's cancellation (an iMIP CANCEL) cancels B's copy. The
 * external invitation is caught by a relay on loopback and checked as Google and Outlook send them: a
 * `text/calendar; method=REQUEST` alternative and an `invite.ics` attachment.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'meet.agentpost.localhost';
const A = `organizer@${DOMAIN}`;
const B = `guest@${DOMAIN}`;
const EXTERNAL = 'person@example.com';

describe('calendar invitations between two Agent Accounts and a person elsewhere', () => {
  let service: TestService;
  let sink: SmtpSink;
  let a: string;
  let b: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({ env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` } });
    a = await createMailbox(service, A);
    b = await createMailbox(service, B);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  it("A invites B: B sees it, B accepts, A sees the answer, A cancels, B's copy is cancelled", async () => {
    const { nylas } = service;
    const start = Math.floor(Date.now() / 1000 / 3600) * 3600 + 2 * 86_400;
    const window = { calendarId: 'primary', start: String(start - 86_400), end: String(start + 86_400) };
    const created = await nylas.events.create({
      identifier: a,
      queryParams: { calendarId: 'primary', notifyParticipants: true },
      requestBody: {
        title: 'Project kickoff',
        description: 'Agenda: scope, dates',
        location: 'Room 4',
        when: { startTime: start, endTime: start + 3600, startTimezone: 'Europe/Berlin', endTimezone: 'Europe/Berlin' },
        participants: [
          { email: B, name: 'Guest Agent', status: 'noreply' },
          { email: EXTERNAL, name: 'A Person', status: 'noreply' },
        ],
      },
    });
    const uid = created.data.icalUid!;

    // B: the invitation is in the inbox and the event on the primary calendar, organized by A.
    const invitation = await nylas.messages.list({ identifier: b, queryParams: { in: ['inbox'] } });
    expect(invitation.data.map((message) => message.subject)).toEqual([
      expect.stringContaining('Invitation: Project kickoff'),
    ]);
    // Applied by a job after the message was stored: it shows up shortly after the send answered.
    const copy = await eventually(async () =>
      (await nylas.events.list({ identifier: b, queryParams: window })).data.find((event) => event.icalUid === uid),
    );
    expect(copy).toBeDefined();
    expect(copy.title).toBe('Project kickoff');
    expect(copy.organizer?.email).toBe(A);
    expect(copy.when).toMatchObject({ startTime: start, endTime: start + 3600 });
    expect(copy.participants.find((participant) => participant.email === B)?.status).toBe('noreply');

    // The person elsewhere got it through the relay, as calendar clients expect it.
    const [external] = await sink.waitFor(1);
    expect(external!.rcptTo).toEqual([EXTERNAL]);
    const raw = external!.raw.toString('utf8');
    expect(raw).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/i);
    expect(raw).toMatch(/Content-Type: application\/ics; name=invite\.ics/i);
    const parsed = await simpleParser(external!.raw);
    expect(parsed.subject).toContain('Invitation: Project kickoff');
    expect(parsed.from?.value[0]?.address).toBe(A);
    expect(parsed.messageId).toMatch(new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    const ics = parsed.attachments.find((part) => part.filename === 'invite.ics')!;
    const text = ics.content.toString('utf8');
    expect(text).toContain('METHOD:REQUEST');
    expect(text).toContain(`UID:${uid}`);
    expect(text).toMatch(/ATTENDEE[^:]*:mailto:person@example\.com/i);
    expect(parsed.text).toContain('Project kickoff');

    // B accepts: A's event shows B as yes.
    const rsvp = await nylas.events.sendRsvp({
      identifier: b,
      eventId: copy.id,
      queryParams: { calendarId: 'primary' },
      requestBody: { status: 'yes' },
    });
    expect((rsvp as unknown as { data?: { sendIcsError?: unknown } }).data?.sendIcsError).toBeUndefined();
    const organizerView = await eventually(async () => {
      const found = await nylas.events.find({
        identifier: a,
        eventId: created.data.id,
        queryParams: { calendarId: 'primary' },
      });
      return found.data.participants.find((participant) => participant.email === B)?.status === 'yes'
        ? found
        : undefined;
    });
    expect(organizerView.data.participants.find((participant) => participant.email === EXTERNAL)?.status).toBe(
      'noreply',
    );
    const replyMail = await nylas.messages.list({ identifier: a, queryParams: { in: ['inbox'] } });
    expect(replyMail.data.map((message) => message.subject)).toEqual([
      expect.stringContaining('Accepted: Project kickoff'),
    ]);

    // A cancels: B's copy is cancelled, and the person elsewhere is told too.
    await nylas.events.destroy({
      identifier: a,
      eventId: created.data.id,
      queryParams: { calendarId: 'primary', notifyParticipants: true },
    });
    const cancelled = await eventually(async () => {
      const found = await nylas.events.find({
        identifier: b,
        eventId: copy.id,
        queryParams: { calendarId: 'primary' },
      });
      return found.data.status === 'cancelled' ? found : undefined;
    });
    expect(cancelled.data.status).toBe('cancelled');
    const visible = await nylas.events.list({ identifier: b, queryParams: window });
    expect(visible.data.find((event) => event.icalUid === uid)).toBeUndefined();
    const [, cancelMail] = await sink.waitFor(2);
    expect(cancelMail!.raw.toString('utf8')).toMatch(/method=CANCEL/i);

    // The contacts of both sides include each other (sent and received mail).
    const contacts = await eventually(async () => {
      const list = await nylas.contacts.list({ identifier: b, queryParams: {} });
      return list.data.some((contact) => contact.emails?.some((entry) => entry.email === A)) ? list : undefined;
    });
    expect(contacts.data.length).toBeGreaterThan(0);
  });
});
