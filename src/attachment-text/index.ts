/**
 * @module attachment-text
 * The front door of src/attachment-text/: attachments (PDF, DOCX, XLSX, ODS, CSV, PPTX, HTML, plain text,
 * iCalendar, message/rfc822) read as text a model can take, paged by tokens with an opaque cursor, off the event
 * loop with a deadline and a memory cap, zip bombs refused, results cached by content hash. Images and unknown types
 * answer their metadata. See docs/reading.md (Attachments as text).
 */
export type {
  AttachmentKind,
  AttachmentMetadata,
  AttachmentText,
  AttachmentTextErrorReason,
  AttachmentTextLimits,
  AttachmentTextOptions,
  AttachmentTextReader,
  AttachmentTextReaderOptions,
  InnerAttachment,
  SheetSummary,
  StoredAttachment,
} from './contracts.js';
export { CANONICAL_TYPES } from './detect.js';
export { AttachmentTextError, isAttachmentTextError } from './errors.js';
export { DEFAULT_LIMITS, DEFAULT_MAX_TOKENS, ZIP_LIMITS } from './limits.js';
export {
  createAttachmentTextReader,
  extractAttachmentText,
  READER_DEFAULTS,
  sharedAttachmentTextReader,
} from './reader.js';
export { openZip, type ZipArchive, type ZipEntry, type ZipLimits } from './zip.js';
