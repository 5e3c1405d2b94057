/**
 * @module mail/stages/pipeline-state
 * What the inbound pipeline's parts (./inbound-pipeline.ts) share: a message and its plan as the stages decide them,
 * the state `createInboundPipeline` makes, and the errors of a stage (a refusal, or an evaluation that could not
 * complete).
 */

import type { Enforcement } from '../../admin/index.js';
import type { CoreDeps, InboundStages } from '../../ports/index.js';
import { AppError } from '../../errors.js';
import { type MimeParser, type ParsedMessage, readRawHeaders, fromHeaderAddress } from '../../mime/index.js';
import type { EvaluationLog } from './evaluation-log.js';
import type { Refusal } from './policy-limits.js';
import type { UsageMeter } from './usage-meter.js';

export type { PipelineTarget, PipelineMessage, CopyPlan, MessagePlan } from '../contracts.js';

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
  /** The parser pool, for the trust block of messages whose rules read it (./trust-stage.ts). */
  parser: Pick<MimeParser, 'parse'>;
}
