/**
 * @module messages/for-workers
 * The front door of src/messages/ for worker threads: the rows of a stored copy (./mail-rows.ts), without the
 * services and stores of ./index.ts (see src/mime/for-workers.ts for why a thread's imports are kept lean).
 */
export type { NewMessage } from './contracts.js';
export { asDelivery, writeItemOf } from './mail-rows.js';
