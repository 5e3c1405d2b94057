/**
 * Oversight (extension, not in Nylas; issue 37, docs/oversight.md): the approval queue of sends that wait for a
 * person, and the review list of sends made under `monitored`. A key with `approvals.decide` alone reads and decides
 * them within its scope; a send is never decided by the key that asked. HTTP only: no agent tool approves sends.
 */
import { z } from 'zod';
import {
  ApprovalRefInputSchema,
  ApprovalSchema,
  DecideApprovalInputSchema,
  ListApprovalsInputSchema,
  ListSendReviewsInputSchema,
  MarkSendReviewInputSchema,
  SendReviewSchema,
} from '../schemas/oversight.js';
import { defineOperation } from './define-operation.js';

const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item).describe('Newest first'),
    next_cursor: z.string().optional().describe('Pass as page_token for the next page'),
  });

export const listApprovals = defineOperation({
  name: 'list_approvals',
  title: 'List sends waiting for approval',
  description:
    'Lists held sends, newest first: pending, approved, rejected, expired (and sent or failed once approved). Filters: grant_id, status; limit up to 200, then page_token = next_cursor.',
  input: ListApprovalsInputSchema,
  output: page(ApprovalSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/approvals', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.approvals.list(principal, input),
});

export const getApproval = defineOperation({
  name: 'get_approval',
  title: 'Read a held send',
  description:
    'One held send with what a reviewer needs: the message as it will leave, recipients, attachments, its SHA-256 and the headers set again when it leaves, the checks that held it and their trust reasons.',
  input: ApprovalRefInputSchema,
  output: ApprovalSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/approvals/:approval_id', envelope: 'data' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.approvals.find(principal, input.approval_id),
});

export const approveApproval = defineOperation({
  name: 'approve_approval',
  title: 'Approve a held send',
  description:
    'Approves a pending send: the exact message held leaves at once (dated again and signed). Needs approvals.decide and a key other than the one that asked.',
  input: DecideApprovalInputSchema,
  output: ApprovalSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/approvals/:approval_id/approve', envelope: 'data' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.approvals.decide(principal, input, 'approve'),
});

export const rejectApproval = defineOperation({
  name: 'reject_approval',
  title: 'Reject a held send',
  description: 'Rejects a pending send: nothing is sent and the held message is dropped. Needs approvals.decide.',
  input: DecideApprovalInputSchema,
  output: ApprovalSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'POST', path: '/approvals/:approval_id/reject', envelope: 'data' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.approvals.decide(principal, input, 'reject'),
});

export const listSendReviews = defineOperation({
  name: 'list_send_reviews',
  title: 'List sends to review',
  description:
    'Sends made by grants in monitored mode, listed for review after they left, newest first. Filters: grant_id, status (unreviewed, ok, flagged).',
  input: ListSendReviewsInputSchema,
  output: page(SendReviewSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/send-reviews', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.reviews.list(principal, input),
});

export const markSendReview = defineOperation({
  name: 'mark_send_review',
  title: 'Mark a reviewed send',
  description: 'Marks a monitored send ok or flagged, with an optional note.',
  input: MarkSendReviewInputSchema,
  output: SendReviewSchema,
  hints: { readOnly: false },
  http: { method: 'PUT', path: '/send-reviews/:review_id', envelope: 'data' },
  tool: false,
  run: (core, input, { principal }) => core.oversight.reviews.mark(principal, input),
});
