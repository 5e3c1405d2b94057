import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor } from '../../tools/executor.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { Principal } from '../../src/index.js';

describe('requireApproval: a person approves every send', () => {
  let service: TestService;
  let principal: Principal;
  const sender = 'approver@approval.agentpost.localhost';
  const recipient = 'reader@approval.agentpost.localhost';

  beforeAll(async () => {
    service = await startTestService();
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    await service.core.accounts.domains.create(principal, {
      name: 'Approval',
      domain_address: 'approval.agentpost.localhost',
    });
    for (const email of [sender, recipient])
      await service.core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
  });
  afterAll(async () => {
    await service.close();
  });

  async function connect(answer: 'approve' | 'decline' | 'no-elicitation') {
    const server = createMcpServer({
      executor: localExecutor(service.core, principal),
      grantId: sender,
      requireApproval: true,
    });
    const client = new Client(
      { name: 'approval-test', version: '1.0.0' },
      answer === 'no-elicitation' ? {} : { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    if (answer !== 'no-elicitation') {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return answer === 'approve' ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
      });
    }
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
    return { client, asked };
  }

  async function inboxSubjects(): Promise<string[]> {
    const page = await service.core.mail.messages.list(principal, { grant_id: recipient, in: ['inbox'] });
    return (page.data as { subject?: string }[]).map((message) => message.subject ?? '');
  }

  it('sends after the person approves through elicitation', async () => {
    const { client, asked } = await connect('approve');
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: recipient }], subject: 'Approved note', body: 'Hello' },
    });
    expect(result.isError).toBeFalsy();
    expect(asked[0]).toContain('Approved note');
    expect(asked[0]).toContain(recipient);
    await eventually(async () => ((await inboxSubjects()).includes('Approved note') ? true : undefined));
  });

  it('sends nothing when the person declines', async () => {
    const { client } = await connect('decline');
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: recipient }], subject: 'Declined note', body: 'Hello' },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('not_sent');
    expect(await inboxSubjects()).not.toContain('Declined note');
  });

  it('saves a draft instead of sending when the client cannot ask a person', async () => {
    const { client } = await connect('no-elicitation');
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: recipient }], subject: 'Needs review', body: 'Hello' },
    });
    expect(result.isError).toBeFalsy();
    const content = result.structuredContent as { approval_required: boolean; draft: { id: string; subject: string } };
    expect(content.approval_required).toBe(true);
    expect(content.draft.subject).toBe('Needs review');
    const drafts = await client.callTool({ name: 'list_drafts', arguments: {} });
    expect(JSON.stringify(drafts.structuredContent)).toContain(content.draft.id);
    expect(await inboxSubjects()).not.toContain('Needs review');
    const sendDraft = await client.callTool({ name: 'send_draft', arguments: { draft_id: content.draft.id } });
    expect(sendDraft.isError).toBe(true);
  });

  it('marks the AI SDK sending tools as needing approval, and only those', () => {
    const tools = createAgentpostTools({ core: service.core, principal, grantId: sender, requireApproval: true });
    // send_message asks for every real send (a dry run sends nothing, see send-dry-run.test.ts).
    expect(
      (tools.send_message?.needsApproval as (input: unknown, options: unknown) => boolean)(
        { to: [{ email: 'a@b.example' }] },
        {},
      ),
    ).toBe(true);
    expect(tools.send_draft?.needsApproval).toBe(true);
    expect(tools.list_messages?.needsApproval).toBe(false);
    expect(createAgentpostTools({ core: service.core, principal }).send_message?.needsApproval).toBe(false);
  });

  // Over Streamable HTTP the session keeps the client's capabilities, so the person is asked as over stdio.
  async function overHttp(answer: 'approve' | 'decline') {
    const client = new Client(
      { name: 'approval-http', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return answer === 'approve' ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
    });
    const transport = new StreamableHTTPClientTransport(
      new URL(`${service.url}/mcp?grant_id=${sender}&require_approval=true`),
      { requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } } },
    );
    await client.connect(transport);
    return { client, asked, transport };
  }

  it('asks over HTTP and sends only after acceptance', async () => {
    const { client, asked, transport } = await overHttp('approve');
    expect(transport.sessionId).toBeTruthy();
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: recipient }], subject: 'Approved over HTTP', body: 'Hello' },
    });
    expect(result.isError).toBeFalsy();
    expect(asked[0]).toContain('Approved over HTTP');
    await eventually(async () => ((await inboxSubjects()).includes('Approved over HTTP') ? true : undefined));
    await transport.terminateSession();
    await client.close();
  });

  it('sends nothing and saves no draft over HTTP when the person declines', async () => {
    const { client, asked, transport } = await overHttp('decline');
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: recipient }], subject: 'Declined over HTTP', body: 'Hello' },
    });
    expect(result.isError).toBe(true);
    expect(asked).toHaveLength(1);
    const drafts = await client.callTool({ name: 'list_drafts', arguments: {} });
    expect(JSON.stringify(drafts.structuredContent)).not.toContain('Declined over HTTP');
    expect(await inboxSubjects()).not.toContain('Declined over HTTP');
    await transport.terminateSession();
    // The ended session is gone: its id is not accepted again.
    const stale = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${service.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': String(transport.sessionId ?? 'ended'),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    await client.close();
  });
});
