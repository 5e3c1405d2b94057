/**
 * @module tools/subscriptions
 * MCP resource subscriptions (issue 40, item 2): `resources/subscribe` to a mailbox
 * (`agentpost://grants/{grant_id}/mailbox`) or a thread (`…/threads/{thread_id}`), and
 * `notifications/resources/updated` with the URI as subscribed when a new message arrives in that mailbox or thread.
 * The news comes from the event stream (./event-feed.ts: the hub of `GET /v3/events/stream` and wait_for_message),
 * one feed per subscribed grant, opened on the first subscription of the grant and closed on its last unsubscribe or
 * when the session closes; nothing polls. The session's key must be able to read the grant: a subscription it may
 * not read is refused, as the read would be. Over Streamable HTTP the notifications travel on the session's GET
 * stream; over stdio to the host.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../src/index.js';
import type { EventFeed, FeedEvent } from './event-feed.js';
import type { Executor } from './executor.js';
import { operationNamed } from './compact.js';

/** Resources one session may be subscribed to at once (each grant's feed is one stream of the hub). */
export const MAX_SUBSCRIPTIONS = 100;
/** The trigger types that tell a mailbox or a thread it changed: a new message. */
const TYPES = ['message.created'] as const;

/** What a subscribable URI names: a grant's mailbox, or one thread of it. */
interface Subscribed {
  grantId: string;
  threadId?: string | undefined;
}

/** The mailbox or thread a resource URI names (its query, `?max_tokens=…`, ignored); undefined for any other. */
export function subscribableOf(uri: string): Subscribed | undefined {
  const match = /^agentpost:\/\/grants\/([^/?#]+)\/(mailbox|threads\/([^/?#]+))(?:[?#].*)?$/.exec(uri);
  if (!match) return undefined;
  try {
    return {
      grantId: decodeURIComponent(match[1]!),
      ...(match[3] !== undefined ? { threadId: decodeURIComponent(match[3]) } : {}),
    };
  } catch {
    return undefined; // a malformed escape
  }
}

/** The JSON-RPC error of a refused subscription (the AppError's code and message, as a tool's error reads). */
function refusal(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof AppError) {
    const code = error.code === 'invalid_request' ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
    return new McpError(code, `${error.code}: ${error.message}`);
  }
  return new McpError(ErrorCode.InternalError, 'internal: the subscription could not be opened.');
}

/**
 * Declares the `subscribe` capability and answers `resources/subscribe` and `resources/unsubscribe` (before the
 * server connects). `executor` checks the key may read what it subscribes to; `feed` tells when it changed.
 */
export function registerSubscriptions(server: McpServer, executor: Executor, feed: EventFeed): void {
  const listThreads = operationNamed('list_threads');
  /** Subscribed URIs, as the client wrote them, with what they name. */
  const uris = new Map<string, Subscribed>();
  /** One feed per subscribed grant (by the grant as the URIs name it). */
  const feeds = new Map<string, AbortController>();
  let closed = false;

  server.server.registerCapabilities({ resources: { subscribe: true } });

  /** Tells the client of every subscribed resource a new message of `grantId` changes. */
  function changed(grantId: string, threadId: unknown): void {
    for (const [uri, subscribed] of uris) {
      if (subscribed.grantId !== grantId) continue;
      if (subscribed.threadId !== undefined && subscribed.threadId !== threadId) continue;
      server.server.sendResourceUpdated({ uri }).catch(() => undefined); // a client gone meanwhile
    }
  }

  /** Tells the client every subscribed resource of `grantId` may have changed. */
  function allChanged(grantId: string): void {
    for (const [uri, subscribed] of uris)
      if (subscribed.grantId === grantId) server.server.sendResourceUpdated({ uri }).catch(() => undefined);
  }

  /**
   * Reads the grant's feed until it is closed. A feed the service ended (the reader fell behind) is opened again,
   * and since a change may have been missed meanwhile, every resource of the grant is told it changed.
   */
  async function follow(grantId: string, controller: AbortController, events: AsyncIterable<FeedEvent>) {
    try {
      for await (const event of events) changed(grantId, event.object.thread_id);
    } catch {
      // The stream failed: reopened below while still wanted.
    }
    if (controller.signal.aborted || closed || feeds.get(grantId) !== controller) return;
    feeds.delete(grantId);
    allChanged(grantId);
    await open(grantId).catch(() => {
      // Not reopened (the key lost the grant, the service is stopping): its subscriptions end.
      for (const [uri, subscribed] of uris) if (subscribed.grantId === grantId) uris.delete(uri);
    });
  }

  async function open(grantId: string): Promise<void> {
    const controller = new AbortController();
    feeds.set(grantId, controller);
    try {
      const events = await feed(grantId, TYPES, controller.signal);
      if (closed) controller.abort();
      void follow(grantId, controller, events);
    } catch (error) {
      if (feeds.get(grantId) === controller) feeds.delete(grantId);
      throw error;
    }
  }

  function stop(grantId: string): void {
    if ([...uris.values()].some((subscribed) => subscribed.grantId === grantId)) return;
    feeds.get(grantId)?.abort();
    feeds.delete(grantId);
  }

  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { uri } = request.params;
    const subscribed = subscribableOf(uri);
    if (!subscribed)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Only mailbox and thread resources can be subscribed to (agentpost://grants/{grant_id}/mailbox or …/threads/{thread_id}), not ${JSON.stringify(uri.slice(0, 200))}.`,
      );
    if (uris.has(uri)) return {};
    if (uris.size >= MAX_SUBSCRIPTIONS)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `This session is subscribed to ${MAX_SUBSCRIPTIONS} resources, the most it may be; unsubscribe from one first.`,
      );
    try {
      // As a read of the mailbox would be checked: a grant the key cannot read (or cannot read mail of) is refused.
      await executor(listThreads, { grant_id: subscribed.grantId, limit: 1 });
      if (!feeds.has(subscribed.grantId)) await open(subscribed.grantId);
    } catch (error) {
      throw refusal(error);
    }
    uris.set(uri, subscribed);
    return {};
  });

  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    const subscribed = uris.get(request.params.uri);
    uris.delete(request.params.uri);
    if (subscribed) stop(subscribed.grantId);
    return {};
  });

  // Subscriptions end with the session: every feed is closed when the server's transport closes.
  const previous = server.server.onclose;
  server.server.onclose = () => {
    closed = true;
    uris.clear();
    for (const controller of feeds.values()) controller.abort();
    feeds.clear();
    previous?.();
  };
}
