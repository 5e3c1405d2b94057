/**
 * Initial sync of a connected account's CalDAV calendar (issue 38 item 5): events per second of our initial sync of a
 * Radicale calendar of BENCH_CALDAV_EVENTS (default 1,000) events, beside a bare tsdav fetch of the same calendar
 * (discovery, the calendar list, one calendar-query REPORT with the data: what any client must do to read it all), in
 * the same run, in alternating rounds, with medians.
 *
 * Ours is the real service from the build (`dist/`, as `npm start` runs it) on a temporary `file:` database: the grant
 * is made with `POST /v3/connect/custom` (IMAP on a private Dovecot, SMTP on a sink, CalDAV on Radicale) and timed from
 * that request until its first calendar sync pass has stored every event (`core.accounts.davSync.run` resolves after
 * the pass the connection started), then deleted, so the next round connects anew. The events are one-hour events,
 * one in ten a weekly series, written once as Radicale's storage files (before any timing; Radicale indexes them on
 * the first read, which an untimed bare fetch does).
 *
 * Needs root and Debian's `dovecot-imapd` and `radicale`; says so and gives no figure otherwise. Settings: BENCH_ROUNDS
 * (default 3), BENCH_CALDAV_EVENTS (default 1000). Ports 36820-36821 (Dovecot and Radicale cannot pick one).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, fetchCalendarObjects, fetchCalendars } from 'tsdav';
import { dovecotMissing, startDovecot } from '../test/helpers/dovecot.js';
import { davPeer, radicaleMissing, startRadicale } from '../test/helpers/radicale.js';
import { startSmtpSink } from '../test/helpers/smtp-sink.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EVENTS = Number(process.env.BENCH_CALDAV_EVENTS ?? 1000);
const IMAP_PORT = 36820;
const RADICALE_PORT = 36821;
const USER = 'bench@example.test';
const PASSWORD = 'bench-password';
const API_KEY = 'agp_bench_caldav_key';

const { requireEveryRole, startService } = (await import(
  new URL('../dist/server/main.js', import.meta.url).href
)) as typeof import('../server/main.js');
const { loadConfig } = (await import(
  new URL('../dist/src/index.js', import.meta.url).href
)) as typeof import('../src/index.js');

const { tables } = (await import(
  new URL('../dist/storage/index.js', import.meta.url).href
)) as typeof import('../storage/index.js');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The text of event `index`: an hour on a weekday of 2026, one in ten weekly for ten weeks. */
function eventText(index: number): string {
  const day = new Date(Date.UTC(2026, 0, 5) + Math.floor(index / 8) * 86_400_000);
  const hour = 8 + (index % 8);
  const stamp = (date: Date, hours: number) =>
    `${date.toISOString().slice(0, 10).replace(/-/g, '')}T${String(hours).padStart(2, '0')}0000Z`;
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//bench//EN',
    'BEGIN:VEVENT',
    `UID:bench-${index}@example.test`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${stamp(day, hour)}`,
    `DTEND:${stamp(day, hour + 1)}`,
    `SUMMARY:Meeting ${index} about the quarterly plan`,
    `DESCRIPTION:Agenda item ${index}: review the numbers and decide the next steps.`,
    'LOCATION:Room 4',
    ...(index % 10 === 0 ? ['RRULE:FREQ=WEEKLY;COUNT=10'] : []),
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

export async function run(): Promise<Record<string, number | string>> {
  const missing = dovecotMissing() ?? radicaleMissing();
  if (missing) return { skipped: missing };
  const dovecot = await startDovecot({ imapPort: IMAP_PORT, users: [{ user: USER, password: PASSWORD }] });
  const radicale = await startRadicale({ port: RADICALE_PORT, users: [{ user: USER, password: PASSWORD }] });
  const smtp = await startSmtpSink({ auth: { user: USER, pass: PASSWORD } });
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-bench-caldav-'));
  try {
    const calendarUrl = await davPeer(radicale, USER, PASSWORD).makeCalendar('bench', 'Bench');
    // Written as Radicale's own storage files (one .ics per event in the collection's folder): PUTting them one by one
    // takes Radicale longer than the sync.
    const folder = join(radicale.storage, 'collection-root', USER, 'bench');
    for (let index = 0; index < EVENTS; index++) writeFileSync(join(folder, `bench-${index}.ics`), eventText(index));

    const headers = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };
    async function bare(): Promise<number> {
      const started = performance.now();
      const account = await createAccount({ account: { accountType: 'caldav', serverUrl: radicale.url }, headers });
      const calendars = await fetchCalendars({ account, headers });
      const calendar = calendars.find((each) => each.url === calendarUrl);
      if (!calendar) throw new Error('bare: the calendar was not found');
      const objects = await fetchCalendarObjects({ calendar, headers });
      const elapsed = performance.now() - started;
      if (objects.length !== EVENTS) throw new Error(`bare: ${objects.length} objects, expected ${EVENTS}`);
      return EVENTS / (elapsed / 1000);
    }

    const service = requireEveryRole(
      await startService(
        loadConfig({
          AGENTPOST_DATABASE_URL: `file:${join(dir, 'bench.db')}`,
          AGENTPOST_HTTP_PORT: '0',
          AGENTPOST_SMTP_PORT: '0',
          AGENTPOST_API_KEY: API_KEY,
          AGENTPOST_LOG_LEVEL: 'silent',
          AGENTPOST_SECRET_KEY: 'bench-secret-key-of-at-least-32-characters',
          AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
          AGENTPOST_RATE_LIMIT_APPLICATION: '0',
        }),
        {},
      ),
    );
    const api = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const connectMs: number[] = [];
    async function ours(): Promise<number> {
      const started = performance.now();
      const created = await fetch(`${service.url}/v3/connect/custom`, {
        method: 'POST',
        headers: api,
        body: JSON.stringify({
          provider: 'imap',
          settings: {
            imap_username: USER,
            imap_password: PASSWORD,
            imap_host: '127.0.0.1',
            imap_port: IMAP_PORT,
            smtp_host: '127.0.0.1',
            smtp_port: smtp.port,
            caldav_url: radicale.url,
          },
        }),
      });
      if (!created.ok) throw new Error(`connecting failed: ${created.status} ${await created.text()}`);
      const grantId = ((await created.json()) as { data: { id: string } }).data.id;
      const connected = performance.now();
      await service.core.accounts.davSync.run(grantId);
      const elapsed = performance.now() - started;
      connectMs.push(connected - started);
      const stored = await service.core.deps.db.orm.$count(tables.events);
      if (stored !== EVENTS) throw new Error(`ours: ${stored} events stored, expected ${EVENTS}`);
      const deleted = await fetch(`${service.url}/v3/grants/${grantId}`, { method: 'DELETE', headers: api });
      if (!deleted.ok) throw new Error(`deleting the grant failed: ${deleted.status}`);
      return EVENTS / (elapsed / 1000);
    }

    try {
      // Untimed: Radicale indexes the files, and our service's threads (the iCalendar parser) start.
      await bare();
      await ours();
      const bareRates: number[] = [];
      const ourRates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        bareRates.push(await bare());
        ourRates.push(await ours());
      }
      const bareRate = median(bareRates);
      const ourRate = median(ourRates);
      return {
        events: EVENTS,
        rounds: ROUNDS,
        'bare tsdav fetch, events/s (median)': Math.round(bareRate),
        'Agentpost initial sync, events/s (median)': Math.round(ourRate),
        'Agentpost / bare fetch': `${((ourRate / bareRate) * 100).toFixed(0)}%`,
        'of which connect/custom (checks of IMAP, SMTP, CalDAV), ms (median)': Math.round(median(connectMs.slice(1))),
      };
    } finally {
      await service.close();
    }
  } finally {
    await smtp.close();
    await radicale.stop();
    await dovecot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
