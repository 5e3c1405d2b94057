/**
 * The whole service inside your own process, as a self-checking script: `createAgentpost` on a temporary database,
 * the HTTP API through its `fetch` handler (no port needed), then `start()` for real SMTP in, an AI SDK tool that
 * reads what arrived, an MCP client on an in-memory transport, and `/metrics`. In an installed package the import is
 * `import { createAgentpost } from 'agentpost'`.
 *
 *   npx tsx examples/embedded.ts
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createTransport } from 'nodemailer';
import { createAgentpost } from '../server/embed.js';

const dir = mkdtempSync(join(tmpdir(), 'agentpost-embedded-'));
const agentpost = await createAgentpost({
  AGENTPOST_DATABASE_URL: `file:${join(dir, 'agentpost.db')}`,
  AGENTPOST_HTTP_PORT: 0, // 0: any free port
  AGENTPOST_SMTP_PORT: 0,
  AGENTPOST_METRICS_TOKEN: 'example-metrics-token',
  AGENTPOST_LOG_LEVEL: 'warn',
});
try {
  // 1. The HTTP API without listening: requests go straight to the fetch handler.
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await agentpost.fetch(
      new Request(`http://agentpost.local${path}`, {
        method,
        headers: { authorization: `Bearer ${agentpost.apiKey}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
    return (await response.json()) as { data: Record<string, unknown> };
  };
  await call('POST', '/v3/admin/domains', { name: 'Embedded', domain_address: 'embedded.agentpost.localhost' });
  const { data: grant } = await call('POST', '/v3/connect/custom', {
    provider: 'nylas',
    settings: { email: 'assistant@embedded.agentpost.localhost' },
  });

  // 2. Listen: real SMTP in, on a free port.
  const { url, smtpPort } = await agentpost.start();
  const mailer = createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
  await mailer.sendMail({
    from: 'customer@example.com',
    to: 'assistant@embedded.agentpost.localhost',
    subject: 'Hello from outside',
    text: 'Is this thing on?',
  });
  mailer.close();

  // 3. AI SDK tools bound to the mailbox read it (250 means it is stored: no waiting).
  const tools = agentpost.tools({ grantId: String(grant.email) });
  const inbox = (await tools.list_messages!.execute!({ in: ['inbox'] }, { toolCallId: 'inbox', messages: [] })) as {
    data: { subject: string }[];
  };
  // Text from outside comes fenced as data, between markers random per result: ‹x›Hello from outside‹/x›.
  assert.equal(inbox.data.length, 1);
  assert.match(inbox.data[0]!.subject, /^‹([0-9]{20})›Hello from outside‹\/\1›$/);

  // 4. The same tools over MCP.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = agentpost.createMcpServer({ grantId: String(grant.email) });
  await server.connect(serverSide);
  const client = new Client({ name: 'example', version: '1.0.0' });
  await client.connect(clientSide);
  const listed = (await client.callTool({ name: 'list_messages', arguments: { in: ['inbox'] } })) as {
    structuredContent?: { data: { subject: string }[] };
  };
  assert.match(listed.structuredContent?.data[0]?.subject ?? '', /^‹([0-9]{20})›Hello from outside‹\/\1›$/);
  await client.close();

  // 5. Operations: ready, and the message counted.
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const metrics = await (
    await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer example-metrics-token' } })
  ).text();
  assert.match(metrics, /^agentpost_smtp_replies_total\{stage="data",code="250"\} 1$/m);
  console.log(
    `ok: embedded Agentpost at ${url} (SMTP ${smtpPort}) received "${inbox.data[0]!.subject}", read by an AI SDK tool and over MCP`,
  );
} finally {
  await agentpost.close();
  rmSync(dir, { recursive: true, force: true });
}
