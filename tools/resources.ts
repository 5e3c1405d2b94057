/**
 * @module tools/resources
 * Threads and messages as MCP resources (`agentpost://grants/{grant_id}/threads/{thread_id}` and
 * `…/messages/{message_id}`), read through the same operations as the tools. A thread resource carries the
 * thread and its messages, oldest first, so an agent host can attach a conversation as context: within the same
 * budget as get_thread (tools/compact.ts), its newest message whole, then earlier ones as fit; the messages left out
 * are named, newest first, with their own resources and the call that reads each. `?max_tokens=…&body_format=…`
 * on either URI sets the budget and the body format as on the tools; text from outside is fenced (tools/fence.ts).
 * A mailbox resource (`agentpost://grants/{grant_id}/mailbox`) is the mailbox at a glance: its folders with their
 * counts and its newest threads as list_threads reads them. Mailboxes and threads can be subscribed to
 * (tools/subscriptions.ts).
 */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListResourcesRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Executor } from './executor.js';
import { operationNamed as byName, readForAgent } from './compact.js';
import { fenceFields, newFence, type RandomBytes } from './fence.js';

/** URI of a thread resource. */
export const threadUri = (grantId: string, threadId: string) =>
  `agentpost://grants/${encodeURIComponent(grantId)}/threads/${encodeURIComponent(threadId)}`;
/** URI of a mailbox resource: the mailbox at a glance (issue 40, item 2). */
export const mailboxUri = (grantId: string) => `agentpost://grants/${encodeURIComponent(grantId)}/mailbox`;
/** URI of a message resource. */
export const messageUri = (grantId: string, messageId: string) =>
  `agentpost://grants/${encodeURIComponent(grantId)}/messages/${encodeURIComponent(messageId)}`;

const json = (uri: string, value: unknown) => ({
  contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }],
});
/** A variable of a resource URI; the last one runs on into the query (`?max_tokens=…`), which is not part of it. */
const variable = (value: string | string[] | undefined) =>
  decodeURIComponent((Array.isArray(value) ? (value[0] ?? '') : (value ?? '')).split('?')[0]!);

/** `max_tokens` and `body_format` of a resource URI's query, as a read tool takes them (others ignored). */
function readOptions(uri: URL): Record<string, unknown> {
  const tokens = Number(uri.searchParams.get('max_tokens') ?? '');
  const format = uri.searchParams.get('body_format');
  return {
    ...(Number.isInteger(tokens) && tokens >= 500 ? { max_tokens: Math.min(tokens, 100_000) } : {}),
    ...(format === 'markdown' || format === 'text' || format === 'html' ? { body_format: format } : {}),
  };
}

/** Tokens of a thread resource's wrapping, `{"thread":{…},…}`, beyond the read's own JSON (4; a margin kept). */
const THREAD_WRAPPING_TOKENS = 8;

/** Threads a mailbox resource shows (the newest), and folders at most. */
export const MAILBOX_THREADS = 10;
const MAILBOX_FOLDERS = 50;

/** Threads listed per `resources/list` page. */
export const RESOURCES_PAGE_SIZE = 20;

/**
 * Registers the resource templates. With a bound grant, `resources/list` lists its threads, newest first,
 * {@link RESOURCES_PAGE_SIZE} a page, with `nextCursor` while there are more (the thread list's own cursor).
 */
export function registerMailResources(
  server: McpServer,
  executor: Executor,
  grantId: string | undefined,
  random?: RandomBytes,
): void {
  const listThreads = byName('list_threads');
  const getThread = byName('get_thread');
  const getMessage = byName('get_message');
  const listFolders = byName('list_folders');

  server.registerResource(
    'thread',
    new ResourceTemplate('agentpost://grants/{grant_id}/threads/{thread_id}', {
      list: grantId
        ? async () => {
            const page = (await executor(listThreads, { grant_id: grantId, limit: 20 })) as {
              data: { id: string; subject?: string }[];
            };
            return {
              resources: page.data.map((thread) => ({
                uri: threadUri(grantId, thread.id),
                name: thread.subject || '(no subject)',
                mimeType: 'application/json',
              })),
            };
          }
        : undefined,
    }),
    {
      title: 'Conversation',
      description:
        'A mail thread with its messages, oldest first: the newest whole, earlier ones as fit; those left out are named in messages_truncated',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const grant = variable(variables.grant_id);
      const threadId = variable(variables.thread_id);
      // As get_thread reads it, within the same token budget (max_tokens and body_format in the URI's query),
      // measured with the fence it is shown in.
      const fence = newFence(random);
      const {
        messages,
        messages_truncated: truncated,
        ...rest
      } = fenceFields(
        await readForAgent(
          executor,
          getThread,
          { grant_id: grant, thread_id: threadId },
          // A bound server's tools take no grant_id: the calls it names for the rest do not either.
          { ...(grantId ? {} : { grant_id: grant }), ...readOptions(uri) },
          // The wrapping below (`{"thread": …}`) takes a few tokens the read did not count.
          { uriOf: (messageId) => messageUri(grant, messageId), reserve: THREAD_WRAPPING_TOKENS },
        ),
        fence,
      );
      return json(uri.href, { thread: rest, messages, ...(truncated ? { messages_truncated: truncated } : {}) });
    },
  );

  // The SDK's handler lists a template's resources in one page and drops the cursor: ours pages through the threads.
  if (grantId) {
    server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
      const cursor = request.params?.cursor;
      const page = (await executor(listThreads, {
        grant_id: grantId,
        limit: RESOURCES_PAGE_SIZE,
        ...(cursor ? { page_token: cursor } : {}),
      })) as {
        data: { id: string; subject?: string }[];
        next_cursor?: string | null;
      };
      return {
        resources: page.data.map((thread) => ({
          uri: threadUri(grantId, thread.id),
          name: thread.subject || '(no subject)',
          title: 'Conversation',
          mimeType: 'application/json',
        })),
        ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
      };
    });
  }

  server.registerResource(
    'mailbox',
    new ResourceTemplate('agentpost://grants/{grant_id}/mailbox', { list: undefined }),
    {
      title: 'Mailbox',
      description: `A mailbox at a glance: its folders with unread and total counts, and its ${MAILBOX_THREADS} newest threads; subscribe to hear of new mail`,
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const grant = variable(variables.grant_id);
      const fence = newFence(random);
      const [folders, threads] = await Promise.all([
        executor(listFolders, { grant_id: grant, limit: MAILBOX_FOLDERS }) as Promise<{
          data: { id: string; name: string; unread_count?: number; total_count?: number }[];
          next_cursor?: string | null;
        }>,
        // As list_threads reads them for an agent, within the budget (max_tokens in the URI's query).
        readForAgent(
          executor,
          listThreads,
          { grant_id: grant, limit: MAILBOX_THREADS },
          { ...(grantId ? {} : { grant_id: grant }), limit: MAILBOX_THREADS, ...readOptions(uri) },
        ),
      ]);
      return json(uri.href, {
        grant_id: grant,
        folders: folders.data.map(({ id, name, unread_count, total_count }) => ({
          id,
          name,
          unread_count,
          total_count,
        })),
        ...(folders.next_cursor ? { folders_truncated: 'list_folders lists the rest' } : {}),
        newest_threads: fenceFields(threads, fence),
      });
    },
  );

  server.registerResource(
    'message',
    new ResourceTemplate('agentpost://grants/{grant_id}/messages/{message_id}', {
      list: undefined,
    }),
    {
      title: 'Message',
      description: 'One mail message with its body (as text and HTML, each within a budget) and attachment metadata',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const input = { grant_id: variable(variables.grant_id), message_id: variable(variables.message_id) };
      // As get_message reads it, with the HTML too: within the token budget, a long body cut saying so.
      const fence = newFence(random);
      const read = await readForAgent(executor, getMessage, input, {
        ...input,
        include_html: true,
        ...readOptions(uri),
      });
      return json(uri.href, fenceFields(read, fence));
    },
  );
}
