/**
 * @module messages
 * The front door of src/messages/: what other areas, the operations and the faces use of it.
 */
export { createAttachmentService } from './attachment-service.js';
export type {
  AttachmentDownload,
  AttachmentService,
  DestroyForGood,
  MailStore,
  MessageService,
  NewMessage,
  SentStateLookup,
  StoredMessage,
  ThreadService,
} from './contracts.js';
export { asDelivery, writeItemOf } from './mail-rows.js';
export { createFolderCounter, createMailStore, loadAttachments, loadBody, presentMessages } from './mail-store.js';
export { messageConditions, notDraft } from './message-query-store.js';
export { selectFields, type MessageRow } from './message-mapper.js';
export { createMessageDestroyer, createMessageService } from './message-service.js';
export { loadRaw } from './message-reads.js';
export { createThreadService } from './thread-service.js';
