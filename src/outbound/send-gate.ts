/**
 * @module outbound/send-gate
 * Oversight on the send path (issue 37, docs/oversight.md): every send, draft sent and message submitted over SMTP
 * passes the gate (src/oversight) after it is composed and before anything is stored. The gate's verdict is acted on
 * here: a refusal is thrown; a send that must wait is composed ONCE and held (its MIME and attachments as blobs, the
 * SHA-256 of the exact message, an `approval.requested` event, and the Idempotency-Key's answer, 202); an approved one
 * is released later with those very bytes, dated again and signed; a send under `monitored` goes out and is listed
 * for review. Agent sends carry `Auto-Submitted: auto-generated` and `X-Auto-Response-Suppress: All`.
 */
import { eq } from 'drizzle-orm';
import type { OperationContext, Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { blobHash, putBlob, readBlob, tables, type Tx, type StoredHeldComposition } from '../../storage/index.js';
import { AppError, HTTP_ERRORS } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import {
  heldSha256,
  restamp,
  toApproval,
  withoutExcepted,
  type ApprovalRequest,
  type ApprovalRow,
  type Oversight,
  type SendAttempt,
  type SendVerdict,
  repliedMessage,
  threadOfMessage,
  type ThreadClaims,
} from '../oversight/index.js';
import type { ApprovalPending } from '../schemas/oversight.js';
import { unixSeconds } from '../time.js';
import { trackedBody, tracksAnything, type SigningKeys } from '../deliverability/index.js';
import type { Built, Composer, Composition, IdempotencyClaim, IdempotencyStore } from './contracts.js';
import type { StoredProvenance } from '../../storage/schema/outbound.js';
import { domainOf } from './routing.js';
import { composeInputOf } from './composition-mime.js';

/** What the call says it means, besides the message. */
export interface SendIntent {
  allowAutomatedReply?: boolean | undefined;
  claimToken?: string | undefined;
}

/** Parts of the send gate. */
export interface SendGateParts {
  gate: Oversight | undefined;
  /** Thread claims (issue 40): drafts into a claimed thread need the token; the holder's reply ends the claim. */
  claims?: Pick<ThreadClaims, 'assertFree' | 'settle'> | undefined;
  /** Told of each send held (after its transaction), with the reviewers of its grant's policy. */
  onHeld?: ((row: ApprovalRow, reviewers: readonly string[]) => void) | undefined;
  composer: Composer;
  idempotency: IdempotencyStore;
  signing: Pick<SigningKeys, 'signer'>;
}

/** The gate's verdict on a composed send, with the composition as it would leave (agent headers added). */
export interface GatedSend {
  verdict: SendVerdict;
  composition: Composition;
  attempt: SendAttempt | undefined;
}

/** Options of {@link SendGate.hold}. */
export interface HoldOptions {
  claim?: IdempotencyClaim | undefined;
  provenance: StoredProvenance;
  principal: Principal;
  attempt: SendAttempt;
  /** The draft sent, when it is one: its id and the row of its current version (an edit needs a new approval). */
  draft?: { id: string; messageId: string; headerMessageId: string } | undefined;
}

/** The send gate of the outbound service. */
export interface SendGate {
  check(
    principal: Principal,
    context: Pick<OperationContext, 'face' | 'client' | 'tool' | 'requestId'>,
    composition: Composition,
    kind: SendAttempt['kind'],
    intent: SendIntent,
  ): Promise<GatedSend>;
  hold(composition: Composition, requests: ApprovalRequest[], options: HoldOptions): Promise<ApprovalPending>;
  /**
   * Tells webhooks of a guard's refusal or of a queued burst (`oversight.decision`); a held send has its own
   * `approval.requested`. Never throws: the caller answers the send either way.
   */
  announce(gated: GatedSend): Promise<void>;
  /** A draft written into a claimed thread without the claim's token: throws the 409 naming the claim. */
  assertUnclaimed(composition: Composition, claimToken: string | undefined, principal: Principal): Promise<void>;
  /** A send that left into a thread with its claim's token: the claim ends (never throws). */
  settle(gated: GatedSend): Promise<void>;
  /** The `after` hook of a monitored send: lists it for review in its transaction. */
  reviewAfter(composition: Composition, provenance: StoredProvenance): (tx: Tx, messageId: string) => Promise<void>;
  /** The held composition and its exact MIME, dated now and signed, ready for `accept` (`prebuilt`). */
  unhold(
    row: ApprovalRow,
  ): Promise<{ composition: Composition; built: Built; tracking: StoredHeldComposition['tracking'] }>;
}

const AGENT_HEADERS = [
  { name: 'Auto-Submitted', value: 'auto-generated' },
  { name: 'X-Auto-Response-Suppress', value: 'All' },
];

/** Whether a call is an agent's: the MCP or AI SDK face, or a key marked as an agent's. */
export function isAgentCall(principal: Principal, face: OperationContext['face']): boolean {
  return face === 'mcp' || face === 'ai-sdk' || principal.key?.agent === true;
}

/** What the parts of the send gate below share. */
interface GateState {
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'config'>;
  parts: SendGateParts;
  record: ReturnType<typeof eventRecorder>;
}

/** Creates the send gate. */
export function createSendGate(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'config'>,
  parts: SendGateParts,
): SendGate {
  const { db, clock, newId } = deps;
  const { gate } = parts;
  const state: GateState = { deps, parts, record: eventRecorder({ newId, clock }) };

  async function check(
    principal: Principal,
    context: Pick<OperationContext, 'face' | 'client' | 'tool' | 'requestId'>,
    requested: Composition,
    kind: SendAttempt['kind'],
    intent: SendIntent,
  ): Promise<GatedSend> {
    if (!gate) return { verdict: { outcome: 'send', monitored: false }, composition: requested, attempt: undefined };
    const { grant } = requested;
    let oversight;
    try {
      oversight = await gate.resolve(grant);
    } catch {
      // What applies to the grant cannot be read: the outbound stage reads the same and refuses the send (503,
      // recorded in the audit), so nothing leaves unchecked.
      return { verdict: { outcome: 'send', monitored: false }, composition: requested, attempt: undefined };
    }
    const agent = isAgentCall(principal, context.face);
    const present = new Set(requested.customHeaders.map((header) => header.name.toLowerCase()));
    const composition =
      agent && oversight.agentHeaders
        ? {
            ...requested,
            customHeaders: [
              ...requested.customHeaders,
              ...AGENT_HEADERS.filter((header) => !present.has(header.name.toLowerCase())),
            ],
          }
        : requested;
    const recipients = [
      ...new Set([...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email.toLowerCase())),
    ];
    // The message answered: its thread and whether a machine wrote it, in one read.
    const replied = composition.replyToMessageId
      ? await repliedMessage(db, grant.id, composition.replyToMessageId)
      : undefined;
    const attempt: SendAttempt = {
      principal,
      context,
      grant,
      oversight,
      recipients,
      replyToMessageId: composition.replyToMessageId,
      threadId: replied?.threadId,
      ...(replied ? { repliedAutomated: replied.automated } : {}),
      agent,
      kind,
      intent,
      at: clock.now().getTime(),
    };
    return { verdict: await gate.check(attempt), composition, attempt };
  }

  return {
    check,
    hold: (composition, requests, options) => hold(state, composition, requests, options),
    announce: (gated) => announce(state, gated),
    ...claimChecks(db, parts.claims),
    unhold: (row) => unhold({ db, clock, composer: parts.composer }, row),
    reviewAfter: (composition, provenance) => reviewAfter(state, composition, provenance),
  };
}

/** Holds a send for approval (see {@link SendGate.hold}). */
async function hold(
  { deps, parts, record }: GateState,
  requested: Composition,
  requests: ApprovalRequest[],
  options: HoldOptions,
): Promise<ApprovalPending> {
  const { db, clock, newId, config } = deps;
  const { composer, idempotency, signing } = parts;
  const { grant } = requested;
  const at = clock.now();
  const headerMessageId = options.draft?.headerMessageId ?? `${newId()}@${domainOf(requested.from.email)}`;
  let composition = requested;
  let tracking: StoredHeldComposition['tracking'];
  if (tracksAnything(requested.trackingOptions)) {
    const id = newId();
    const tracked = trackedBody(
      await signing.signer(),
      config.deliverability.trackingUrl,
      id,
      requested.trackingOptions,
      requested.body,
      requested.isPlaintext,
    );
    composition = { ...requested, body: tracked.body };
    tracking = { id, links: tracked.links };
  }
  const built = await composer.build(composition, headerMessageId, at);
  const sha256 = heldSha256(built.raw);
  const raw = withoutExcepted(built.raw);
  const id = newId();
  const created = unixSeconds(at);
  const { answer, held: heldRow } = await db.write(async (tx) => {
    const replay = await idempotency.find(tx, options.claim);
    if (replay) return { answer: replay.response as ApprovalPending, held: undefined };
    const rawHash = await putBlob(tx, raw, at.getTime());
    const attachments: StoredHeldComposition['attachments'] = [];
    for (const file of composition.attachments)
      attachments.push({
        filename: file.filename,
        contentType: file.contentType,
        contentId: file.contentId,
        inline: file.inline,
        size: file.content.length,
        blobHash: await putBlob(tx, file.content, at.getTime()),
      });
    // The composition as it is, but for its grant (read again when it leaves) and the attachments' bytes (blobs).
    const { grant: _grant, attachments: _files, ...fields } = composition;
    const held: StoredHeldComposition = {
      ...fields,
      attachments,
      tracking,
      draftMessageId: options.draft?.messageId,
    };
    const row = {
      id,
      applicationId: grant.applicationId,
      grantId: grant.id,
      status: 'pending',
      kind: options.draft ? 'draft' : 'send',
      draftId: options.draft?.id ?? null,
      draftVersion: null,
      checks: requests,
      composition: held,
      rawHash,
      sha256,
      headerMessageId,
      subject: composition.subject,
      recipients: [...options.attempt.recipients],
      replyToMessageId: composition.replyToMessageId ?? null,
      threadId: options.attempt.threadId ?? null,
      requestedByKeyId: options.principal.key?.id ?? null,
      provenance: options.provenance,
      decidedByKeyId: null,
      decidedByName: null,
      decisionReason: null,
      sentMessageId: null,
      error: null,
      expiresAt: created + config.approvalExpiryHours * 3600,
      decidedAt: null,
      createdAt: created,
      updatedAt: created,
    } satisfies ApprovalRow;
    await tx.insert(tables.approvals).values(row);
    const approval = toApproval(row);
    await record(tx, {
      applicationId: grant.applicationId,
      grantId: grant.id,
      type: 'approval.requested',
      objectId: id,
      object: approval,
    });
    const pending: ApprovalPending = {
      approval_id: id,
      status: 'pending',
      message: `Queued for approval (${requests.map((request) => request.check).join(', ')}): ${requests[0]!.reason} Nothing was sent. Do not send it again: a person decides, and the message leaves as it is once approved (approval ${id}).`,
      data: approval,
    };
    await idempotency.save(tx, options.claim, { status: 202, response: pending });
    return { answer: pending, held: row };
  });
  if (heldRow && options.attempt.oversight.reviewers.length > 0)
    parts.onHeld?.(heldRow, options.attempt.oversight.reviewers);
  return answer;
}

/** Tells webhooks of a refusal or a queued burst (see {@link SendGate.announce}). */
async function announce({ deps, record }: GateState, { verdict, attempt }: GatedSend): Promise<void> {
  const { db, newId } = deps;
  if (!attempt || (verdict.outcome !== 'refuse' && verdict.outcome !== 'queue')) return;
  const { grant } = attempt;
  const object = {
    object: 'oversight_decision',
    grant_id: grant.id,
    outcome: verdict.outcome === 'refuse' ? 'refused' : 'queued',
    check: verdict.check,
    ...(verdict.outcome === 'refuse'
      ? {
          status: HTTP_ERRORS[verdict.error.code].status,
          error_type: verdict.error.type ?? verdict.error.code,
          reason: verdict.error.message,
        }
      : { send_at: verdict.sendAt, reason: verdict.reason }),
    recipients: [...attempt.recipients],
    thread_id: attempt.threadId ?? null,
    api_key_id: attempt.principal.key?.id ?? null,
    face: attempt.context.face ?? null,
  };
  try {
    await db.write((tx) =>
      record(tx, {
        applicationId: grant.applicationId,
        grantId: grant.id,
        type: 'oversight.decision',
        objectId: newId(),
        object,
      }),
    );
  } catch {
    // The decision stands without its notification.
  }
}

/** The `after` hook of a monitored send: lists it for review in its transaction (see {@link SendGate.reviewAfter}). */
function reviewAfter(
  { deps, record }: GateState,
  composition: Composition,
  provenance: StoredProvenance,
): (tx: Tx, messageId: string) => Promise<void> {
  const { newId, clock } = deps;
  return async (tx, messageId) => {
    const { grant } = composition;
    await tx.insert(tables.sendReviews).values({
      id: newId(),
      applicationId: grant.applicationId,
      grantId: grant.id,
      messageId,
      subject: composition.subject,
      recipients: [...new Set([...composition.to, ...composition.cc, ...composition.bcc].map((entry) => entry.email))],
      provenance,
      status: 'unreviewed',
      createdAt: unixSeconds(clock.now()),
    });
    await record(tx, {
      applicationId: grant.applicationId,
      grantId: grant.id,
      type: 'send_review.created',
      objectId: messageId,
      object: { object: 'send_review', grant_id: grant.id, message_id: messageId, subject: composition.subject },
    });
  };
}

/** What the send path asks of thread claims (see {@link SendGate.assertUnclaimed} and {@link SendGate.settle}). */
function claimChecks(
  db: CoreDeps['db'],
  claims: SendGateParts['claims'],
): Pick<SendGate, 'assertUnclaimed' | 'settle'> {
  return {
    async assertUnclaimed(composition, claimToken, principal) {
      if (!claims || !composition.replyToMessageId) return;
      const threadId = await threadOfMessage(db, composition.grant.id, composition.replyToMessageId);
      if (threadId) await claims.assertFree(composition.grant.id, threadId, claimToken, principal.key?.id);
    },
    async settle({ attempt }) {
      if (claims && attempt?.threadId && attempt.intent.claimToken)
        await claims.settle(attempt.grant.id, attempt.threadId, attempt.intent.claimToken);
    },
  };
}

/** The held composition and its exact MIME, dated now and signed (see {@link SendGate.unhold}). */
async function unhold(
  { db, clock, composer }: Pick<CoreDeps, 'db' | 'clock'> & { composer: Composer },
  row: ApprovalRow,
): Promise<{ composition: Composition; built: Built; tracking: StoredHeldComposition['tracking'] }> {
  const held = row.composition;
  const [grant] = await db.orm.select().from(tables.grants).where(eq(tables.grants.id, row.grantId)).limit(1);
  if (!grant) throw new AppError('not_found', 'The mailbox of this approval was deleted.');
  const raw = await readBlob(db.orm, row.rawHash);
  if (!raw || heldSha256(raw) !== row.sha256)
    throw new AppError('conflict', 'The held message is not the one approved (its SHA-256 differs); nothing was sent.');
  const attachments = [];
  for (const file of held.attachments) {
    const content = await readBlob(db.orm, file.blobHash);
    if (!content) throw new AppError('internal', `An attachment of the held message (${file.filename}) is missing.`);
    attachments.push({
      filename: file.filename,
      contentType: file.contentType,
      contentId: file.contentId,
      inline: file.inline,
      content,
    });
  }
  const { attachments: _files, tracking: _tracking, draftMessageId: _draft, ...fields } = held;
  // A composition held before its references were kept has none.
  const composition: Composition = { ...fields, references: fields.references ?? [], grant, attachments };
  const date = clock.now();
  const signed = await composer.sign(restamp(raw, date), held.from.email);
  const input = composeInputOf(composition, row.headerMessageId, date);
  return { composition, built: { input, raw: signed, rawHash: blobHash(signed) }, tracking: held.tracking };
}
