/**
 * MCP resource subscriptions (issue 40, item 2) with the MCP client SDK: over Streamable HTTP against our HTTP server
 * (its session's GET stream carries the notifications) and over stdio (`agentpost mcp`, remote against the service
 * and embedded on its database), mail delivered through our SMTP listener sends `notifications/resources/updated`
 * for the subscribed mailbox and thread; a thread not subscribed, an unsubscribed mailbox and another grant's
 * resource get none; a key scoped to one grant cannot subscribe to another; the mailbox resource reads as a summary;
 * closing a session ends its feeds.
 *
 * Negative checks need no wait: one grant's notifications come from one feed in commit order, so once the
 * notification of a later message arrives, any the earlier message caused has arrived before it.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer, type EventFeed, type FeedEvent } from '../../tools/mcp.js';
import { mailboxUri, threadUri } from '../../tools/resources.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const root = join(import.meta.dirname, '..', '..');
const DOMAIN = 'subs.agentpost.localhost';
const ALICE = `alice@${DOMAIN}`;
const BOB = `bob@${DOMAIN}`;

type Json = Record<string, any>;

/** A client that records the URIs of the update notifications it receives, in order. */
function recordingClient(name: string): { client: Client; updated: string[] } {
  const client = new Client({ name, version: '1.0.0' });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
  });
  return { client, updated };
}

describe('MCP resource subscriptions', () => {
  let service: TestService;
  let alice: string;
  let bob: string;
  let sent = 0;

  /** Delivers a message over SMTP (to `to`, optionally in reply to `inReplyTo`); returns its Message-ID. */
  async function deliver(to: string, subject: string, inReplyTo?: string): Promise<string> {
    const messageId = `<m${++sent}.${Date.now()}@sender.example>`;
    const raw = [
      'From: Sender <sender@sender.example>',
      `To: ${to}`,
      `Subject: ${subject}`,
      `Message-ID: ${messageId}`,
      ...(inReplyTo ? [`In-Reply-To: ${inReplyTo}`, `References: ${inReplyTo}`] : []),
      'Date: Sun, 29 Nov 2026 22:00:00 +0000',
      '',
      `Body of ${subject}.`,
      '',
    ].join('\r\n');
    const reply = await sendRaw(service.smtpPort, 'sender@sender.example', [to], raw);
    expect(reply.code).toBe(250);
    return messageId;
  }

  /** The thread of the grant's message with this subject. */
  async function threadOf(grantId: string, subject: string): Promise<string> {
    return eventually(async () => {
      const listed = await request(
        service.url,
        'GET',
        `/v3/grants/${grantId}/threads?subject=${encodeURIComponent(subject)}`,
        {
          key: service.apiKey,
        },
      );
      return (listed.body as Json).data?.[0]?.id as string | undefined;
    });
  }

  /** Waits until `updated` holds `uri` `times` times; returns the list as it was then. */
  async function waitFor(updated: string[], uri: string, times = 1): Promise<string[]> {
    await eventually(async () => (updated.filter((one) => one === uri).length >= times ? true : undefined), 15_000);
    return [...updated];
  }

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    alice = await createMailbox(service, ALICE);
    bob = await createMailbox(service, BOB);
  });

  afterAll(async () => {
    await service?.close();
  });

  it('over Streamable HTTP: the mailbox and the subscribed thread are told of new mail, nothing else is', async () => {
    const firstOfAlice = await deliver(ALICE, 'Alice plan');
    const firstOfBob = await deliver(BOB, 'Bob plan');
    const aliceThread = await threadOf(alice, 'Alice plan');
    const bobThread = await threadOf(bob, 'Bob plan');

    const { client, updated } = recordingClient('subscriber');
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
    });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
        'agentpost://grants/{grant_id}/mailbox',
      );
      // The mailbox resource: folders with counts and the newest threads.
      const read = await client.readResource({ uri: mailboxUri(alice) });
      const summary = JSON.parse((read.contents[0] as { text: string }).text) as Json;
      expect(summary.grant_id).toBe(alice);
      expect(summary.folders.find((folder: Json) => folder.id === 'inbox')).toMatchObject({
        total_count: 1,
        unread_count: 1,
      });
      expect(summary.newest_threads.data[0].id).toBe(aliceThread);

      // In this order: one grant's notifications for one message are sent thread first, then mailbox.
      const aliceThreadUri = threadUri(alice, aliceThread);
      const bobThreadUri = threadUri(bob, bobThread);
      for (const uri of [aliceThreadUri, mailboxUri(alice), bobThreadUri, mailboxUri(bob)])
        await client.subscribeResource({ uri });

      // A new thread in Alice's mailbox: the mailbox, not her subscribed thread; then a reply in that thread.
      await deliver(ALICE, 'Unrelated');
      await deliver(ALICE, 'Re: Alice plan', firstOfAlice);
      let seen = await waitFor(updated, aliceThreadUri);
      expect(seen.slice(0, 2)).toEqual([mailboxUri(alice), aliceThreadUri]);

      // Alice's two messages came first on Bob's feed too: before the reply in Bob's thread, nothing of Bob's.
      await deliver(BOB, 'Re: Bob plan', firstOfBob);
      seen = await waitFor(updated, bobThreadUri);
      const bobs = seen.filter((uri) => uri === bobThreadUri || uri === mailboxUri(bob));
      expect(bobs[0]).toBe(bobThreadUri);
      await waitFor(updated, mailboxUri(bob));

      // Unsubscribed from Alice's mailbox: a new message there tells it nothing (her thread still hears its reply).
      await client.unsubscribeResource({ uri: mailboxUri(alice) });
      const before = updated.filter((uri) => uri === mailboxUri(alice)).length;
      await deliver(ALICE, 'Another unrelated');
      await deliver(ALICE, 'Re: Re: Alice plan', firstOfAlice);
      seen = await waitFor(updated, aliceThreadUri, 2);
      expect(seen.filter((uri) => uri === mailboxUri(alice)).length).toBe(before);

      // A message resource is not subscribable; nor is a thread of a grant that does not exist.
      await expect(client.subscribeResource({ uri: `agentpost://grants/${alice}/messages/x` })).rejects.toThrow(
        /Only mailbox and thread resources/,
      );
      await expect(client.subscribeResource({ uri: mailboxUri('no-such-grant') })).rejects.toThrow(/not_found/);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  }, 60_000);

  it('refuses a key scoped to one grant a subscription to another', async () => {
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'alice only', scope: { grant_ids: [alice] }, permissions: ['mail.read'] },
    });
    expect(made.status).toBe(201);
    const key = (made.body as Json).data.key as string;
    const { client, updated } = recordingClient('scoped');
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    try {
      await expect(client.subscribeResource({ uri: mailboxUri(bob) })).rejects.toThrow(/not_found/);
      await expect(client.subscribeResource({ uri: mailboxUri(BOB) })).rejects.toThrow(/not_found/);
      await client.subscribeResource({ uri: mailboxUri(alice) });
      await deliver(ALICE, 'For the scoped key');
      expect(await waitFor(updated, mailboxUri(alice))).toEqual([mailboxUri(alice)]);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  }, 60_000);

  it('over stdio (remote against the service, and embedded on its database): the host is told of new mail', async () => {
    for (const env of [
      { AGENTPOST_URL: service.url, AGENTPOST_API_KEY: service.apiKey },
      { AGENTPOST_DATABASE_URL: service.config.databaseUrl, AGENTPOST_API_KEY: service.apiKey },
    ]) {
      const { client, updated } = recordingClient('stdio-subscriber');
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(root, 'bin', 'agentpost.js'), 'mcp'],
        env: { PATH: process.env.PATH ?? '', AGENTPOST_LOG_LEVEL: 'warn', ...env },
        stderr: 'pipe',
      });
      await client.connect(transport);
      try {
        const mode = env.AGENTPOST_URL ? 'remote' : 'embedded';
        expect(client.getServerCapabilities()?.resources?.subscribe, mode).toBe(true);
        await client.subscribeResource({ uri: mailboxUri(bob) });
        await deliver(BOB, `Over stdio ${mode}`);
        expect(await waitFor(updated, mailboxUri(bob)), mode).toEqual([mailboxUri(bob)]);
      } finally {
        await client.close();
      }
    }
  }, 90_000);

  it('ends the feeds of a session when it closes (in memory, with a feed that records)', async () => {
    const opened: { grantId: string; signal: AbortSignal }[] = [];
    const events: EventFeed = (grantId, _types, signal) => {
      opened.push({ grantId, signal });
      // A feed that stays silent until it is closed.
      const silent: AsyncIterable<FeedEvent> = {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            new Promise<IteratorResult<FeedEvent>>((resolve) =>
              signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true }),
            ),
        }),
      };
      return Promise.resolve(silent);
    };
    const server = createMcpServer({
      executor: (operation) => Promise.resolve(operation.name === 'list_threads' ? { data: [] } : {}),
      events,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const { client } = recordingClient('in-memory');
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    await client.subscribeResource({ uri: mailboxUri('g1') });
    await client.subscribeResource({ uri: threadUri('g1', 't1') });
    await client.subscribeResource({ uri: mailboxUri('g2') });
    expect(opened.map((one) => one.grantId)).toEqual(['g1', 'g2']);
    // The last subscription of a grant ends its feed; the others stay until the session closes.
    await client.unsubscribeResource({ uri: mailboxUri('g2') });
    expect(opened.map((one) => one.signal.aborted)).toEqual([false, true]);
    await client.close();
    await eventually(async () => (opened.every((one) => one.signal.aborted) ? true : undefined));
  });
});
