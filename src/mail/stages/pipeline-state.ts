/**
 * @module mail/stages/pipeline-state
 * What the inbound pipeline's parts (./inbound-pipeline.ts) share: a message and its plan as the stages decide them,
 * the state `createInboundPipeline` makes, and the errors of a stage (a refusal, or an evaluation that could not
 * complete).
 */
import type { GrantRow } from '../../../storage/index.js';
import type { EvaluationRow, Enforcement, GrantEnforcement } from '../../admin/index.js';
import type { AuthenticationVerdict, CoreDeps, InboundStages, SmtpClientInfo, SpamVerdict } from '../../ports/index.js';
import { AppError } from '../../errors.js';
import { type ParsedMessage, readRawHeaders, fromHeaderAddress } from '../../mime/index.js';
import type { EvaluationLog } from './evaluation-log.js';
import type { InboxProcessingDecision } from './inbox-processing.js';
import type { Refusal, RemovedAttachment } from './policy-limits.js';
import type { UsageMeter } from './usage-meter.js';

/** One hosted recipient of a message. */
export interface PipelineTarget {
  recipient: string;
  grant: GrantRow;
}

/** A message as the pipeline receives it. */
export interface PipelineMessage {
  raw: Buffer;
  mailFrom: string;
  /** The SMTP client; absent for local deliveries (then authentication is skipped). */
  client: SmtpClientInfo | undefined;
  /** Whether the `smtp_rcpt` stage already ran for these recipients (at RCPT TO). */
  recipientsAdmitted: boolean;
  targets: PipelineTarget[];
}

/** What was decided for one copy to store. */
export interface CopyPlan extends PipelineTarget {
  enforcement: GrantEnforcement;
  inbox: InboxProcessingDecision;
  /** Folder ids the copy goes to. */
  folderIds: string[];
  /** The ids of the folders `assign_to_folder` named (found or made). */
  assignedFolderIds: string[];
  spam: SpamVerdict | undefined;
  /** Filled by {@link InboundPipeline.stripAttachments}. */
  removedAttachments: RemovedAttachment[];
}

/** What the pipeline decided for a message. */
export interface MessagePlan {
  /** The message to store (with the `Authentication-Results` header when authenticated). */
  raw: Buffer;
  authentication: AuthenticationVerdict | undefined;
  copies: CopyPlan[];
  /** Copies dropped by an `inbox_processing` block (nothing stored for them). */
  dropped: CopyPlan[];
  /** Recipients refused by the `smtp_rcpt` stage (local deliveries only). */
  refused: { recipient: string; reason: string }[];
  /** Rows decided before the message's transaction (local `smtp_rcpt`). */
  earlyRows: EvaluationRow[];
  /** Unix day and seconds of the decision. */
  day: number;
  at: number;
}

/** Throws the refusal of a stage as the error the SMTP listener answers with its code. */
export function refuse(refusal: Refusal): never {
  const code = refusal.code === 552 ? 'payload_too_large' : refusal.code === 550 ? 'forbidden' : 'rate_limited';
  throw new AppError(code, refusal.message, { smtp: { code: refusal.code, enhanced: refusal.enhanced } });
}

/** A stage that could not complete: the message is refused for now (451 4.3.0), never let through unchecked. */
export function failClosed(what: string, error: unknown): AppError {
  return new AppError('unavailable', `${what} could not be evaluated, try again later`, undefined, { cause: error });
}

/** The sender `from.*` rules look at: the From header's address, else MAIL FROM. */
export function senderOf(raw: Buffer, mailFrom: string, parsedFrom?: ParsedMessage['from']): string {
  const parsed = parsedFrom?.[0]?.email;
  if (parsed) return parsed.toLowerCase();
  const header = readRawHeaders(raw, 64 * 1024, 200).find((entry) => entry.name.toLowerCase() === 'from');
  return (header && fromHeaderAddress(header.value)) || mailFrom.toLowerCase();
}

/** What the functions of the pipeline share, made once by `createInboundPipeline`. */
export interface PipelineState {
  deps: CoreDeps;
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  enforcement: Enforcement;
  stages: InboundStages;
  usage: UsageMeter;
  log: EvaluationLog;
}
