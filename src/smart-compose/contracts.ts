/**
 * @module smart-compose/contracts
 * The Smart Compose area's declared interface: the service as the operations and the HTTP face call it.
 */
import type { Principal } from '../access.js';

/** What a Smart Compose call asks: the grant, the prompt and, for a reply, the message replied to. */
export interface SmartComposeInput {
  grant_id: string;
  prompt: string;
  message_id?: string | undefined;
}

/** Options of a call: `signal` aborts it (the client went away). */
export interface SmartComposeOptions {
  signal?: AbortSignal | undefined;
}

/** What createSmartComposeService() returns (src/smart-compose/smart-compose.ts): a body generated from a prompt, whole or as it comes. */
export interface SmartComposeService {
  /** The whole suggestion. */
  compose(
    principal: Principal,
    input: SmartComposeInput,
    options?: SmartComposeOptions,
  ): Promise<{
    suggestion: string;
  }>;
  /**
   * The suggestion as it is generated. Every check, and the model's first answer, come before this resolves:
   * a refusal or a provider error rejects it (the transport still answers with the right status). A failure
   * later comes out of the iterator as an AppError.
   */
  stream(principal: Principal, input: SmartComposeInput, options?: SmartComposeOptions): Promise<AsyncIterable<string>>;
}
