/**
 * @module smart-compose
 * The front door of src/smart-compose/: what other areas, the operations and the faces use of it.
 */
export { createSmartComposeService, type SmartComposeService } from './smart-compose.js';
