/**
 * `send_message` with `dry_run` through the MCP client SDK and the AI SDK tool: the verdict comes back as
 * structured content (an object), the same over both faces and over HTTP, and nothing is stored, queued or sent.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor, remoteExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { operations, type Principal } from '../../src/index.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'dryrun.agentpost.localhost';

describe('send_message dry_run on the agent faces', () => {
  let service: TestService;
  let principal: Principal;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    await service.core.accounts.domains.create(principal, { name: 'Dry run', domain_address: DOMAIN });
    const { grant } = await service.core.accounts.grants.create(principal, {
      provider: 'nylas',
      settings: { email: `agent@${DOMAIN}` },
    });
    grantId = grant.id;
    await service.core.deps.db.write(async (tx) => {
      await tx.insert(tables.rules).values({
        id: 'rule_competitors',
        applicationId: principal.applicationId,
        name: 'Never mail competitors',
        trigger: 'outbound',
        conditions: [{ field: 'recipient.domain', operator: 'is', value: 'competitor.example' }],
        actions: [{ type: 'block' }],
        createdAt: 1,
        updatedAt: 1,
      });
      await tx
        .update(tables.workspaces)
        .set({ ruleIds: ['rule_competitors'] })
        .where(
          and(eq(tables.workspaces.applicationId, principal.applicationId), eq(tables.workspaces.isDefault, true)),
        );
    });
    service.core.admin.enforcement.invalidate();
  });
  afterAll(async () => {
    await service?.close();
  });

  const stored = async () =>
    Number(
      (
        await service.core.deps.db.client.execute(
          'select (select count(*) from messages) + (select count(*) from outbound_messages) as n',
        )
      ).rows[0]!.n,
    );

  it('answers the verdict as structured content over MCP, the AI SDK and HTTP alike, and sends nothing', async () => {
    const before = await stored();
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'dry-run', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal), grantId }).connect(serverTransport),
      client.connect(clientTransport),
    ]);
    const { tools } = await client.listTools();
    const sendTool = tools.find((tool) => tool.name === 'send_message')!;
    expect(Object.keys(sendTool.inputSchema.properties ?? {})).toContain('dry_run');

    const input = {
      to: [{ email: 'ceo@competitor.example' }, { email: 'friend@partner.example' }],
      subject: 'Pricing',
      body: 'Our prices',
      dry_run: true,
    };
    const result = await client.callTool({ name: 'send_message', arguments: input });
    expect(result.isError).toBeFalsy();
    const verdict = result.structuredContent as { data: Record<string, unknown> };
    expect(verdict.data).toMatchObject({
      dry_run: true,
      blocked: true,
      matched_rule_ids: ['rule_competitors'],
      refused_recipients: [{ email: 'ceo@competitor.example', rule_id: 'rule_competitors' }],
      verdicts: {
        size: { ok: true, limit: null },
        quota: { limit: null, left_today: null, ok: true },
        attachments: { count: 0 },
      },
    });
    expect(verdict.data.reason).toContain('Never mail competitors');

    const aiTools = createAgentpostTools({ core: service.core, principal, grantId });
    const overAi = await aiTools.send_message!.execute!(input, { toolCallId: 'call-1', messages: [] });
    expect(overAi).toEqual(verdict);

    const overHttp = await remoteExecutor({ url: service.url, apiKey: service.apiKey })(
      operations.find((operation) => operation.name === 'send_message')!,
      { ...input, grant_id: grantId },
    );
    expect(overHttp).toEqual(verdict);

    expect(await stored()).toBe(before);
  });

  it('needs no approval: with requireApproval a dry run answers at once and saves no draft', async () => {
    const before = await stored();
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'dry-run-approval', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal), grantId, requireApproval: true }).connect(
        serverTransport,
      ),
      client.connect(clientTransport),
    ]);
    const result = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: 'friend@partner.example' }], subject: 'Hi', body: 'x', dry_run: true },
    });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { data: { blocked: boolean } }).data.blocked).toBe(false);
    expect(await stored()).toBe(before);

    const aiTools = createAgentpostTools({ core: service.core, principal, grantId, requireApproval: true });
    const needsApproval = aiTools.send_message!.needsApproval as (input: unknown, options: unknown) => boolean;
    expect(needsApproval({ to: [{ email: 'a@b.example' }], dry_run: true }, {})).toBe(false);
    expect(needsApproval({ to: [{ email: 'a@b.example' }] }, {})).toBe(true);
  });
});
