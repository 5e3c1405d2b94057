/**
 * @module outbound/submission
 * Submitting a composed message: in ONE transaction store the sender's copy in `sent` (in its thread), queue every
 * recipient, collect the recipients as contacts and keep the Idempotency-Key answer; then deliver to the mailboxes
 * of this service at once (the others are the workers' job, outbound-queue.ts). Calendar invitations (the
 * {@link InvitationSender} of the event service) and the service's own emails (the {@link Notifier}) are
 * submitted the same way, without a sender's copy.
 *
 * The step is plain functions over a small state made here (./submission-state.ts): a send now
 * (./submission-accept.ts) and the messages with no sender's copy (./submission-detached.ts).
 */
import type { InvitationSender } from '../calendar/index.js';
import type { CoreDeps, Notifier } from '../ports/index.js';
import { oneLine, type ComposeInput } from './compose.js';
import type { AcceptOptions, Composition, DetachedSend, Submission } from './contracts.js';
import { accept } from './submission-accept.js';
import { plainMessage, sendDetached } from './submission-detached.js';
import type { SubmissionParts, SubmissionState } from './submission-state.js';

/** Creates the submission step: accept a composition now, and the detached senders (invitations, system mail). */
export function createSubmission(deps: CoreDeps, parts: SubmissionParts): Submission {
  const { db, clock, newId, config } = deps;
  const state: SubmissionState = { ...parts, db, clock, newId, config };

  /** iMIP invitations, updates, cancellations and replies of the event service. */
  const invitations: InvitationSender = {
    async send(invitation) {
      const from = invitation.from.name
        ? { name: oneLine(invitation.from.name), email: invitation.from.email }
        : { email: invitation.from.email };
      await sendDetached(state, {
        applicationId: invitation.applicationId,
        grantId: invitation.grantId,
        kind: 'invitation',
        envelopeFrom: invitation.from.email,
        input: plainMessage(state, {
          from,
          to: invitation.to.map((entry) =>
            entry.name ? { name: oneLine(entry.name), email: entry.email } : { email: entry.email },
          ),
          subject: invitation.subject,
          text: invitation.text,
          customHeaders: [],
          calendar: { method: invitation.method, ics: invitation.ics },
        }),
      });
    },
  };

  /** The service's own emails (webhook failure alerts), from `AGENTPOST_SYSTEM_FROM`. */
  const notifier: Notifier = {
    async send(email) {
      await sendDetached(state, {
        applicationId: null,
        grantId: null,
        kind: 'system',
        envelopeFrom: config.systemFrom,
        input: plainMessage(state, {
          from: { name: 'Agentpost', email: config.systemFrom },
          to: email.to.map((address) => ({ email: address })),
          subject: email.subject,
          text: email.text,
          customHeaders: [{ name: 'Auto-Submitted', value: 'auto-generated' }],
        }),
      });
    },
  };

  return {
    accept: (requested: Composition, options: AcceptOptions = {}) => accept(state, requested, options),
    sendDetached: (spec: DetachedSend) => sendDetached(state, spec),
    plainMessage: (
      fields: Pick<ComposeInput, 'from' | 'to' | 'subject' | 'customHeaders' | 'calendar'> & { text: string },
    ) => plainMessage(state, fields),
    invitations,
    notifier,
  };
}
