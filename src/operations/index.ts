/**
 * @module operations
 * THE registry. Every face (HTTP, MCP, AI SDK, OpenAPI) is built from this list.
 */
import type { AnyOperation } from './define-operation.js';
import { permissionsFor } from './permissions.js';
import * as accessLog from './access-log.js';
import * as oversight from './oversight.js';
import * as admin from './admin.js';
import * as apiKeys from './api-keys.js';
import * as applications from './applications.js';
import * as attachmentText from './attachment-text.js';
import * as attachmentUploads from './attachment-uploads.js';
import * as availability from './availability.js';
import * as calendars from './calendars.js';
import * as holds from './holds.js';
import * as connectors from './connectors.js';
import * as oauth from './oauth.js';
import * as contacts from './contacts.js';
import * as domains from './domains.js';
import * as drafts from './drafts.js';
import * as engagement from './engagement.js';
import * as eventStream from './event-stream.js';
import * as events from './events.js';
import * as folders from './folders.js';
import * as followUps from './follow-ups.js';
import * as grants from './grants.js';
import * as messageWait from './message-wait.js';
import * as messages from './messages.js';
import * as outbound from './outbound.js';
import * as overview from './overview.js';
import * as smartCompose from './smart-compose.js';
import * as suppressions from './suppressions.js';
import * as testClock from './test-clock.js';
import * as threads from './threads.js';
import * as webhooks from './webhooks.js';

function register(...groups: Record<string, AnyOperation>[]): readonly AnyOperation[] {
  const all = groups.flatMap((group) => Object.values(group));
  const seen = new Set<string>();
  for (const operation of all) {
    if (seen.has(operation.name)) throw new Error(`Duplicate operation name: ${operation.name}`);
    permissionsFor(operation.name); // throws for an operation no permission was chosen for
    seen.add(operation.name);
  }
  return all;
}

/** Every operation, in a stable order. */
export const operations: readonly AnyOperation[] = register(
  grants,
  folders,
  // Before messages: its path (/messages/wait) would otherwise be read as get_message of a message named `wait`.
  messageWait,
  messages,
  attachmentText,
  smartCompose,
  engagement,
  outbound,
  followUps,
  drafts,
  threads,
  domains,
  connectors,
  oauth,
  webhooks,
  availability,
  calendars,
  holds,
  events,
  contacts,
  applications,
  apiKeys,
  attachmentUploads,
  admin,
  suppressions,
  accessLog,
  oversight,
  eventStream,
  overview,
  testClock,
);

export { fieldText } from './agent.js';
export { assertGrantReached, mayCall, permissionError } from './authorize.js';
export { OPERATION_NEEDS, SCOPED_BY_THEMSELVES, permissionsFor, type Needs } from './permissions.js';
export { readStoredBody } from './read-body.js';
export {
  defineOperation,
  deprecationHeaders,
  hasJsonBody,
  runOperation,
  runOperationJson,
  runOperationStream,
  type AnyOperation,
  type Deprecation,
  type JsonPage,
  type Operation,
  type HttpBinding,
  type OperationHints,
} from './define-operation.js';
