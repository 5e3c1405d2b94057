/**
 * @module server/dashboard/pages/message
 * The mailbox viewer's message: its participants, its `trust` verdicts, its attachments (downloaded through this
 * page's own route, which runs `get_attachment` as the signed-in key: the /v3 download route takes a key, not the
 * dashboard's cookie), its raw header section, and its HTML body sanitized (./sanitize-html.ts) inside an
 * `<iframe sandbox="">` whose document (this page's `/body` route, answered under its own policy: a srcdoc would
 * inherit the dashboard's, which refuses the message's inline styles) forbids every remote load, so no script runs and
 * nothing remote is fetched.
 */
import { html } from 'hono/html';
import type { AttachmentWithContent, Message } from '../../../src/schemas/messages.js';
import type { Trust } from '../../../src/schemas/trust.js';
import type { DashboardRequest } from '../contracts.js';
import { facts, guarded, people, runOne, seg, table, timeOf, type Fragment, type MorePage } from './kit.js';
import { mailboxHref, messageHref, threadHref } from './mail.js';
import { sanitizeHtml, VIEWER_CSP, viewerDocument } from './sanitize-html.js';

/** Most bytes of an attachment the dashboard serves (get_attachment's own maximum, 5 MB). */
const MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024;
/** Most bytes of a fallback `data:` link, for a frame that does not serve `download` answers. */
const MAX_FALLBACK_LINK_BYTES = 256 * 1024;
/** Most characters of a raw header section shown (a header section past this is cut, and says so). */
const MAX_HEADER_CHARS = 256 * 1024;

/** One verdict as a row: its name, its value, and whether it is a warning. */
function verdictRow(name: string, value: string, warn: boolean): Fragment {
  return html`<tr class="${warn ? 'warn' : 'ok'}">
    <th scope="row">${name}</th>
    <td>${value}</td>
    <td>${warn ? 'Warning' : 'OK'}</td>
  </tr>`;
}

/** The `trust` block as a table of verdicts, warnings first in the reader's eye (class `warn`). */
export function trustTable(trust: Trust | undefined): Fragment {
  if (!trust) return html`<p class="empty">No trust verdicts for this message (sent mail has none).</p>`;
  const auth = (result: string) => result !== 'pass' && result !== 'none';
  const rows = [
    verdictRow('SPF', trust.spf, auth(trust.spf)),
    verdictRow('DKIM', trust.dkim, auth(trust.dkim)),
    verdictRow('DMARC', trust.dmarc, trust.dmarc === 'fail' || auth(trust.dmarc)),
    verdictRow(
      'Display name spoof',
      trust.display_name_spoof.detected
        ? `${trust.display_name_spoof.reason ?? 'detected'}${trust.display_name_spoof.imitates ? ` (imitates ${trust.display_name_spoof.imitates})` : ''}`
        : 'none',
      trust.display_name_spoof.detected,
    ),
    verdictRow(
      'Lookalike domain',
      trust.lookalike_domain.detected
        ? `${trust.lookalike_domain.domain ?? ''} resembles ${trust.lookalike_domain.resembles ?? ''}`
        : 'none',
      trust.lookalike_domain.detected,
    ),
    verdictRow(
      'Forged thread',
      trust.forged_thread.detected
        ? `${trust.forged_thread.unknown} of ${trust.forged_thread.referenced} referenced ids unknown`
        : 'none',
      trust.forged_thread.detected,
    ),
    verdictRow(
      'Link mismatch',
      trust.link_mismatch.count === 0
        ? 'none'
        : `${trust.link_mismatch.count}: ${trust.link_mismatch.examples.map((example) => `"${example.text}" shows ${example.text_domain}, opens ${example.href_domain}`).join('; ')}`,
      trust.link_mismatch.count > 0,
    ),
    verdictRow('Hidden text removed', `${trust.hidden_text_removed} characters`, trust.hidden_text_removed > 0),
    verdictRow(
      'Injection score',
      `${trust.injection.score}${trust.injection.reasons.length > 0 ? `: ${trust.injection.reasons.map((reason) => reason.code).join(', ')}` : ''}`,
      trust.injection.score >= 0.5,
    ),
  ];
  return table('Trust verdicts', ['Check', 'Verdict', ''], rows, '');
}

/** The body in the sandboxed frame (its document from `src`), with what the sanitizer removed said beside it. */
export function bodyFrame(body: string | undefined, src: string): Fragment {
  if (!body) return html`<p class="empty">No body.</p>`;
  const clean = sanitizeHtml(body);
  const notes = [
    clean.remoteImages > 0 ? `${clean.remoteImages} remote image(s) blocked` : '',
    clean.removed > 0 ? `${clean.removed} script(s), frame(s) or event handler(s) removed` : '',
    clean.truncated ? 'the body was cut for display' : '',
  ].filter(Boolean);
  return html`${notes.length > 0 ? html`<p class="note">${notes.join('; ')}.</p>` : html``}
    <iframe class="message-body" title="Message body" sandbox="" referrerpolicy="no-referrer" src="${src}"></iframe>`;
}

/** The link that downloads an attachment through the dashboard. */
const attachmentHref = (request: DashboardRequest, grantId: string, messageId: string, attachmentId: string) =>
  `${messageHref(request, grantId, messageId)}/attachments/${seg(attachmentId)}`;

/** The message the page's path names, read with `get_message` as the signed-in key (`extra`: more of its input). */
function messageOf(request: DashboardRequest, extra: Record<string, string> = {}): Promise<Message> {
  return runOne<Message>(request, 'get_message', {
    grant_id: request.params.grant_id!,
    message_id: request.params.message_id!,
    ...extra,
  });
}

/** `/mail/:grant_id/messages/:message_id`: one message. */
const message: MorePage = {
  path: '/mail/:grant_id/messages/:message_id',
  async get(request) {
    const found = await messageOf(request);
    const here = messageHref(request, found.grant_id, found.id);
    const attachments = (found.attachments ?? []).map(
      (attachment) =>
        html`<tr>
          <td>
            <a href="${attachmentHref(request, found.grant_id, found.id, attachment.id)}" download
              >${attachment.filename || '(unnamed)'}</a
            >
          </td>
          <td>${attachment.content_type}</td>
          <td>${attachment.size}</td>
          <td>${attachment.is_inline ? 'inline' : 'attachment'}</td>
        </tr>`,
    );
    const back = found.thread_id
      ? html`<a href="${threadHref(request, found.grant_id, found.thread_id)}">Back to the thread</a>`
      : html`<a href="${mailboxHref(request, found.grant_id)}">Back to the mailbox</a>`;
    return {
      title: found.subject || 'Message',
      body: html`<p>${back}</p>
        ${facts([
          ['From', people(found.from)],
          ['To', people(found.to)],
          ['Cc', people(found.cc)],
          ['Reply-To', people(found.reply_to)],
          ['Date', found.date === undefined ? undefined : timeOf(found.date)],
          ['Spam', found.spam ? JSON.stringify(found.spam) : undefined],
          ['Automated', found.automated ? JSON.stringify(found.automated) : undefined],
        ])}
        <h2>Trust</h2>
        ${trustTable(found.trust)}
        <h2>Attachments</h2>
        ${table('Attachments', ['File', 'Type', 'Bytes', 'Kind'], attachments, 'No attachments.')}
        <p><a href="${here}/raw-headers">Raw headers</a></p>
        <h2>Body</h2>
        ${bodyFrame(found.body, `${here}/body`)}`,
    };
  },
};

/** The header section of a raw message: everything before the first empty line, cut at {@link MAX_HEADER_CHARS}. */
export function headerSection(raw: Buffer): { text: string; cut: boolean } {
  const head = raw.subarray(0, MAX_HEADER_CHARS + 4).toString('latin1');
  const crlf = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  const end = [crlf, lf].filter((index) => index >= 0).sort((a, b) => a - b)[0];
  if (end !== undefined && end <= MAX_HEADER_CHARS) return { text: head.slice(0, end), cut: false };
  return { text: head.slice(0, MAX_HEADER_CHARS), cut: head.length > MAX_HEADER_CHARS || end === undefined };
}

/** `/mail/:grant_id/messages/:message_id/raw-headers`: the header section as received. */
const rawHeaders: MorePage = {
  path: '/mail/:grant_id/messages/:message_id/raw-headers',
  async get(request) {
    const found = await messageOf(request, { fields: 'raw_mime' });
    const { text, cut } = headerSection(Buffer.from(found.raw_mime ?? '', 'base64url'));
    return {
      title: 'Raw headers',
      body: html`<p><a href="${messageHref(request, found.grant_id, found.id)}">Back to the message</a></p>
        <pre class="raw">${text}</pre>
        ${cut ? html`<p class="note">The header section was cut for display.</p>` : html``}`,
    };
  },
};

/** `/mail/:grant_id/messages/:message_id/attachments/:attachment_id`: the file, as a download. */
const attachment: MorePage = {
  path: '/mail/:grant_id/messages/:message_id/attachments/:attachment_id',
  async get(request) {
    const file = await runOne<AttachmentWithContent>(request, 'get_attachment', {
      grant_id: request.params.grant_id!,
      message_id: request.params.message_id!,
      attachment_id: request.params.attachment_id!,
      max_bytes: MAX_DOWNLOAD_BYTES,
    });
    const back = messageHref(request, request.params.grant_id!, request.params.message_id!);
    if (file.content.truncated)
      return {
        title: 'Attachment too large',
        status: 413,
        body: html`<p role="alert">
            ${file.filename} is larger than ${MAX_DOWNLOAD_BYTES} bytes, the most the dashboard serves; download it with
            an API key from /v3/grants/{grant_id}/attachments/{attachment_id}/download.
          </p>
          <p><a href="${back}">Back to the message</a></p>`,
      };
    const bytes = Buffer.from(file.content.data, file.content.encoding === 'base64' ? 'base64' : 'utf8');
    const filename = file.filename || 'attachment';
    const fallback =
      bytes.length <= MAX_FALLBACK_LINK_BYTES
        ? html`<a download="${filename}" href="data:application/octet-stream;base64,${bytes.toString('base64')}"
            >Save ${filename}</a
          >`
        : html`The file is ready but this dashboard cannot hand it over here.`;
    return {
      title: filename,
      body: html`<p>${fallback}</p>
        <p><a href="${back}">Back to the message</a></p>`,
      download: { filename, contentType: file.content_type, bytes: new Uint8Array(bytes) },
    };
  },
};

/** `/mail/:grant_id/messages/:message_id/body`: the sanitized body, the document of the viewer's sandboxed frame. */
const body: MorePage = {
  path: '/mail/:grant_id/messages/:message_id/body',
  async get(request) {
    const found = await messageOf(request);
    return {
      title: 'Message body',
      body: html``,
      frameDocument: { html: viewerDocument(sanitizeHtml(found.body ?? '').html), csp: VIEWER_CSP },
    };
  },
};

/** A message, its body, its raw headers, its attachments. */
export const MESSAGE_PAGES: readonly MorePage[] = [message, body, rawHeaders, attachment].map(guarded);
