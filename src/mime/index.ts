/**
 * @module mime
 * The front door of src/mime/: what other areas, the operations and the faces use of it.
 */
export { cutParts, withBodyReplaced, type PartToCut } from './cut-parts.js';
export { fromHeaderAddress } from './from-header.js';
export { htmlToText, normalize, sha256, snippetOf, textToHtml, visibleText } from './normalize.js';
export {
  createMimeParser,
  emptyParsedMessage,
  readRawHeaders,
  type MimeParser,
  type ParsedAttachment,
  type ParsedMessage,
  type ParseResult,
  type RawHeader,
} from './parse-inbound.js';
export {
  fieldGroups,
  headerOf,
  headersOf,
  MAX_REPORT_BYTES,
  parseContentType,
  readReport,
  splitEntity,
  splitMultipart,
  type MimeReport,
} from './report-mime.js';
export { parseSimpleMessage } from './simple-mime.js';
