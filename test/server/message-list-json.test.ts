/**
 * Message lists answered from kept wire JSON (src/messages/message-json-cache.ts): the bytes are those of the list
 * built from objects (what `c.json` of `list` wrote before), on every page, with filters, attachments and a sent
 * message's delivery_status; and a message changed in any way (flags, folders, metadata, trash, deletion, a write
 * by another connection) is never served as it was, even with the clock standing still (updated_at unchanged).
 */
import Sqlite from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/index.js';
import { fixedClock } from '../helpers/clock.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'listjson.agentpost.localhost';
const MAILBOX = `box@${DOMAIN}`;

function plain(index: number): string {
  return `From: "Ann ${index}" <ann@example.com>\r\nTo: ${MAILBOX}\r\nCc: cy@example.com\r\nSubject: note ${index} é ✓\r\nMessage-ID: <note-${index}@example.com>\r\nDate: Mon, 02 Mar 2026 10:0${index}:00 +0000\r\n\r\nBody ${index} with "quotes", \\ and \u2028 and <b>tags</b>\r\n`;
}

const WITH_ATTACHMENT = [
  `From: bob@example.com`,
  `To: ${MAILBOX}`,
  'Subject: with a file',
  'Message-ID: <file@example.com>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b"',
  '',
  '--b',
  'Content-Type: text/plain',
  '',
  'See the file.',
  '--b',
  'Content-Type: text/csv; name="data.csv"',
  'Content-Disposition: attachment; filename="data.csv"',
  '',
  'a,b',
  '--b--',
  '',
].join('\r\n');

describe('message lists from kept JSON', () => {
  const clock = fixedClock('2026-03-02T12:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let grant: string;
  let principal: Principal;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      deps: { clock },
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
    });
    grant = await createMailbox(service, MAILBOX);
    principal = await service.core.accounts.applications.authenticateApiKey(service.apiKey);
    for (let index = 0; index < 5; index++) {
      await service.core.mail.inbound.deliverInbound({
        rawMime: Buffer.from(plain(index)),
        envelope: { mailFrom: 'ann@example.com', rcptTo: [MAILBOX] },
      });
    }
    await service.core.mail.inbound.deliverInbound({
      rawMime: Buffer.from(WITH_ATTACHMENT),
      envelope: { mailFrom: 'bob@example.com', rcptTo: [MAILBOX] },
    });
    const sent = await service.nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'dee@example.com' }], subject: 'sent one', body: 'Hello Dee' },
    });
    // Delivered to the sink: the sent copy's delivery_status changes after it was first listed.
    await eventually(async () => {
      const [message] = (await service.core.mail.messages.list(principal, { grant_id: grant, in: ['sent'] })).data;
      return message?.id === sent.data.id && message.delivery_status?.[0]?.status === 'delivered' ? true : undefined;
    }, 10_000);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  /** The list over HTTP as text, and as `c.json` of `list` writes it for the same request id. */
  async function both(
    query: string,
  ): Promise<{ text: string; expected: string; body: { data: { id: string }[]; next_cursor?: string } }> {
    const response = await fetch(`${service.url}/v3/grants/${grant}/messages?${query}`, {
      headers: { authorization: `Bearer ${service.apiKey}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const text = await response.text();
    const requestId = response.headers.get('x-request-id')!;
    const input = Object.fromEntries(new URLSearchParams(query));
    const parsed = {
      grant_id: grant,
      ...input,
      ...(input.limit ? { limit: Number(input.limit) } : {}),
      ...(input.unread ? { unread: input.unread === 'true' } : {}),
      ...(input.in ? { in: [input.in] } : {}),
    };
    const expected = JSON.stringify({
      request_id: requestId,
      ...(await service.core.mail.messages.list(principal, parsed)),
    });
    return { text, expected, body: JSON.parse(text) };
  }

  it('answers the same bytes as the list built from objects, cold and kept, on every page and with filters', async () => {
    for (const round of [1, 2]) {
      let token: string | undefined;
      const seen: string[] = [];
      do {
        const { text, expected, body } = await both(`limit=3${token ? `&page_token=${token}` : ''}`);
        expect(text, `round ${round}`).toBe(expected);
        seen.push(...body.data.map((message) => message.id));
        token = body.next_cursor;
      } while (token);
      expect(new Set(seen).size).toBe(7);
      for (const query of ['limit=50', 'unread=true', 'in=sent', 'in=inbox&limit=2']) {
        const { text, expected } = await both(query);
        expect(text, query).toBe(expected);
      }
    }
    const { body } = await both('limit=50');
    const all = body.data as unknown as {
      subject: string;
      attachments: unknown[];
      delivery_status?: { status: string }[];
    }[];
    expect(all.find((message) => message.subject === 'with a file')!.attachments).toHaveLength(1);
    expect(all.find((message) => message.subject === 'sent one')!.delivery_status![0]!.status).toBe('delivered');
  });

  it('never serves a changed message as it was, though the clock stands still', async () => {
    type Wire = {
      id: string;
      subject: string;
      unread: boolean;
      starred: boolean;
      folders: string[];
      metadata: Record<string, unknown>;
    };
    const list = async () => {
      const { text, expected, body } = await both('limit=50');
      expect(text).toBe(expected);
      return body.data as unknown as Wire[];
    };
    const target = (await list()).find((message) => message.subject.startsWith('note 2'))!;
    const current = async () => (await list()).find((message) => message.id === target.id);
    const update = async (requestBody: Record<string, unknown>) => {
      await service.nylas.messages.update({ identifier: grant, messageId: target.id, requestBody });
    };
    await update({ unread: false });
    expect((await current())!.unread).toBe(false);
    await update({ unread: true });
    expect((await current())!.unread).toBe(true);
    await update({ starred: true });
    expect((await current())!.starred).toBe(true);
    await update({ metadata: { key1: 'first' } });
    expect((await current())!.metadata).toEqual({ key1: 'first' });
    await update({ metadata: { key1: 'second' } });
    expect((await current())!.metadata).toEqual({ key1: 'second' });
    await update({ folders: ['archive'] });
    expect((await current())!.folders).toEqual(['archive']);

    // Written by another connection (as another process would): seen at once.
    const other = new Sqlite(service.config.databaseUrl.replace(/^file:/, ''));
    try {
      other.prepare('UPDATE messages SET subject = ? WHERE id = ?').run(['changed elsewhere', target.id]);
      expect((await current())!.subject).toBe('changed elsewhere');
      const withFile = (await list()).find((message) => message.subject === 'with a file')!;
      other.prepare('DELETE FROM attachments WHERE message_id = ?').run([withFile.id]);
      expect((await list()).find((message) => message.id === withFile.id)).toMatchObject({ attachments: [] });
    } finally {
      other.close();
    }

    await service.nylas.messages.destroy({ identifier: grant, messageId: target.id });
    expect((await current())!.folders).toEqual(['trash']);
    await service.nylas.messages.destroy({ identifier: grant, messageId: target.id });
    expect(await current()).toBeUndefined();
  });

  it('checks the grant in the same read: a grant of another application and an unknown one are 404, an empty mailbox an empty page', async () => {
    const list = (id: string, key = service.apiKey) =>
      fetch(`${service.url}/v3/grants/${encodeURIComponent(id)}/messages?limit=5`, {
        headers: { authorization: `Bearer ${key}` },
      });
    const other = await service.core.accounts.applications.createApplication({ name: 'Other lists', plan: 'trial' });
    // The other application's key on our grant (which has messages), and our key on an id that does not exist.
    for (const response of [await list(grant, other.apiKey), await list('01kjq6nosuchgrant0000000000')]) {
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
    }
    const empty = await createMailbox(service, `empty@${DOMAIN}`);
    const response = await list(empty);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toEqual([]);
    // Named by address, the same page as by id.
    const byAddress = await list(MAILBOX);
    expect(((await byAddress.json()) as { data: { id: string }[] }).data.map((message) => message.id)).toEqual(
      ((await (await list(grant)).json()) as { data: { id: string }[] }).data.map((message) => message.id),
    );
  });
});
