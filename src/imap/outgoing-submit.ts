/**
 * @module imap/outgoing-submit
 * Sending through a connected account's SMTP server (./outgoing.ts): one submission attempt, its answer per
 * recipient.
 */
import type { AttemptResult } from '../outbound/contracts.js';
import type { PendingRecipient } from '../providers/contracts.js';
import { SubmissionError } from './connection.js';
import { accountOf, endpoints } from './outgoing-imap.js';
import type { OutgoingState } from './outgoing-state.js';

/** One submission attempt through the account's SMTP server. */
export async function submit(
  state: OutgoingState,
  outbound: { grantId: string | null; envelopeFrom: string },
  pending: PendingRecipient[],
  raw: Buffer,
): Promise<AttemptResult[]> {
  const emails = pending.map((recipient) => recipient.email);
  const all = (
    outcome: AttemptResult['outcome'],
    code: number,
    response: string,
    cause?: AttemptResult['cause'],
  ): AttemptResult[] =>
    emails.map((email) => ({ email, outcome, code, response: response.slice(0, 1000), ...(cause ? { cause } : {}) }));
  const account = outbound.grantId ? await accountOf(state, outbound.grantId) : undefined;
  if (!account) return all('failed', 550, '5.3.0 the connected account of this grant no longer exists', 'account');
  let smtp;
  try {
    smtp = endpoints(state, account).smtp;
  } catch (error) {
    return all('deferred', 451, `4.3.0 ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    const result = await state.connector.submit(smtp, { from: outbound.envelopeFrom, to: emails }, raw);
    const accepted = new Set(result.accepted);
    const rejected = new Map(result.rejected.map((entry) => [entry.recipient, entry]));
    return emails.map((email) => {
      if (accepted.has(email))
        return { email, outcome: 'delivered', code: 250, response: result.response.slice(0, 1000) };
      const rejection = rejected.get(email);
      const code = rejection?.code ?? 0;
      return {
        email,
        outcome: code >= 500 ? 'failed' : 'deferred',
        code,
        response: (rejection?.response ?? 'not accepted by the server').slice(0, 1000),
      };
    });
  } catch (error) {
    if (!(error instanceof SubmissionError)) throw error;
    const { failure, code } = error;
    // A refused login or certificate is the account's trouble, not the recipients': the send fails, no bounce is recorded.
    if (failure.kind === 'auth' || failure.kind === 'tls')
      return all('failed', code ?? 535, failure.message, 'account');
    if (error.rejected.length > 0) {
      const rejected = new Map(error.rejected.map((entry) => [entry.recipient, entry]));
      return emails.map((email) => {
        const rejection = rejected.get(email);
        const reply = rejection?.code ?? code ?? 0;
        return {
          email,
          outcome: reply >= 500 ? 'failed' : 'deferred',
          code: reply,
          response: (rejection?.response ?? failure.message).slice(0, 1000),
        };
      });
    }
    if (code !== undefined && code >= 500) return all('failed', code, failure.message);
    return all('deferred', code ?? 0, failure.message);
  }
}
