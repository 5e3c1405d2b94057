/**
 * @module outbound
 * The front door of src/outbound/: what other areas, the operations and the faces use of it.
 */
export { UPLOAD_PATH } from './attachment-uploads.js';
export { createOutboundService, type OutboundService } from './outbound-service.js';
export type { DraftService } from './drafts.js';
