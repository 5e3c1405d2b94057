/**
 * Smart Compose operations (Nylas §12): HTTP only. They are not agent tools: an agent host already has a model of
 * its own, and would only pay for a second one (see docs/smart-compose.md).
 */
import {
  ComposeMessageInputSchema,
  ComposeMessageReplyInputSchema,
  SmartComposeSuggestionSchema,
} from '../schemas/smart-compose.js';
import { defineOperation } from './define-operation.js';

const LIMITS =
  'The prompt may be up to 1,000 tokens. Runs only against connected accounts (not Agent Accounts), with the model the operator configured (503 without one). ' +
  'Send Accept: text/event-stream to receive the suggestion as it is generated (events of {"suggestion": "<piece>"}).';

export const composeMessage = defineOperation({
  name: 'compose_message',
  title: 'Compose a message (Smart Compose)',
  description: `Generates a message body from a prompt. Nothing is sent or saved. ${LIMITS}`,
  input: ComposeMessageInputSchema,
  output: SmartComposeSuggestionSchema,
  hints: { readOnly: true, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/messages/smart-compose', stream: true },
  tool: false,
  run: (core, input, { principal, signal }) => core.sending.smartCompose.compose(principal, input, { signal }),
  runStream: async (core, input, { principal, signal }) =>
    mapPieces(await core.sending.smartCompose.stream(principal, input, { signal })),
});

export const composeMessageReply = defineOperation({
  name: 'compose_message_reply',
  title: 'Compose a reply (Smart Compose)',
  description: `Generates the body of a reply to a message, from a prompt; the original message (sender, recipients, subject, body without most of its quoted history) is the context. Nothing is sent or saved. ${LIMITS}`,
  input: ComposeMessageReplyInputSchema,
  output: SmartComposeSuggestionSchema,
  hints: { readOnly: true, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/messages/:message_id/smart-compose', stream: true },
  tool: false,
  run: (core, input, { principal, signal }) => core.sending.smartCompose.compose(principal, input, { signal }),
  runStream: async (core, input, { principal, signal }) =>
    mapPieces(await core.sending.smartCompose.stream(principal, input, { signal })),
});

/** Each piece of text as the event Nylas streams: `{suggestion: "<piece>"}`. */
async function* mapPieces(pieces: AsyncIterable<string>): AsyncGenerator<{ suggestion: string }> {
  for await (const suggestion of pieces) yield { suggestion };
}
