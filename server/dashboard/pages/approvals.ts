/**
 * The dashboard's approvals (docs/oversight.md, "The approval queue"): held sends by status, and one approval with
 * the message as it will leave (headers, the body as text, never rendered) and the forms to approve or reject it.
 */
import { html } from 'hono/html';
import type { DashboardPage, DashboardRequest, PageAnswer } from '../contracts.js';
import { csrfField, field, pager, table, time } from '../ui.js';

interface Approval {
  id: string;
  grant_id: string;
  status: string;
  kind: string;
  checks: { check: string; reason: string }[];
  sha256: string;
  subject: string;
  from: { email: string; name?: string }[];
  to: { email: string; name?: string }[];
  cc: { email: string; name?: string }[];
  bcc: { email: string; name?: string }[];
  body: string;
  is_plaintext: boolean;
  attachments: { filename: string; content_type: string; size: number }[];
  requested_by: { api_key_id: string | null; face: string | null; tool: string | null } | null;
  decided_by: { api_key_id: string | null; name: string | null } | null;
  decision_reason: string | null;
  error: string | null;
  expires_at: number;
  decided_at: number | null;
  created_at: number;
}

const STATUSES = ['pending', 'approved', 'rejected', 'expired', 'sent', 'failed'] as const;

const addresses = (list: { email: string; name?: string }[]) =>
  list.map((entry) => (entry.name ? `${entry.name} <${entry.email}>` : entry.email)).join(', ') || '-';

/** The body as a reviewer reads it: HTML tags dropped to text (never rendered), in a <pre>. */
const bodyText = (approval: Approval) =>
  approval.is_plaintext ? approval.body : approval.body.replace(/<[^>]*>/g, ' ').replace(/[ \t]+/g, ' ');

async function listApprovals(request: DashboardRequest): Promise<PageAnswer> {
  const status = request.query.get('status') ?? 'pending';
  const input: Record<string, unknown> = { limit: 50 };
  if (status !== 'all') input.status = status;
  const token = request.query.get('page_token');
  if (token) input.page_token = token;
  const page = (await request.run('list_approvals', input)) as { data: Approval[]; next_cursor?: string | null };
  const rows = page.data.map(
    (approval) =>
      html`<tr>
        <td><a href="${request.base}/approvals/${approval.id}">${approval.subject || '(no subject)'}</a></td>
        <td>${addresses(approval.to)}</td>
        <td>${approval.grant_id}</td>
        <td>${approval.status}</td>
        <td>${time(approval.created_at)}</td>
        <td>${time(approval.expires_at)}</td>
      </tr>`,
  );
  const choices = ['all', ...STATUSES].map(
    (choice) => html`<option value="${choice}" ${choice === status ? 'selected' : ''}>${choice}</option>`,
  );
  return {
    title: 'Approvals',
    body: html`<form method="get" action="${request.base}/approvals" class="stack">
        <label for="approval_status">Status</label>
        <select id="approval_status" name="status">
          ${choices}
        </select>
        <div><button type="submit">Show</button></div>
      </form>
      ${table('Held sends', ['Subject', 'To', 'Grant', 'Status', 'Held', 'Expires'], rows, 'No held sends.')}
      ${pager(request, '/approvals', page.next_cursor)}`,
  };
}

async function showApproval(request: DashboardRequest): Promise<PageAnswer> {
  const approval = (await request.run('get_approval', { approval_id: request.params.id })) as Approval;
  const decide =
    approval.status === 'pending'
      ? html`<h2>Decide</h2>
          <form method="post" action="${request.base}/approvals/${approval.id}" class="stack">
            ${csrfField(request)}
            <label for="reason">Reason (optional, kept with the decision)</label>
            <input id="reason" name="reason" type="text" maxlength="2000" />
            <div>
              <button type="submit" name="decision" value="approve">Approve and send</button>
              <button type="submit" name="decision" value="reject" class="danger">Reject</button>
            </div>
          </form>`
      : html`<p>
          This send is <strong>${approval.status}</strong>${
            approval.decided_by?.name ? ` (decided by ${approval.decided_by.name})` : ''
          }${approval.decision_reason ? `: ${approval.decision_reason}` : ''}.
          ${approval.error ?? ''}
        </p>`;
  return {
    title: `Approval: ${approval.subject || '(no subject)'}`,
    body: html`<dl>
        <dt>Grant</dt>
        <dd>${approval.grant_id}</dd>
        <dt>From</dt>
        <dd>${addresses(approval.from)}</dd>
        <dt>To</dt>
        <dd>${addresses(approval.to)}</dd>
        <dt>Cc</dt>
        <dd>${addresses(approval.cc)}</dd>
        <dt>Bcc</dt>
        <dd>${addresses(approval.bcc)}</dd>
        <dt>Subject</dt>
        <dd>${approval.subject}</dd>
        <dt>Attachments</dt>
        <dd>
          ${
            approval.attachments
              .map((file) => `${file.filename} (${file.content_type}, ${file.size} bytes)`)
              .join(', ') || '-'
          }
        </dd>
        <dt>Why it waits</dt>
        <dd>${approval.checks.map((check) => `${check.check}: ${check.reason}`).join(' ')}</dd>
        <dt>Requested by</dt>
        <dd>
          ${approval.requested_by?.face ?? '-'}${approval.requested_by?.tool ? ` (${approval.requested_by.tool})` : ''}
        </dd>
        <dt>Held</dt>
        <dd>${time(approval.created_at)}, expires ${time(approval.expires_at)}</dd>
        <dt>SHA-256 of what leaves</dt>
        <dd><code>${approval.sha256}</code></dd>
      </dl>
      <h2>The message as it will leave</h2>
      <pre>${bodyText(approval)}</pre>
      ${decide}
      <p><a href="${request.base}/approvals">All approvals</a></p>`,
  };
}

async function decideApproval(request: DashboardRequest): Promise<PageAnswer> {
  const decision = field(request, 'decision');
  if (decision !== 'approve' && decision !== 'reject')
    return { redirect: `${request.base}/approvals/${request.params.id}`, notice: 'Choose approve or reject.' };
  const reason = field(request, 'reason');
  const decided = (await request.run(decision === 'approve' ? 'approve_approval' : 'reject_approval', {
    approval_id: request.params.id,
    ...(reason ? { reason } : {}),
  })) as Approval;
  return {
    redirect: `${request.base}/approvals/${decided.id}`,
    notice: decided.status === 'rejected' ? 'Rejected.' : `Approved: ${decided.status}.`,
  };
}

/** The approvals list (`/approvals`) and one approval (`/approvals/:id`). */
export const approvalPages: DashboardPage[] = [
  { path: '/approvals', nav: { label: 'Approvals', order: 15 }, get: listApprovals },
  { path: '/approvals/:id', get: showApproval, post: decideApproval },
];
