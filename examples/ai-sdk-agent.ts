/**
 * An AI SDK agent that triages its inbox and answers what needs an answer, with Agentpost's tools.
 * Without an LLM key it runs a scripted mock model (so this example checks itself anywhere); with
 * OPENAI_API_KEY set and `@ai-sdk/openai` installed it asks a real model.
 *
 *   npx tsx examples/ai-sdk-agent.ts
 */
import assert from 'node:assert/strict';
import { generateText, stepCountIs, type LanguageModel } from 'ai';
import { createAgentpostTools } from '../tools/ai-sdk.js';
import { scriptedModel } from './support/scripted-model.js';
import { createMailboxes, exampleService, waitFor } from './support/service.js';

const service = await exampleService();
try {
  const [agent, customer] = await createMailboxes(service, ['agent', 'customer']);
  const customerTools = createAgentpostTools({ url: service.apiUri, apiKey: service.apiKey, grantId: customer! });
  const agentTools = createAgentpostTools({ url: service.apiUri, apiKey: service.apiKey, grantId: agent! });

  // A customer (a person, not an agent: over /v3) writes in.
  const written = await fetch(`${service.apiUri}/v3/grants/${customer}/messages/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to: [{ email: agent }], subject: 'Order 1042 is late', body: 'Where is my order 1042?' }),
  });
  assert.equal(written.status, 200, await written.text());
  await waitFor(async () => {
    const page = (await agentTools.list_messages!.execute!(
      { in: ['inbox'], unread: true },
      { toolCallId: 'poll', messages: [] },
    )) as { data: unknown[] };
    return page.data.length > 0 ? true : undefined;
  });

  // The agent triages: list unread mail, read it, reply in the thread, mark it read.
  let model: LanguageModel;
  if (process.env.OPENAI_API_KEY) {
    const provider = (await import('@ai-sdk/openai').catch(() => {
      throw new Error('OPENAI_API_KEY is set: install @ai-sdk/openai to use a real model');
    })) as { openai: (id: string) => LanguageModel };
    model = provider.openai(process.env.OPENAI_MODEL ?? 'gpt-4o-mini');
  } else {
    model = scriptedModel([
      () => ({ tool: 'list_messages', input: { in: ['inbox'], unread: true, limit: 10 } }),
      (seen) => {
        const message = seen.last<{ data: { id: string }[] }>('list_messages').data[0]!;
        return {
          tool: 'send_message',
          input: {
            reply_to_message_id: message.id,
            to: [{ email: customer }],
            body: 'Sorry for the wait: order 1042 ships tomorrow.',
          },
        };
      },
      (seen) => ({
        tool: 'update_message',
        input: { message_id: seen.last<{ data: { id: string }[] }>('list_messages').data[0]!.id, unread: false },
      }),
      () => ({ text: 'Answered 1 message about order 1042.' }),
    ]);
  }
  const result = await generateText({
    model,
    tools: agentTools,
    stopWhen: stepCountIs(8),
    system:
      'You are a support agent. Reply to unread customer mail in its thread (reply_to_message_id), then mark it read.',
    prompt: 'Triage the inbox.',
  });
  const calls = result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolName));
  assert.ok(calls.includes('send_message'), `the agent should reply; it called ${calls.join(', ')}`);

  // The customer sees the answer in the same conversation.
  const answer = await waitFor(async () => {
    const page = (await customerTools.list_messages!.execute!(
      { in: ['inbox'], subject: 'Re: Order 1042 is late' },
      { toolCallId: 'check', messages: [] },
    )) as { data: { thread_id: string }[] };
    return page.data[0];
  });
  const thread = (await customerTools.get_thread!.execute!(
    { thread_id: answer.thread_id },
    { toolCallId: 'thread', messages: [] },
  )) as { message_ids: string[] };
  assert.equal(thread.message_ids.length, 2);
  console.log(`ok: the agent answered in one thread (${calls.join(' → ')}): ${result.text}`);
} finally {
  await service.close();
}
