/**
 * Small endpoints of the nylas SDK that `/:id` routes used to swallow ("Event "import" was not found"): clean
 * messages, import events, contact groups, each through the SDK; unknown routes answer a plain "No route" 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const MAILBOX = 'small@smallcheck.agentpost.localhost';
const utc = (iso: string) => Date.parse(iso) / 1000;

const REPLY_HTML = [
  '<html><head><style>p { color: red }</style></head><body>',
  '<p>Sounds good, see the <a href="https://example.com/plan">plan</a>.</p>',
  '<p><img src="https://example.com/chart.png" alt="chart"></p>',
  '<table><tr><td>Mon</td><td>10:00</td></tr><tr><td>Tue</td><td>11:00</td></tr></table>',
  '<p>Best,</p><p>Alice<br>Alice Corp</p>',
  '<div class="gmail_quote">On Mon, Bob wrote:<blockquote>Shall we meet?</blockquote></div>',
  '</body></html>',
].join('\n');

describe('small endpoints through the nylas SDK', () => {
  let service: TestService;
  let grant: string;

  beforeAll(async () => {
    service = await startTestService();
    grant = await createMailbox(service, MAILBOX);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('cleans messages: PUT /messages/clean answers each message with its conversation', async () => {
    const mime = `Subject: Re: Meeting\r\nFrom: alice@example.com\r\nTo: ${MAILBOX}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${REPLY_HTML.replace(/\n/g, '\r\n')}\r\n`;
    expect((await sendRaw(service.smtpPort, 'alice@example.com', [MAILBOX], mime)).code).toBe(250);
    const message = await eventually(async () => (await service.nylas.messages.list({ identifier: grant })).data[0]);
    const cleaned = await service.nylas.messages.cleanMessages({
      identifier: grant,
      requestBody: { messageId: [message.id] },
    });
    expect(cleaned.data).toHaveLength(1);
    expect(cleaned.data[0]!.id).toBe(message.id);
    expect(cleaned.data[0]!.subject).toBe('Re: Meeting');
    // Plain text by default (issue 35): links, tables' markup, the closing phrase and the quoted history gone.
    const text = cleaned.data[0]!.conversation;
    expect(text).toContain('Sounds good, see the plan.');
    expect(text).toContain('chart');
    expect(text).toMatch(/Mon\s+10:00/);
    for (const gone of ['Shall we meet', 'wrote:', 'color: red', '<a ', '<p>', '<table', '|', 'Best,', 'Alice Corp'])
      expect(text).not.toContain(gone);
    const markdown = await service.nylas.messages.cleanMessages({
      identifier: grant,
      requestBody: {
        messageId: [message.id],
        htmlAsMarkdown: true,
        removeConclusionPhrases: false,
        ignoreLinks: false,
        ignoreTables: false,
      },
    });
    const read = markdown.data[0]!.conversation;
    expect(read).toContain('Sounds good, see the [plan](https://example.com/plan).');
    expect(read).toContain('| Mon | 10:00 |');
    expect(read).toContain('Best,');
    expect(read).not.toContain('<p>');
    expect(read).not.toContain('Shall we meet');
    const dropped = await service.nylas.messages.cleanMessages({
      identifier: grant,
      requestBody: { messageId: [message.id], imagesAsMarkdown: false },
    });
    expect(dropped.data[0]!.conversation).not.toContain('chart');
    const missing = await sdkError(
      service.nylas.messages.cleanMessages({ identifier: grant, requestBody: { messageId: ['no-such-message'] } }),
    );
    expect(missing.statusCode).toBe(404);
    expect(missing.message).toContain('no-such-message');
  });

  it('lists events to import: the window, series once, never expanded', async () => {
    const inside = await service.nylas.events.create({
      identifier: grant,
      queryParams: { calendarId: 'primary' },
      requestBody: {
        title: 'Inside',
        when: { startTime: utc('2026-05-04T10:00:00Z'), endTime: utc('2026-05-04T11:00:00Z') },
      },
    });
    const series = await service.nylas.events.create({
      identifier: grant,
      queryParams: { calendarId: 'primary' },
      requestBody: {
        title: 'Weekly',
        when: { startTime: utc('2026-05-05T09:00:00Z'), endTime: utc('2026-05-05T09:30:00Z') },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      },
    });
    await service.nylas.events.create({
      identifier: grant,
      queryParams: { calendarId: 'primary' },
      requestBody: {
        title: 'Outside',
        when: { startTime: utc('2026-08-01T10:00:00Z'), endTime: utc('2026-08-01T11:00:00Z') },
      },
    });
    const listed = await service.nylas.events.listImportEvents({
      identifier: grant,
      queryParams: { calendarId: 'primary', start: utc('2026-05-01T00:00:00Z'), end: utc('2026-06-01T00:00:00Z') },
    });
    expect(listed.data.map((event) => event.id)).toEqual([inside.data.id, series.data.id]);
    expect(listed.data[1]!.recurrence).toEqual(['RRULE:FREQ=WEEKLY;COUNT=4']);
    const unknown = await sdkError(
      service.nylas.events.listImportEvents({ identifier: grant, queryParams: { calendarId: 'no-such-calendar' } }),
    );
    expect(unknown.statusCode).toBe(404);
  });

  it('lists contact groups: none while no contact names a group', async () => {
    const groups = await service.nylas.contacts.groups({ identifier: grant });
    expect(groups.data).toEqual([]);
    expect((await sdkError(service.nylas.contacts.groups({ identifier: 'no-such-grant' }))).statusCode).toBe(404);
  });

  it('answers an unknown route with a plain "No route" 404, not a missing object', async () => {
    const response = await request(service.url, 'POST', `/v3/grants/${grant}/messages/no-such-route`, {
      key: service.apiKey,
      body: { prompt: 'x' },
    });
    expect(response.status).toBe(404);
    expect(response.body.error.message).toMatch(/^No route POST/);
    // A sibling route's word in the place of an id is a missing route for that method, not a missing object.
    const cases: [string, string][] = [
      ['GET', `/v3/grants/${grant}/messages/send`],
      ['GET', `/v3/grants/${grant}/messages/smart-compose`],
      ['DELETE', `/v3/grants/${grant}/events/import`],
      ['PUT', `/v3/grants/${grant}/contacts/groups`],
      ['DELETE', `/v3/webhooks/ip-addresses`],
    ];
    for (const [method, path] of cases) {
      const answer = await request(service.url, method, path, {
        key: service.apiKey,
        ...(method === 'PUT' ? { body: {} } : {}),
      });
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.message, path).toBe(`No route ${method} ${path}.`);
    }
    // Ids that happen to be words stay ids: the drafts folder is found.
    expect((await service.nylas.folders.find({ identifier: grant, folderId: 'drafts' })).data.name).toBe('drafts');
  });
});
