/**
 * Scripted-agent scenarios: agents driven by the AI SDK's mock language model call the real tools against a
 * real running service, with the tool set in-process and remote (over /v3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from 'ai';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { Principal } from '../../src/index.js';
import { runScriptedAgent } from '../../examples/support/scripted-model.js';

type Message = {
  id: string;
  subject?: string;
  thread_id: string;
  body?: string;
  attachments?: { id: string; filename: string }[];
};
type Page<T> = { data: T[] };

describe.each(['in-process', 'remote'] as const)('agents with %s AI SDK tools', (mode) => {
  let service: TestService;
  let principal: Principal;
  const domain = `${mode === 'remote' ? 'remote' : 'local'}.agentpost.localhost`;
  const alice = `alice@${domain}`;
  const bob = `bob@${domain}`;
  const toolsFor = (grantId: string): Record<string, Tool> =>
    mode === 'remote'
      ? createAgentpostTools({ url: service.url, apiKey: service.apiKey, grantId })
      : createAgentpostTools({ core: service.core, principal, grantId });
  const inbox = async (grantId: string) =>
    (await service.core.mail.messages.list(principal, { grant_id: grantId, in: ['inbox'] })).data as Message[];

  beforeAll(async () => {
    service = await startTestService();
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    await service.core.accounts.domains.create(principal, { name: 'Agents', domain_address: domain });
    for (const email of [alice, bob])
      await service.core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
  });
  afterAll(async () => {
    await service.close();
  });

  it('two agents exchange mail and keep one thread', async () => {
    await runScriptedAgent(toolsFor(alice), [
      () => ({
        tool: 'send_message',
        input: { to: [{ email: bob }], subject: 'Kickoff', body: 'Can we start Monday?' },
      }),
      () => ({ text: 'sent' }),
    ]);
    await eventually(async () =>
      (await inbox(bob)).some((message) => message.subject === 'Kickoff') ? true : undefined,
    );

    await runScriptedAgent(toolsFor(bob), [
      () => ({ tool: 'list_messages', input: { in: ['inbox'], limit: 5 } }),
      (seen) => {
        const kickoff = seen
          .last<Page<Message>>('list_messages')
          .data.find((message) => message.subject === 'Kickoff')!;
        return {
          tool: 'send_message',
          // Alice's agent stamped its send Auto-Submitted (issue 37): answering it is on purpose.
          input: {
            to: [{ email: alice }],
            body: 'Monday works for me.',
            reply_to_message_id: kickoff.id,
            allow_automated_reply: true,
          },
        };
      },
      () => ({ text: 'replied' }),
    ]);
    const reply = await eventually(async () =>
      (await inbox(alice)).find((message) => message.subject === 'Re: Kickoff'),
    );

    const { toolCalls } = await runScriptedAgent(toolsFor(alice), [
      () => ({ tool: 'get_thread', input: { thread_id: reply.thread_id } }),
      (seen) => {
        const thread = seen.last<{ message_ids: string[] }>('get_thread');
        expect(thread.message_ids).toHaveLength(2);
        return { text: 'one thread' };
      },
    ]);
    expect(toolCalls).toEqual(['get_thread']);
  });

  it('an agent reads an attachment it received and replies with a file attached', async () => {
    await runScriptedAgent(toolsFor(alice), [
      () => ({
        tool: 'send_message',
        input: {
          to: [{ email: bob }],
          subject: 'Budget',
          body: 'See attached.',
          attachments: [
            {
              filename: 'budget.txt',
              content_type: 'text/plain',
              content: Buffer.from('Budget: 42').toString('base64'),
            },
          ],
        },
      }),
      () => ({ text: 'sent' }),
    ]);
    await eventually(async () =>
      (await inbox(bob)).some((message) => message.subject === 'Budget') ? true : undefined,
    );

    await runScriptedAgent(toolsFor(bob), [
      () => ({ tool: 'list_messages', input: { in: ['inbox'], has_attachment: true, subject: 'Budget' } }),
      (seen) => {
        const message = seen.last<Page<Message>>('list_messages').data[0]!;
        return {
          tool: 'get_attachment',
          input: { attachment_id: message.attachments![0]!.id, message_id: message.id },
        };
      },
      (seen) => {
        const file = seen.last<{ content: { data: string } }>('get_attachment');
        const message = seen.last<Page<Message>>('list_messages').data[0]!;
        const answer = Buffer.from(`Received: ${file.content.data}`).toString('base64');
        return {
          tool: 'send_message',
          input: {
            to: [{ email: alice }],
            body: 'Thanks, my notes are attached.',
            reply_to_message_id: message.id,
            allow_automated_reply: true,
            attachments: [{ filename: 'notes.txt', content_type: 'text/plain', content: answer }],
          },
        };
      },
      () => ({ text: 'done' }),
    ]);
    const reply = await eventually(async () =>
      (await inbox(alice)).find((message) => message.subject === 'Re: Budget'),
    );
    const attachment = reply.attachments!.find((item) => item.filename === 'notes.txt')!;
    const file = await service.core.mail.attachments.read(principal, {
      grant_id: alice,
      attachment_id: attachment.id,
      message_id: reply.id,
    });
    expect(file.content.data).toBe('Received: Budget: 42');
  });

  it('agent A proposes a meeting, B finds a slot, A invites, B accepts, A sees the acceptance', async () => {
    const dayStart = Math.ceil(Date.now() / 1000 / 86_400) * 86_400 + 86_400;
    await runScriptedAgent(toolsFor(alice), [
      () => ({
        tool: 'send_message',
        input: { to: [{ email: bob }], subject: 'Meeting?', body: 'Can we meet for 30 minutes tomorrow?' },
      }),
      () => ({ text: 'asked' }),
    ]);
    await eventually(async () =>
      (await inbox(bob)).some((message) => message.subject === 'Meeting?') ? true : undefined,
    );

    await runScriptedAgent(toolsFor(bob), [
      () => ({ tool: 'list_messages', input: { in: ['inbox'], subject: 'Meeting?' } }),
      () => ({
        tool: 'find_availability',
        input: {
          participants: [{ email: alice }, { email: bob }],
          start_time: dayStart,
          end_time: dayStart + 86_400,
          duration_minutes: 30,
        },
      }),
      (seen) => {
        const slot = seen.last<{ time_slots: { start_time: number }[] }>('find_availability').time_slots[0]!;
        const message = seen.last<Page<Message>>('list_messages').data[0]!;
        return {
          tool: 'send_message',
          input: {
            to: [{ email: alice }],
            body: `How about SLOT:${slot.start_time}?`,
            reply_to_message_id: message.id,
            allow_automated_reply: true,
          },
        };
      },
      () => ({ text: 'proposed' }),
    ]);
    const proposal = await eventually(async () =>
      (await inbox(alice)).find((message) => message.subject === 'Re: Meeting?'),
    );
    const full = (await service.core.mail.messages.find(principal, {
      grant_id: alice,
      message_id: proposal.id,
    })) as Message;
    const start = Number(/SLOT:(\d+)/.exec(full.body ?? '')![1]);

    const created = await runScriptedAgent(toolsFor(alice), [
      () => ({
        tool: 'create_event',
        input: {
          calendar_id: 'primary',
          title: 'Sync',
          when: { start_time: start, end_time: start + 1800 },
          participants: [{ email: bob }],
          notify_participants: true,
        },
      }),
      () => ({ text: 'invited' }),
    ]);
    expect(created.toolCalls).toEqual(['create_event']);

    const invitation = await eventually(async () => {
      const events = (
        await service.core.calendar.events.list(principal, {
          grant_id: bob,
          calendar_id: 'primary',
          start: start - 60,
          end: start + 3600,
        })
      ).data as { id: string; title: string }[];
      return events.find((event) => event.title === 'Sync');
    });
    await runScriptedAgent(toolsFor(bob), [
      () => ({ tool: 'list_events', input: { calendar_id: 'primary', start: start - 60, end: start + 3600 } }),
      (seen) => ({
        tool: 'send_rsvp',
        input: {
          event_id: seen
            .last<Page<{ id: string; title: string }>>('list_events')
            .data.find((event) => event.title === 'Sync')!.id,
          calendar_id: 'primary',
          status: 'yes',
        },
      }),
      () => ({ text: 'accepted' }),
    ]);
    expect(invitation.id).toBeTruthy();

    await eventually(async () => {
      const events = (
        await service.core.calendar.events.list(principal, {
          grant_id: alice,
          calendar_id: 'primary',
          start: start - 60,
          end: start + 3600,
        })
      ).data as { title: string; participants: { email: string; status: string }[] }[];
      const sync = events.find((event) => event.title === 'Sync');
      return sync?.participants.find((participant) => participant.email === bob)?.status === 'yes' ? true : undefined;
    }, 10_000);
  });
});
