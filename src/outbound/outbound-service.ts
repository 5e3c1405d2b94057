/**
 * @module outbound/outbound-service
 * Hosted mail out (the Outbound flow of ARCHITECTURE.md), put together from its steps: validate and compose
 * (composition.ts) → accept in one transaction and deliver locally at once (submission.ts) → deliver to everyone
 * else through the durable queue (outbound-queue.ts, with routing.ts and delivery-attempts.ts). Drafts and
 * scheduled sends (drafts.ts, scheduled-sends.ts) end in the same flow. The same queue carries calendar
 * invitations and the service's own emails (submission.ts).
 */
import type { Enforcement } from '../admin/index.js';
import type { Principal } from '../access.js';
import type { SendContext } from './contracts.js';
import { provenanceOf } from './provenance.js';
import type { CoreDeps, SmtpClient } from '../ports/index.js';
import type { GrantService } from '../grants/contracts.js';
import type { ContactService } from '../contacts/contracts.js';
import type { InboundService } from '../mail/index.js';
import { createSmtpClient } from '../system/smtp-client.js';
import type { JobQueue } from '../jobs/index.js';
import type { MailStore } from '../messages/index.js';
import type { SendMessageInput, SendMessageResult, SendResult } from '../schemas/send.js';
import { createAttachmentUploads } from './attachment-uploads.js';
import { createComposer } from './composition.js';
import type { OutboundService } from './contracts.js';
import { createDraftService } from './drafts.js';
import { createIdempotencyStore } from './idempotency.js';
import { createOutboundQueue } from './outbound-queue.js';
import { createOutboundStage } from './outbound-stage.js';
import { domainOf } from './routing.js';
import { createSubmission } from './submission.js';
import { sendCandidateOf } from './submission-state.js';
import {
  createSendGates,
  createSendingHealth,
  createWarmUp,
  type ReportIntake,
  createSuppressionGate,
  type SigningKeys,
} from '../deliverability/index.js';
import { createTransactionalSend } from './transactional-send.js';
import { createSendGate } from './send-gate.js';
import type { ApprovalRow, Oversight, ThreadClaims } from '../oversight/index.js';
import { createProviders, type Providers } from '../providers/index.js';

/** Parts the outbound service uses. */
export interface OutboundParts {
  grants: GrantService;
  store: MailStore;
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  jobs: JobQueue;
  contacts: ContactService;
  /** What applies to each grant (rules, lists, policy): the outbound stage reads it. */
  enforcement: Pick<Enforcement, 'forGrant'>;
  /** The report intake: permanent failures become bounces, and it gives each recipient's VERP return path. */
  reports: Pick<ReportIntake, 'recordDeliveryFailure' | 'returnPaths'>;
  /** The installation's signing key (tracking URLs of tracked sends). */
  signing: Pick<SigningKeys, 'signer'>;
  /** The mailbox providers (src/providers): how a grant's sends leave and its drafts are kept. Default: all hosted. */
  providers?: Providers | undefined;
  /** Oversight's send gate (src/oversight): absent, every send goes (as under `autonomous`). */
  oversight?: Oversight | undefined;
  /** Thread claims (src/oversight): the holder's reply ends its claim; drafts into a claimed thread need its token. */
  claims?: Pick<ThreadClaims, 'assertFree' | 'settle'> | undefined;
  /** Told of each send held for approval, with the reviewers its policy names (they are mailed their links). */
  onHeld?: ((row: ApprovalRow, reviewers: readonly string[]) => void) | undefined;
}

/** Creates the outbound service. */
export function createOutboundService(deps: CoreDeps, parts: OutboundParts): OutboundService {
  const { db, clock, config, logger, newId } = deps;
  const { grants, store, jobs, contacts } = parts;
  const providers = parts.providers ?? createProviders();
  const smtp: SmtpClient = deps.smtp ?? createSmtpClient({ heloName: config.mxHost, logger });
  const queue = createOutboundQueue(deps, { inbound: parts.inbound, jobs, smtp, reports: parts.reports, providers });
  const idempotency = createIdempotencyStore({ clock });
  const uploads = createAttachmentUploads(deps, { grants });
  const composer = createComposer(deps, { uploads });
  const stage = createOutboundStage(deps, { enforcement: parts.enforcement });
  // Deliverability's checks on every send (suppression, paused sending, warm-up) and its counters.
  // Order: whether this grant may send at all (paused), then who may not receive (suppressed), then the domain's warm-up cap.
  const gates = createSendGates([createSendingHealth(deps).gate, createSuppressionGate(), createWarmUp(deps).gate]);
  const submission = createSubmission(deps, {
    store,
    contacts,
    queue,
    idempotency,
    composer,
    stage,
    gates,
    signing: parts.signing,
  });
  const { accept, invitations, notifier } = submission;
  const sendGate = createSendGate(deps, {
    gate: parts.oversight,
    claims: parts.claims,
    onHeld: parts.onHeld,
    composer,
    idempotency,
    signing: parts.signing,
  });
  const sendFromDomain = createTransactionalSend(deps, { composer, submission });
  const drafts = createDraftService(deps, {
    grants,
    store,
    jobs,
    idempotency,
    prepare: composer.prepare,
    build: composer.build,
    accept,
    stage,
    providers,
    sendGate,
  });

  /** The outbound stage's verdict on a send, as if it were made now. Reads only. */
  async function dryRun(principal: Principal, input: SendMessageInput) {
    const grant = await grants.require(principal, input.grant_id);
    const {
      grant_id: _grant,
      send_at: _sendAt,
      use_draft: _useDraft,
      dry_run: _dryRun,
      allow_automated_reply: _automated,
      claim_token: _claimToken,
      ...request
    } = input;
    const composition = await composer.prepare(principal, grant, request, 'send');
    const built = await composer.build(composition, `${newId()}@${domainOf(grant.email)}`, clock.now());
    const routed = await queue.routeFor(
      grant,
      [...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email),
    );
    const undeliverable = new Map(
      routed.flatMap((recipient) => (recipient.failed ? [[recipient.email, recipient.failed.response] as const] : [])),
    );
    return stage.dryRun(grant, sendCandidateOf(composition, built.raw.length), undeliverable);
  }

  return {
    /**
     * Sends a message (`send_at`: schedules it). With an Idempotency-Key, a repeat of the same request answers the
     * first answer again and sends nothing; the key with another request is a 409. `dry_run`: the verdict of the
     * outbound stage only; nothing is stored, queued or sent (and no Idempotency-Key is kept).
     */
    async send(principal: Principal, input: SendMessageInput, context: SendContext = {}): Promise<SendMessageResult> {
      if (input.dry_run === true) return { data: await dryRun(principal, input) };
      const claim = idempotency.claim(
        principal.applicationId,
        context.idempotencyKey,
        'send_message',
        input,
        context.onIdempotentReplay,
      );
      const replay = await idempotency.find(db.orm, claim);
      if (replay) return replay.response as SendResult;
      const grant = await grants.require(principal, input.grant_id);
      const { grant_id: _grant, send_at: sendAt, use_draft: useDraft, dry_run: _dryRun, ...request } = input;
      const { allow_automated_reply: allowAutomatedReply, claim_token: claimToken, ...message } = request;
      const prepared = await composer.prepare(principal, grant, message, 'send');
      const provenance = provenanceOf(principal, context);
      const gated = await sendGate.check(principal, context, prepared, context.face === 'smtp' ? 'smtp' : 'send', {
        allowAutomatedReply,
        claimToken,
      });
      const { verdict, composition } = gated;
      await sendGate.announce(gated);
      if (verdict.outcome === 'refuse') throw verdict.error;
      if (verdict.outcome === 'approve')
        return sendGate.hold(composition, verdict.requests, { claim, provenance, principal, attempt: gated.attempt! });
      if (verdict.outcome === 'queue' || sendAt !== undefined)
        return drafts.schedule(composition, {
          sendAt: verdict.outcome === 'queue' ? Math.max(verdict.sendAt, sendAt ?? 0) : sendAt!,
          useDraft: useDraft ?? false,
          claim,
          provenance,
        });
      const sent = await accept(composition, {
        claim,
        provenance,
        after: verdict.monitored ? sendGate.reviewAfter(composition, provenance) : undefined,
      });
      await sendGate.settle(gated);
      return sent;
    },

    /** Sends a held message once approved: the exact MIME approved, dated again and signed (src/oversight). */
    async release(row) {
      const { composition, built, tracking } = await sendGate.unhold(row);
      const provenance = {
        ...(row.provenance ?? provenanceOf({ applicationId: row.applicationId, via: 'local' }, {})),
        approval_id: row.id,
      };
      const hooks =
        row.kind === 'draft' && row.draftId
          ? await drafts.heldHooks(row.grantId, row.draftId, row.composition.draftMessageId)
          : {};
      const result = await accept(composition, {
        headerMessageId: row.headerMessageId,
        provenance,
        prebuilt: { built, tracking },
        ...hooks,
      });
      return { messageId: result.data.id };
    },

    /** Large-attachment upload sessions (staged files a send or draft takes by id). */
    uploads,

    /** Sends from a verified domain of the application, without a mailbox (no sender's copy is stored). */
    sendFromDomain,

    /** Delivery state of each recipient, and tracking options, of sent messages, by message id. */
    sentState: queue.statusOf,

    drafts,
    invitations,
    notifier,
    /** Job handlers: delivery attempts and scheduled sends. */
    handlers: { ...queue.handlers, ...drafts.handlers },
    /** Closes pooled SMTP connections. */
    close: () => smtp.close(),
  };
}
