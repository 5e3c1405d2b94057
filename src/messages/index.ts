/**
 * @module messages
 * The front door of src/messages/: what other areas, the operations and the faces use of it.
 */
export { createAttachmentService, type AttachmentDownload, type AttachmentService } from './attachment-service.js';
export { asDelivery, writeItemOf, type NewMessage } from './mail-rows.js';
export {
  createFolderCounter,
  createMailStore,
  loadAttachments,
  loadBody,
  presentMessages,
  type MailStore,
} from './mail-store.js';
export { messageConditions, notDraft } from './message-query-store.js';
export { selectFields, type MessageRow } from './message-mapper.js';
export {
  createMessageDestroyer,
  createMessageService,
  loadRaw,
  type MessageService,
  type SentStateLookup,
} from './message-service.js';
export { createThreadService, type ThreadService } from './thread-service.js';
