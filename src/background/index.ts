/**
 * @module background
 * The front door of src/background/: what other areas, the operations and the faces use of it.
 */
export { startBackgroundWork, type BackgroundOptions, type BackgroundWork } from './background.js';
