/**
 * @module outbound/submission-state
 * What the parts of the submission step (./submission.ts) share: the parts it is made with, the state
 * `createSubmission` makes of them, and what the outbound stage and deliverability's gates look at in a message.
 */
import type { CoreDeps } from '../ports/index.js';
import type { ContactService } from '../contacts/contracts.js';
import type { MailStore } from '../messages/index.js';
import type { SendGates, SigningKeys } from '../deliverability/index.js';
import type {
  Composer,
  Composition,
  IdempotencyStore,
  OutboundQueue,
  OutboundStage,
  SendCandidate,
} from './contracts.js';

/** Parts a submission uses. */
export interface SubmissionParts {
  store: MailStore;
  contacts: ContactService;
  queue: OutboundQueue;
  idempotency: IdempotencyStore;
  composer: Pick<Composer, 'build' | 'signedMime'>;
  /** The outbound stage (rules, quota, size), run before anything is stored or queued. */
  stage: OutboundStage;
  /** Deliverability's checks (suppression, paused sending, warm-up) and counters, run in the send's transaction. */
  gates: SendGates;
  /** The installation's signing key: tracked sends carry signed pixel and link URLs. */
  signing: Pick<SigningKeys, 'signer'>;
}

/** What the functions of the submission step share, made once by `createSubmission`: its deps and parts. */
export interface SubmissionState extends SubmissionParts, Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'config'> {}

/** What the outbound stage looks at in a composed message of a grant. */
export function sendCandidateOf(composition: Composition, rawBytes: number): SendCandidate {
  return {
    from: composition.grant.email,
    recipients: [...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email),
    reply: composition.replyToMessageId !== undefined || composition.inReplyTo !== undefined,
    sizeBytes: rawBytes,
    attachments: composition.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      size: attachment.content.length,
    })),
  };
}

/** Each address once, lower-cased. */
export function uniqueAddresses(entries: readonly { email: string }[]): string[] {
  return [...new Set(entries.map((entry) => entry.email.toLowerCase()))];
}
