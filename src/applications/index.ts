/**
 * @module applications
 * The front door of src/applications/: what other areas, the operations and the faces use of it.
 */
export { createApplicationDetailsService, type ApplicationDetailsService } from './application-details.js';
export { createApplicationService, type ApplicationService, type Plan } from './application-service.js';
export { canonicalJson, hashPassword, signingString } from './credentials.js';
