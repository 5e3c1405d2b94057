/**
 * @module applications
 * The front door of src/applications/: what other areas, the operations and the faces use of it.
 */
export type {
  ApiKeyInfo,
  ApplicationDetailsService,
  ApplicationInfo,
  ApplicationService,
  DashboardSession,
  KeyOptions,
  Plan,
  ServiceAccountCredentials,
  SignedRequest,
} from './contracts.js';
export { createApplicationDetailsService } from './application-details.js';
export { createApplicationService } from './application-service.js';
export { canonicalJson, hashPassword, signingString } from './credentials.js';
