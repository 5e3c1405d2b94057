/**
 * @module event-stream
 * The front door of src/event-stream/: events that reach a client with no public URL (Server-Sent Events and
 * WebSocket over `GET /v3/events/stream`), resumable by cursor.
 */
export { createEventHub, RING_EVENTS } from './event-hub.js';
export type { EventHub, EventStreamFilter, EventSubscription, StreamedEvent } from './contracts.js';
