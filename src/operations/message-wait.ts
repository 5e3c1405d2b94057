/**
 * Waiting for a message (extension, not in Nylas; issue 40, item 3; docs/reading.md#waiting-for-a-message-codes-and-links-issue-40-item-3): the first
 * message of a mailbox matching from, to, subject and thread, received at or after a time, with its one-time codes
 * and links. The stored messages are checked first (mail may arrive between an agent's sign-up and its call); then
 * the call waits on the event hub (src/event-stream) for `message.created` of the grant: no polling of its own, and
 * nothing runs while no mail arrives. Past the timeout, a 408 `request_timeout`.
 */
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { extractFromMail } from '../mail-extract/index.js';
import { GetMessageInputSchema, ListMessagesInputSchema, type Message } from '../schemas/messages.js';
import {
  DEFAULT_WAIT_SECONDS,
  WaitForMessageInputSchema,
  WaitedMessageSchema,
  type WaitForMessageInput,
  type WaitedMessage,
} from '../schemas/message-wait.js';
import type { Core } from '../core-types.js';
import { defineOperation } from './define-operation.js';

/** Stored messages checked before waiting (the newest that match; the earliest of them is answered). */
const STORED_CHECKED = 50;

/** Whether an address list holds `address` (any case). */
const hasAddress = (list: Message['from'], address: string) =>
  (list ?? []).some((participant) => participant.email.toLowerCase() === address.toLowerCase());

/** Whether a message matches the wait's filter, received at or after `after` (unix seconds). Pure. */
function matchesWait(message: Message, input: WaitForMessageInput, after: number, checkThread = true): boolean {
  if ((message.date ?? 0) < after) return false;
  // Mail this mailbox sent is no answer to wait for (unless it also reached its inbox: mail to oneself).
  const folders = message.folders ?? [];
  if (folders.includes('sent') && !folders.includes('inbox')) return false;
  if (input.from !== undefined && !hasAddress(message.from, input.from)) return false;
  if (input.to !== undefined && !hasAddress([...(message.to ?? []), ...(message.cc ?? [])], input.to)) return false;
  if (checkThread && input.thread_id !== undefined && message.thread_id !== input.thread_id) return false;
  if (input.subject !== undefined && !(message.subject ?? '').toLowerCase().includes(input.subject.toLowerCase()))
    return false;
  return true;
}

/** The message with its codes and links. */
function answer(message: Message): WaitedMessage {
  return { ...message, ...extractFromMail({ subject: message.subject ?? '', body: message.body ?? '' }) };
}

/** The earliest stored message that matches, if any. */
async function storedMatch(
  core: Core,
  principal: Principal,
  grantId: string,
  input: WaitForMessageInput,
  after: number,
): Promise<Message | undefined> {
  const page = await core.mail.messages.list(
    principal,
    ListMessagesInputSchema.parse({
      grant_id: grantId,
      limit: STORED_CHECKED,
      ...(input.from !== undefined ? { from: [input.from] } : {}),
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(input.thread_id !== undefined ? { thread_id: input.thread_id } : {}),
      // The list's bound is strict: a second earlier keeps a message received in the very second asked.
      ...(after > 0 ? { received_after: after - 1 } : {}),
    }),
  );
  const matching = page.data.filter((message) => matchesWait(message, input, after));
  const earliest = matching.at(-1);
  return (
    earliest &&
    core.mail.messages.find(principal, GetMessageInputSchema.parse({ grant_id: grantId, message_id: earliest.id }))
  );
}

/** Waits for the first matching message: see the module's comment. */
async function waitForMessage(
  core: Core,
  input: WaitForMessageInput,
  principal: Principal,
  signal: AbortSignal | undefined,
): Promise<WaitedMessage> {
  const after = input.received_after ?? Math.floor(core.deps.clock.now().getTime() / 1000);
  const seconds = input.timeout ?? DEFAULT_WAIT_SECONDS;
  const grant = await core.accounts.grants.find(principal, input.grant_id);
  // Subscribed before the stored messages are read, so a message committed in between is not missed.
  const subscription = await core.notifications.stream.open({
    applicationId: principal.applicationId,
    grantIds: new Set([grant.id]),
    types: new Set(['message.created']),
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    subscription.close();
  }, seconds * 1000);
  const abort = () => subscription.close();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const stored = await storedMatch(core, principal, grant.id, input, after);
    if (stored) return answer(stored);
    for await (const { notification } of subscription) {
      const id = notification.object.id;
      // The notification carries the message as committed: only a likely match is read in full (its thread is
      // checked on the stored message, which the writer may have threaded since).
      if (typeof id !== 'string' || !matchesWait(notification.object as unknown as Message, input, after, false))
        continue;
      const message = await core.mail.messages
        .find(principal, GetMessageInputSchema.parse({ grant_id: grant.id, message_id: id }))
        .catch(() => undefined); // deleted meanwhile
      if (message && matchesWait(message, input, after)) return answer(message);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
    subscription.close();
  }
  if (timedOut)
    throw new AppError(
      'request_timeout',
      `No matching message arrived within ${seconds} s. Call again with received_after=${after} to keep waiting without missing one.`,
    );
  throw new AppError(
    'unavailable',
    'The wait ended before a message arrived (the caller left or the service is stopping).',
  );
}

export const waitForMessageOperation = defineOperation({
  name: 'wait_for_message',
  title: 'Wait for a message',
  description: 'Waits for a new message matching the filters; returns it with its one-time codes and links.',
  input: WaitForMessageInputSchema,
  output: WaitedMessageSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/wait' },
  tool: true,
  // Its answer is read for the codes and links: the tool keeps the default reading of the body (Markdown, 5,000
  // tokens) without the fields that change it, for the size of tools/list (test/tools/budgets.test.ts).
  agent: { body: 'message', omit: ['to', 'include_html', 'body_format', 'max_tokens'] },
  run: (core, input, { principal, signal }) => waitForMessage(core, input, principal, signal),
});
