/**
 * The invitation that took the service down (issue 14): a VTIMEZONE with a sub-daily RRULE from 1601 and absurd
 * offsets, followed by a CANCEL for an unknown event. Over the real SMTP listener and the nylas SDK: each is answered
 * 250 within a second, the hostile one is stored and its invitation recorded `unreadable`, the cancellation is
 * recorded and ignored, and `/healthz` answers within 100 ms all along.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { imipMessage } from '../helpers/mime.js';
import { startTestService, type TestService } from '../helpers/service.js';

const AGENT = 'agent@hostile.agentpost.localhost';
const ATTACKER = 'mallory@example.com';
const WARM_UP = 'warm-up@hostile.agentpost.localhost';

function invitation(method: string, uid: string, timezone: string[]): string {
  const ics = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Attacker//EN',
    `METHOD:${method}`,
    ...timezone,
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20261101T000000Z',
    `DTSTART${timezone.length > 0 ? ';TZID=Custom/Slow' : ''}:20261201T100000${timezone.length > 0 ? '' : 'Z'}`,
    `DTEND${timezone.length > 0 ? ';TZID=Custom/Slow' : ''}:20261201T110000${timezone.length > 0 ? '' : 'Z'}`,
    'SUMMARY:Board meeting',
    `ORGANIZER:mailto:${ATTACKER}`,
    `ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:${AGENT}`,
    'END:VEVENT',
    'END:VCALENDAR',
  ].join('\r\n');
  return imipMessage({ from: `<${ATTACKER}>`, to: AGENT, subject: `${method} ${uid}`, ics, method });
}

const HOSTILE_TIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Custom/Slow',
  'BEGIN:STANDARD',
  'DTSTART:16010101T000000',
  'RRULE:FREQ=MINUTELY;INTERVAL=1',
  'TZOFFSETFROM:+9959',
  'TZOFFSETTO:-9959',
  'END:STANDARD',
  'BEGIN:DAYLIGHT',
  'DTSTART:16010101T000030',
  'RRULE:FREQ=SECONDLY;INTERVAL=7',
  'TZOFFSETFROM:-9959',
  'TZOFFSETTO:+9959',
  'END:DAYLIGHT',
  'END:VTIMEZONE',
];

describe('the hostile VTIMEZONE invitation', () => {
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, AGENT);
    // Threads start on first use. Run from the TypeScript sources, each one registers tsx first (about a quarter of a
    // second, which the build does not pay): an ordinary multipart message to another mailbox starts the MIME parser
    // and the mail writer, so the timings below are those of the hostile invitation itself.
    await createMailbox(service, WARM_UP);
    expect(
      (
        await sendRaw(
          service.smtpPort,
          ATTACKER,
          [WARM_UP],
          invitation('PUBLISH', 'warm-up@example.com', []).replace(
            'Content-Type: text/calendar',
            'Content-Type: text/x-not-calendar',
          ),
        )
      ).code,
    ).toBe(250);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('is answered 250 within a second, stored and recorded unreadable; a CANCEL for an unknown event too; /healthz answers throughout', async () => {
    let worstHealthMs = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        const response = await fetch(`${service.url}/healthz`);
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        worstHealthMs = Math.max(worstHealthMs, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    try {
      const outcomeOf = async (reply: { text: string }) => {
        const messageId = /stored as (\S+)/.exec(reply.text)![1]!;
        return eventually(
          async () =>
            (
              await service.core.deps.db.orm
                .select()
                .from(tables.invitationOutcomes)
                .where(eq(tables.invitationOutcomes.messageId, messageId))
            )[0],
          30_000,
        );
      };

      const started = performance.now();
      const hostile = await sendRaw(
        service.smtpPort,
        ATTACKER,
        [AGENT],
        invitation('REQUEST', 'hostile@example.com', HOSTILE_TIMEZONE),
      );
      expect(hostile.code).toBe(250);
      expect(performance.now() - started).toBeLessThan(1_000);

      const cancelStarted = performance.now();
      const cancel = await sendRaw(
        service.smtpPort,
        ATTACKER,
        [AGENT],
        invitation('CANCEL', 'never-seen@example.com', []),
      );
      expect(cancel.code).toBe(250);
      expect(performance.now() - cancelStarted).toBeLessThan(1_000);

      const hostileOutcome = await outcomeOf(hostile);
      expect(hostileOutcome).toMatchObject({ grantId, status: 'unreadable' });
      expect(hostileOutcome.detail[0]?.reason).toBeTruthy();
      const cancelOutcome = await outcomeOf(cancel);
      expect(cancelOutcome).toMatchObject({
        status: 'ignored',
        detail: [{ action: 'ignored', reason: expect.stringContaining('unknown event') }],
      });

      // The message itself is in the inbox, and the calendar has nothing from it.
      const inbox = await service.nylas.messages.list({ identifier: grantId, queryParams: { in: ['inbox'] } });
      expect(inbox.data.map((message) => message.subject).sort()).toEqual([
        'CANCEL never-seen@example.com',
        'REQUEST hostile@example.com',
      ]);
      const events = await service.nylas.events.list({
        identifier: grantId,
        queryParams: { calendarId: 'primary', start: '1764000000', end: '1767000000' },
      });
      expect(events.data).toEqual([]);
    } finally {
      probing = false;
      await probe;
    }
    expect(worstHealthMs).toBeLessThan(100);
  });
});
