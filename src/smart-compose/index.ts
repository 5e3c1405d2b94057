/**
 * @module smart-compose
 * The front door of src/smart-compose/: what other areas, the operations and the faces use of it.
 */
export type { SmartComposeInput, SmartComposeOptions, SmartComposeService } from './contracts.js';
export { createSmartComposeService } from './smart-compose.js';
