/**
 * @module outbound/follow-ups-contracts
 * The follow-ups' part of the outbound area's declared interface (./contracts.ts re-exports it): the service, what one
 * run of the due ones did, and how a follow-up is sent.
 */
import type { OperationContext, Principal } from '../access.js';
import type { CreateFollowUpInput, FollowUp, FollowUpRefInput, ListFollowUpsInput } from '../schemas/follow-ups.js';

/**
 * How a follow-up is sent: `send_message` through the operation runner (the send gate, oversight, suppressions and
 * the access log, as any send), given by whoever runs the follow-ups (server/main.ts for the worker, the test clock's
 * operation), since areas do not reach the operations.
 */
export type FollowUpSender = (input: Record<string, unknown>, context: OperationContext) => Promise<unknown>;

/** What one run of the due follow-ups did. */
export interface DueRun {
  sent: number;
  cancelled: number;
  failed: number;
}

/** What createFollowUps() returns (src/outbound/follow-ups.ts): follow-ups cancelled by a reply. */
export interface FollowUps {
  /** A follow-up of a message the grant sent, due `after_seconds` from now. 409 when the message has one. */
  create(principal: Principal, input: CreateFollowUpInput): Promise<FollowUp>;
  /** As {@link create} for the message a send just made; a repeat of the send (an Idempotency-Key) adds none. */
  attach(principal: Principal, input: CreateFollowUpInput): Promise<void>;
  /** A grant's follow-ups, newest first. */
  list(principal: Principal, input: ListFollowUpsInput): Promise<{ data: FollowUp[] }>;
  /** One follow-up, or 404. */
  find(principal: Principal, input: FollowUpRefInput): Promise<FollowUp>;
  /** Cancels a pending follow-up (`message.follow_up_cancelled`); 409 once sent or failed. */
  cancel(principal: Principal, input: FollowUpRefInput): Promise<FollowUp>;
  /**
   * The due-runner: cancels the pending follow-ups a reply answered and sends those due by `at`, earliest first.
   * Without an application: those of production applications (the worker); with one: that test-mode application's.
   */
  runDue(at: Date, options: { applicationId?: string | undefined; send: FollowUpSender }): Promise<DueRun>;
  /** The earliest due time (unix seconds) of an application's pending follow-ups, if any. */
  nextDue(applicationId: string): Promise<number | undefined>;
}
