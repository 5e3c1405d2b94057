/**
 * @module oversight/review-links
 * The reviewers' mail (issue 37, item 2): when a send is held and its policy names `reviewers`, each gets a system
 * email with a link of their own, signed by the installation's key, to a confirmation page (`/approvals/review`). The
 * page shows the held message; only its form's POST decides, a GET never does. A link decides once: after any
 * decision the approval is no longer pending. The link names the approval and the reviewer, nothing else.
 */
import type { Notifier } from '../ports/index.js';
import type { TokenSigner } from '../deliverability/contracts.js';
import type { ApprovalRow } from './contracts.js';

/** The purpose the review tokens are signed for (a tracking or VERP token is not one). */
export const REVIEW_PURPOSE = 'approval-review';

/** The path of the confirmation page. */
export const REVIEW_PATH = '/approvals/review';

/** The approval and reviewer a review token names, or undefined for a token this installation did not sign. */
export function readReviewToken(
  signer: TokenSigner,
  token: string,
): { approvalId: string; reviewer: string } | undefined {
  const payload = signer.verify(REVIEW_PURPOSE, token);
  if (payload === undefined) return undefined;
  const space = payload.indexOf(' ');
  if (space <= 0) return undefined;
  return { approvalId: payload.slice(0, space), reviewer: payload.slice(space + 1) };
}

/** Mails each reviewer a link to decide the held send `row`. */
export async function mailReviewers(
  parts: { signer: () => Promise<TokenSigner>; notifier: Notifier; publicUrl: string },
  row: ApprovalRow,
  reviewers: readonly string[],
): Promise<void> {
  const signer = await parts.signer();
  for (const reviewer of reviewers) {
    const token = signer.sign(REVIEW_PURPOSE, `${row.id} ${reviewer.toLowerCase()}`);
    const link = `${parts.publicUrl}${REVIEW_PATH}?token=${token}`;
    await parts.notifier.send({
      to: [reviewer],
      subject: `Approval needed: ${row.subject || '(no subject)'}`.slice(0, 200),
      text: [
        `A send of ${row.composition.from.email} waits for approval.`,
        '',
        `To: ${row.recipients.join(', ')}`,
        `Subject: ${row.subject}`,
        `Why it waits: ${row.checks.map((check) => check.reason).join(' ')}`,
        '',
        `Open it to approve or reject (the page asks you to confirm; opening it decides nothing):`,
        link,
        '',
        `It expires at ${new Date(row.expiresAt * 1000).toISOString()}.`,
      ].join('\n'),
    });
  }
}
