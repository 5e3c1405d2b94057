/**
 * @module contacts
 * The front door of src/contacts/: what other areas, the operations and the faces use of it.
 */
export { createContactService, type ContactService } from './contact-service.js';
export type { RemoteContactSink } from './contracts.js';
