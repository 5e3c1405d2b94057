/**
 * The event stream (extension, not in Nylas; issue 40, item 1): the notifications webhooks carry, for a client with
 * no public URL. HTTP only, and only as a stream (server/routes/event-stream.ts frames it as Server-Sent Events or
 * WebSocket messages); no agent tool (an MCP client subscribes to resources instead).
 */
import type { Permission, Principal } from '../access.js';
import { AppError, notFound } from '../errors.js';
import { StreamEventsInputSchema, StreamedEventSchema } from '../schemas/event-stream.js';
import { buildNotificationBody } from '../webhooks/index.js';
import { defineOperation } from './define-operation.js';

/** The permission that lets a key see events of a family of trigger types (`webhooks.manage` sees them all). */
const FAMILY_NEEDS: Readonly<Record<string, readonly Permission[]>> = {
  message: ['mail.read'],
  thread: ['mail.read'],
  folder: ['mail.read'],
  event: ['calendar.read'],
  calendar: ['calendar.read'],
  booking: ['calendar.read'],
  contact: ['contacts.read'],
  approval: ['approvals.decide'],
  oversight: ['approvals.decide'],
  send_review: ['approvals.decide'],
};

/** Whether the principal may see events of this type: by its permissions; without a list, every type. Pure. */
function mayStreamType(principal: Pick<Principal, 'permissions'>, type: string): boolean {
  const held = principal.permissions;
  if (!held || held.has('webhooks.manage') || held.has('admin')) return true;
  const needs = FAMILY_NEEDS[type.split('.')[0] ?? ''] ?? [];
  return needs.some((permission) => held.has(permission));
}

export const streamEvents = defineOperation({
  name: 'stream_events',
  title: 'Stream events',
  description:
    'The notifications webhooks carry (the same ids and payloads), as they are committed, for a client with no public URL: GET /v3/events/stream with Accept: text/event-stream (Server-Sent Events), or the same path as a WebSocket. ' +
    'Filters: grant_id (repeatable) and trigger_types (comma-separated). Every event has a cursor; resume after it with Last-Event-ID or ?cursor= (410 cursor_expired past the retention).',
  input: StreamEventsInputSchema,
  output: StreamedEventSchema,
  hints: { readOnly: true },
  tool: false,
  run: () =>
    Promise.reject(
      new AppError(
        'invalid_request',
        'The event stream answers only as a stream: GET /v3/events/stream with Accept: text/event-stream, or a WebSocket.',
      ),
    ),
  async runStream(core, input, { principal, signal }) {
    let grantIds = principal.grantIds;
    if (input.grant_ids) {
      const ids = new Set<string>();
      for (const ref of input.grant_ids) {
        const grant = await core.accounts.grants.find(principal, ref);
        if (principal.grantIds && !principal.grantIds.has(grant.id)) throw notFound('Grant', ref);
        ids.add(grant.id);
      }
      grantIds = ids;
    }
    const subscription = await core.notifications.stream.open(
      {
        applicationId: principal.applicationId,
        grantIds,
        types: input.trigger_types ? new Set(input.trigger_types) : undefined,
        allowType: (type) => mayStreamType(principal, type),
      },
      input.cursor,
    );
    signal?.addEventListener('abort', () => subscription.close(), { once: true });
    return (async function* () {
      try {
        for await (const { cursor, notification } of subscription) {
          const { webhook_delivery_attempt: _attempt, ...envelope } = buildNotificationBody(notification, 1).envelope;
          yield { ...envelope, cursor };
        }
      } finally {
        subscription.close();
      }
    })();
  },
});
