/**
 * The `agent` block of an operation: what it says about itself to the MCP and AI SDK faces. A block with a key it
 * does not know fails when the operation is defined; the faces take what they do per tool from the block.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, operations, type AnyOperation } from '../../src/index.js';
import { agentTools } from '../../tools/registry.js';

const base = {
  name: 'test_operation',
  title: 'Test',
  description: 'A test operation.',
  input: z.object({ grant_id: z.string() }),
  output: z.object({ id: z.string() }),
  hints: { readOnly: true },
  tool: true,
  run: async () => ({ id: 'x' }),
};

describe('the agent block', () => {
  it('is accepted with the keys it knows', () => {
    expect(() =>
      defineOperation({
        ...base,
        agent: { sends: 'message', body: 'message', headline: (result) => `Did ${String(result.id)}` },
      }),
    ).not.toThrow();
    expect(() => defineOperation({ ...base, agent: {} })).not.toThrow();
  });

  it('fails at load with a key it does not know, naming the operation and the key', () => {
    // @ts-expect-error: the type refuses it too; the check holds for blocks built at run time.
    expect(() => defineOperation({ ...base, agent: { sendsMail: true } })).toThrow(
      /Operation test_operation: .*unknown key "sendsMail"/,
    );
    const block = { compact: 'messages', renders: ['body'] } as never;
    expect(() => defineOperation({ ...base, agent: block })).toThrow(/unknown key "renders"/);
  });

  it('fails at load with a value of the wrong kind', () => {
    expect(() => defineOperation({ ...base, agent: { compact: 'events' } as never })).toThrow(
      /Operation test_operation: .*agent\.compact/,
    );
    expect(() => defineOperation({ ...base, agent: { headline: 'Created' } as never })).toThrow(
      /agent\.headline: expected a function/,
    );
    expect(() => defineOperation({ ...base, agent: 'sends' as never })).toThrow(/Operation test_operation/);
  });

  it('is what the faces read: approval, include_html and compact output schemas follow it', () => {
    const gated = agentTools({ requireApproval: true });
    const byBlock = (test: (operation: AnyOperation) => boolean) =>
      operations
        .filter((operation) => operation.tool && test(operation))
        .map((operation) => operation.name)
        .sort();
    expect(
      gated
        .filter((tool) => tool.approval)
        .map((tool) => tool.operation.name)
        .sort(),
    ).toEqual(byBlock((operation) => operation.agent?.sends !== undefined));
    expect(byBlock((operation) => operation.agent?.sends !== undefined)).toEqual(['send_draft', 'send_message']);
    expect(
      gated
        .filter((tool) => 'include_html' in tool.inputSchema.shape)
        .map((tool) => tool.operation.name)
        .sort(),
    ).toEqual(['get_draft', 'get_message', 'get_thread']);
    const compacted = gated.filter((tool) => tool.operation.agent?.compact !== undefined);
    expect(compacted.map((tool) => tool.operation.name).sort()).toEqual([
      'list_drafts',
      'list_messages',
      'list_threads',
    ]);
    for (const tool of compacted) {
      const items = (tool.outputSchema.shape as { data: z.ZodArray<z.ZodObject> }).data.element.shape;
      // A compact item has no body; a full message or thread schema does (a message's `body`, a thread's `message_ids`).
      expect(!('body' in items) && !('message_ids' in items), tool.operation.name).toBe(true);
    }
  });
});

describe('agent.omit and write headlines', () => {
  it('leaves omitted fields out of the tool, refusing a required or unknown one at load', () => {
    const input = z.object({ grant_id: z.string(), note: z.string().optional().describe('A note') });
    const operation = defineOperation({ ...base, input, agent: { omit: ['note'] } });
    expect(operation.agent?.omit).toEqual(['note']);
    expect(() => defineOperation({ ...base, input, agent: { omit: ['grant_id'] } })).toThrow(
      /agent\.omit names grant_id, which is not an optional input field/,
    );
    expect(() => defineOperation({ ...base, input, agent: { omit: ['nothing'] } })).toThrow(
      /agent\.omit names nothing/,
    );
    for (const tool of agentTools()) {
      for (const field of tool.operation.agent?.omit ?? []) expect(tool.inputSchema.shape).not.toHaveProperty(field);
    }
    const send = agentTools().find((tool) => tool.operation.name === 'send_message')!;
    expect(send.inputSchema.shape).not.toHaveProperty('custom_headers');
    expect(send.operation.input.shape).toHaveProperty('custom_headers');
  });

  it('gives every write tool a first line naming what it did (a send line or a headline)', () => {
    const silent = agentTools()
      .filter((tool) => !tool.operation.hints.readOnly)
      .filter((tool) => tool.operation.agent?.sends === undefined && tool.operation.agent?.headline === undefined)
      .map((tool) => tool.operation.name);
    expect(silent).toEqual([]);
  });
});
