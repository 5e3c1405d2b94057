/**
 * Message and attachment operations (reading the mailbox).
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  AttachmentSchema,
  AttachmentWithContentSchema,
  CleanedMessageSchema,
  CleanMessagesInputSchema,
  DeleteMessageInputSchema,
  GetAttachmentInputSchema,
  GetMessageInputSchema,
  ListMessagesInputSchema,
  MessageSchema,
  ReadAttachmentInputSchema,
  UpdateMessageInputSchema,
} from '../schemas/messages.js';
import { fieldText } from './agent.js';
import { bodyAsAsked } from './read-body.js';
import { defineOperation } from './define-operation.js';

export const listMessages = defineOperation({
  name: 'list_messages',
  title: 'List messages',
  description: 'Lists messages, newest first, with the filters below.',
  input: ListMessagesInputSchema,
  output: pageOf(MessageSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages', envelope: 'list' },
  tool: true,
  agent: { compact: 'messages', omit: ['cc', 'bcc', 'any_email', 'fields'] },
  run: (core, input, { principal }) => core.mail.messages.list(principal, input),
  runJson: (core, input, { principal }) => core.mail.messages.listJson(principal, input),
});

export const cleanMessages = defineOperation({
  name: 'clean_messages',
  title: 'Clean messages',
  description:
    'Returns up to 20 messages, each with `conversation`: its body as plain text without quoted history (answers written between quoted lines kept), hidden text, scripts and styles, and (by default) without links, table markup and the closing phrase and signature, images as their alt text. ' +
    'html_as_markdown=true gives Markdown instead of plain text. Nothing is changed in the mailbox.',
  input: CleanMessagesInputSchema,
  output: pageOf(CleanedMessageSchema),
  hints: { readOnly: true, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/messages/clean', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.mail.messages.clean(principal, input),
});

export const getMessage = defineOperation({
  name: 'get_message',
  title: 'Get a message',
  description: 'One message: body, addresses, folders, attachments (read_attachment reads one).',
  input: GetMessageInputSchema,
  output: MessageSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/:message_id' },
  tool: true,
  agent: { body: 'message', omit: ['fields'] },
  run: async (core, input, { principal }) => bodyAsAsked(await core.mail.messages.find(principal, input), input),
});

export const updateMessage = defineOperation({
  name: 'update_message',
  title: 'Update a message',
  description: 'Marks a message read or unread, starred or not, moves it (folders) or sets its metadata.',
  input: UpdateMessageInputSchema,
  output: MessageSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/messages/:message_id' },
  tool: true,
  agent: {
    omit: ['metadata'],
    headline: (message) =>
      `Updated message ${fieldText(message.id ?? '')}${message.thread_id ? ` in thread ${fieldText(message.thread_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.mail.messages.update(principal, input),
});

export const deleteMessage = defineOperation({
  name: 'delete_message',
  title: 'Delete a message',
  description: 'Moves a message to trash; one in trash, or with hard_delete, is deleted for good.',
  input: DeleteMessageInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/messages/:message_id', envelope: 'empty' },
  tool: true,
  agent: {
    headline: (_result, input) =>
      input.hard_delete === true
        ? `Deleted message ${String(input.message_id)} for good`
        : `Deleted message ${String(input.message_id)} (moved to trash; deleted for good if it was in trash already)`,
  },
  run: async (core, input, { principal }) => {
    await core.mail.messages.destroy(principal, input);
    return {};
  },
});

export const getAttachmentMetadata = defineOperation({
  name: 'get_attachment_metadata',
  title: 'Get attachment metadata',
  description:
    'Returns the file name, content type, size and disposition of one attachment of a message (message_id is required). ' +
    'The bytes are at GET /v3/grants/{grant_id}/attachments/{attachment_id}/download?message_id={message_id}.',
  input: GetAttachmentInputSchema,
  output: AttachmentSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/attachments/:attachment_id' },
  tool: false,
  run: (core, input, { principal }) => core.mail.attachments.find(principal, input),
});

export const getAttachment = defineOperation({
  name: 'get_attachment',
  title: 'Read an attachment',
  description: 'The content of an attachment (text as text, others Base64), cut at max_bytes. Ids: get_message.',
  input: ReadAttachmentInputSchema,
  output: AttachmentWithContentSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/attachments/:attachment_id/content' },
  tool: true,
  agent: { file: true },
  run: (core, input, { principal }) => core.mail.attachments.read(principal, input),
});
