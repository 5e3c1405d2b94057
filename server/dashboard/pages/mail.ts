/**
 * @module server/dashboard/pages/mail
 * The mailbox viewer's lists: the mailboxes the key reaches, a mailbox's folders and threads (paged by page_token),
 * and a thread's messages. The message itself, its attachments and raw headers are in ./message.ts. Every read is an
 * operation run as the signed-in key, so a grant-scoped key sees only its grant (others answer 404).
 */
import { html } from 'hono/html';
import type { Folder } from '../../../src/schemas/folders.js';
import type { Grant } from '../../../src/schemas/grants.js';
import type { Message } from '../../../src/schemas/messages.js';
import type { Thread } from '../../../src/schemas/threads.js';
import type { DashboardRequest } from '../contracts.js';
import {
  afterPost,
  csrfField,
  field,
  guarded,
  hrefOf,
  intParam,
  pager,
  pageToken,
  people,
  runOne,
  runPage,
  seg,
  table,
  timeOf,
  type MorePage,
} from './kit.js';

/** Mailboxes on one page of the mailbox list. */
const GRANTS_PER_PAGE = 25;
/** Threads and messages on one page. */
const PER_PAGE = 25;

/** The link to a mailbox, a thread and a message. */
export const mailboxHref = (request: DashboardRequest, grantId: string) => `${request.base}/mail/${seg(grantId)}`;
export const threadHref = (request: DashboardRequest, grantId: string, threadId: string) =>
  `${mailboxHref(request, grantId)}/threads/${seg(threadId)}`;
export const messageHref = (request: DashboardRequest, grantId: string, messageId: string) =>
  `${mailboxHref(request, grantId)}/messages/${seg(messageId)}`;

/** `/mail`: the mailboxes this key reaches (offset paging, as list_grants pages). */
const mailboxes: MorePage = {
  path: '/mail',
  nav: { label: 'Mail', order: 30 },
  async get(request) {
    const offset = intParam(request, 'offset', 0, 0, 1_000_000);
    const page = await runOne<{ data: Grant[] }>(request, 'list_grants', { limit: GRANTS_PER_PAGE + 1, offset });
    const grants = page.data.slice(0, GRANTS_PER_PAGE);
    const rows = grants.map(
      (grant) =>
        html`<tr>
          <td><a href="${mailboxHref(request, grant.id)}">${grant.email}</a></td>
          <td>${grant.name ?? ''}</td>
          <td>${grant.provider}</td>
          <td>${grant.grant_status}</td>
        </tr>`,
    );
    const path = `${request.base}/mail`;
    const previous =
      offset > 0
        ? html`<a href="${hrefOf(path, { offset: String(Math.max(0, offset - GRANTS_PER_PAGE)) })}" rel="prev"
            >Previous page</a
          >`
        : html``;
    const next =
      page.data.length > GRANTS_PER_PAGE
        ? html`<a href="${hrefOf(path, { offset: String(offset + GRANTS_PER_PAGE) })}" rel="next">Next page</a>`
        : html``;
    return {
      title: 'Mail',
      body: html`${table('Mailboxes', ['Address', 'Name', 'Provider', 'Status'], rows, 'No mailbox this key can read.')}
        <nav class="pager" aria-label="Pages">${previous} ${next}</nav>`,
    };
  },
};

/** The folder list of a mailbox, each a link that filters the threads; the current one marked. */
function folderNav(
  request: DashboardRequest,
  grantId: string,
  folders: readonly Folder[],
  current: string | undefined,
) {
  const here = mailboxHref(request, grantId);
  const item = (label: string, id: string | undefined) =>
    html`<li>
      <a href="${hrefOf(here, { folder: id })}" ${id === current ? html`aria-current="page"` : html``}>${label}</a>
    </li>`;
  return html`<nav aria-label="Folders">
    <ul class="folders">
      ${item('All mail', undefined)} ${folders.map((folder) => item(folder.name, folder.id))}
    </ul>
  </nav>`;
}

/** The form that sends a plain-text test message from this mailbox (send_message, as the signed-in key). */
function sendForm(request: DashboardRequest, grantId: string) {
  return html`<form method="post" action="${mailboxHref(request, grantId)}" class="create">
    <h2>Send a test message</h2>
    <p>
      A first send is safest to another mailbox of this service (delivered locally at once): a send to an address that
      does not exist bounces and suppresses it.
    </p>
    ${csrfField(request)}
    <p>
      <label for="send-to">To</label>
      <input id="send-to" name="to" type="email" required maxlength="320" />
    </p>
    <p>
      <label for="send-subject">Subject</label>
      <input id="send-subject" name="subject" maxlength="998" value="A test message" />
    </p>
    <p>
      <label for="send-body">Message (plain text)</label>
      <textarea id="send-body" name="body" rows="4" maxlength="10000"></textarea>
    </p>
    <button type="submit">Send</button>
  </form>`;
}

/** `/mail/:grant_id`: a mailbox's folders and its threads, newest first, in a folder when one is chosen. */
const mailbox: MorePage = {
  path: '/mail/:grant_id',
  async get(request) {
    const grantId = request.params.grant_id!;
    const grant = await runOne<Grant>(request, 'get_grant', { grant_id: grantId });
    const folders = await runPage<Folder>(request, 'list_folders', { grant_id: grant.id, limit: 200 });
    const folder = request.query.get('folder') ?? undefined;
    const threads = await runPage<Thread>(request, 'list_threads', {
      grant_id: grant.id,
      limit: PER_PAGE,
      ...(folder ? { in: [folder] } : {}),
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = threads.data.map(
      (thread) =>
        html`<tr class="${thread.unread ? 'unread' : ''}">
          <td><a href="${threadHref(request, grant.id, thread.id)}">${thread.subject || '(no subject)'}</a></td>
          <td>${people(thread.participants)}</td>
          <td>${thread.message_ids?.length ?? 0}</td>
          <td>${timeOf(thread.latest_message_received_date ?? thread.latest_message_sent_date)}</td>
        </tr>`,
    );
    return {
      title: `Mail · ${grant.email}`,
      body: html`${folderNav(request, grant.id, folders.data, folder)}
      ${table('Threads', ['Subject', 'Participants', 'Messages', 'Latest'], rows, 'No threads here.')}
      ${pager(request, mailboxHref(request, grant.id), threads.next_cursor)} ${sendForm(request, grant.id)}`,
    };
  },
  async post(request) {
    const grantId = request.params.grant_id!;
    const to = field(request, 'to') ?? '';
    const subject = field(request, 'subject');
    return afterPost(mailboxHref(request, grantId), `Sent to ${to}.`, () =>
      request.run('send_message', {
        grant_id: grantId,
        to: [{ email: to }],
        ...(subject ? { subject } : {}),
        body: request.form?.body ?? '',
        is_plaintext: true,
      }),
    );
  },
};

/** `/mail/:grant_id/threads/:thread_id`: a thread and its messages, oldest first as the thread lists them. */
const thread: MorePage = {
  path: '/mail/:grant_id/threads/:thread_id',
  async get(request) {
    const grantId = request.params.grant_id!;
    const found = await runOne<Thread>(request, 'get_thread', {
      grant_id: grantId,
      thread_id: request.params.thread_id!,
    });
    const messages = await runPage<Message>(request, 'list_messages', {
      grant_id: grantId,
      thread_id: found.id,
      limit: PER_PAGE,
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = messages.data.map(
      (message) =>
        html`<tr>
          <td>
            <a href="${messageHref(request, found.grant_id, message.id)}">${message.subject || '(no subject)'}</a>
          </td>
          <td>${people(message.from)}</td>
          <td>${people(message.to)}</td>
          <td>${timeOf(message.date)}</td>
          <td>${message.snippet ?? ''}</td>
        </tr>`,
    );
    return {
      title: found.subject || 'Thread',
      body: html`<p><a href="${mailboxHref(request, found.grant_id)}">Back to the mailbox</a></p>
        ${table('Messages', ['Subject', 'From', 'To', 'Date', 'Snippet'], rows, 'No messages.')}
        ${pager(request, threadHref(request, found.grant_id, found.id), messages.next_cursor)}`,
    };
  },
};

/** The mailbox list, a mailbox, a thread. */
export const MAIL_LIST_PAGES: readonly MorePage[] = [mailboxes, mailbox, thread].map(guarded);
