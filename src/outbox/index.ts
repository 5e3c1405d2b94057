/**
 * @module outbox
 * The front door of src/outbox/: what other areas, the operations and the faces use of it.
 */
export {
  createOutboxDispatcher,
  type OutboxConsumer,
  type OutboxDispatcher,
  type OutboxRow,
} from './outbox-dispatcher.js';
export { announceRecordedEvents, deletedEvent, eventRecorder, onEventRecorded, type TriggerType } from './outbox.js';
