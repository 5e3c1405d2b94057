/**
 * The reviewers' confirmation page of a held send (docs/oversight.md, "The approval queue"), outside `/v3` and
 * without an API key: the signed link a reviewer was mailed is the authority.
 * - `GET /approvals/review?token=…`: the held message and, while it is pending, a form to approve or reject it.
 *   A GET never decides (mail scanners and link previews open links).
 * - `POST /approvals/review` (form: `token`, `decision` = approve|reject, `reason`): decides, as the reviewer the
 *   link names, through the same approval queue as `/v3/approvals`.
 * A link this service did not sign is a 404 page. The pages load nothing (strict Content-Security-Policy, no script).
 */
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, httpErrorOf } from '../../src/index.js';
import { peerAddress } from '../middleware/rate-limit.js';
import type { Approval } from '../../src/schemas/oversight.js';
import type { AppEnv } from '../types.js';

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)}</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;background:#f5f5f5;padding:1rem;border-radius:4px}dt{font-weight:600}button{font-size:1rem;margin-right:.5rem}</style></head><body>${body}</body></html>`;
}

/** The body as a reviewer reads it: text (HTML tags dropped), never rendered. */
function bodyText(approval: Approval): string {
  return approval.is_plaintext ? approval.body : approval.body.replace(/<[^>]*>/g, ' ').replace(/[ \t]+/g, ' ');
}

function describe(approval: Approval, reviewer: string, token: string): string {
  const addresses = (list: { email: string }[]) => escape(list.map((entry) => entry.email).join(', ') || '-');
  const details = `<dl><dt>From</dt><dd>${addresses(approval.from)}</dd><dt>To</dt><dd>${addresses(approval.to)}</dd><dt>Cc</dt><dd>${addresses(approval.cc)}</dd><dt>Bcc</dt><dd>${addresses(approval.bcc)}</dd><dt>Subject</dt><dd>${escape(approval.subject)}</dd><dt>Attachments</dt><dd>${escape(approval.attachments.map((file) => `${file.filename} (${file.content_type}, ${file.size} bytes)`).join(', ') || '-')}</dd><dt>Why it waits</dt><dd>${escape(approval.checks.map((check) => check.reason).join(' '))}</dd><dt>SHA-256</dt><dd><code>${escape(approval.sha256)}</code></dd></dl><pre>${escape(bodyText(approval))}</pre>`;
  const form =
    approval.status === 'pending'
      ? `<form method="post" action="/approvals/review"><input type="hidden" name="token" value="${escape(token)}"><p><label>Reason (optional)<br><input name="reason" maxlength="2000" size="60"></label></p><button name="decision" value="approve">Approve and send</button><button name="decision" value="reject">Reject</button></form>`
      : `<p>This send is <strong>${escape(approval.status)}</strong>; nothing more can be decided here.</p>`;
  return page(
    `Approval: ${approval.subject}`,
    `<h1>A send waits for approval</h1><p>Reviewer: ${escape(reviewer)}</p>${details}${form}`,
  );
}

const notValid = (c: Context<AppEnv>) =>
  c.body(page('Not found', '<h1>This review link is not valid</h1>'), 404, PAGE_HEADERS);

/** Mounts the confirmation page on the app (before `/v3`, without authentication). */
export function mountApprovalReview(app: Hono<AppEnv>): void {
  app.get('/approvals/review', async (c) => {
    const token = c.req.query('token') ?? '';
    const found =
      token.length > 0 && token.length <= 2048
        ? await c.get('core').oversight.approvals.byReviewToken(token)
        : undefined;
    if (!found) return notValid(c);
    return c.body(describe(found.approval, found.reviewer, token), 200, PAGE_HEADERS);
  });
  app.post(
    '/approvals/review',
    bodyLimit({
      maxSize: 16 * 1024,
      onError: () => {
        throw new AppError('payload_too_large', 'The form is larger than 16 KB.');
      },
    }),
    async (c) => {
      const form = await c.req.parseBody();
      const token = typeof form.token === 'string' ? form.token : '';
      const decision = form.decision === 'approve' || form.decision === 'reject' ? form.decision : undefined;
      const reason =
        typeof form.reason === 'string' && form.reason.trim() ? form.reason.trim().slice(0, 2000) : undefined;
      const approvals = c.get('core').oversight.approvals;
      const found = token.length > 0 && token.length <= 2048 ? await approvals.byReviewToken(token) : undefined;
      if (!found) return notValid(c);
      if (!decision) return c.body(describe(found.approval, found.reviewer, token), 400, PAGE_HEADERS);
      const log = (status: number, errorType?: string) =>
        c.get('core').accessLog.record({
          principal: { applicationId: found.applicationId, via: 'local' },
          face: 'review-link',
          operation: decision === 'approve' ? 'approve_approval' : 'reject_approval',
          grantId: found.approval.grant_id,
          objectIds: { approval_id: found.approval.id },
          status,
          errorType,
          address: peerAddress(c),
          requestId: c.get('requestId'),
        });
      try {
        const decided = await approvals.decideByReviewToken(token, decision, reason);
        log(200);
        return c.body(
          page(
            'Decided',
            `<h1>${decided.status === 'rejected' ? 'Rejected' : decided.status === 'sent' ? 'Approved and sent' : `Approved: ${escape(decided.status)}`}</h1>${decided.error ? `<p>${escape(decided.error)}</p>` : ''}`,
          ),
          200,
          PAGE_HEADERS,
        );
      } catch (error) {
        const failed = httpErrorOf(error);
        log(failed.status, failed.type);
        if (error instanceof AppError && error.code === 'conflict')
          return c.body(
            page('Already decided', `<h1>Already decided</h1><p>${escape(error.message)}</p>`),
            409,
            PAGE_HEADERS,
          );
        throw error;
      }
    },
  );
}
