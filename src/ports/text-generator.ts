/**
 * @module ports/text-generator
 * A text-generation model (Smart Compose). server/ai-text-generator.ts implements it with the AI SDK.
 */

/** One message of a conversation with a model: what the user asked, or what the model answered before. */
export interface TextMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A request to a {@link TextGenerator}: instructions (`system`) kept apart from the conversation (`messages`). */
export interface TextGenerationRequest {
  /** The instructions; never built from untrusted text. */
  system: string;
  messages: TextMessage[];
  /** Most tokens the model may write. */
  maxOutputTokens: number;
  /** Aborts the generation (the deadline, or the client going away). */
  signal: AbortSignal;
}

/** Tokens a generation consumed, as the provider reported them (undefined: not reported). */
export interface TextUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** One part of a streamed generation: a piece of text, then, last, the usage. */
export type TextStreamPart = { type: 'delta'; text: string } | { type: 'finish'; usage: TextUsage };

/**
 * What a model provider failed with, classified so the core can answer for it: `rate_limit` (the provider's 429),
 * `timeout`, anything else `provider`. `message` is the provider's own; `retryAfterSeconds` its `Retry-After`.
 * Part of the port's contract (implementations throw it, the core reads it), so it lives beside the interface.
 */
export class TextGenerationError extends Error {
  override readonly name = 'TextGenerationError';
  constructor(
    readonly kind: 'rate_limit' | 'timeout' | 'provider',
    message: string,
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A text-generation model (Smart Compose). The core never imports a model SDK: server/ai-text-generator.ts implements
 * this with the AI SDK's providers, from the `AGENTPOST_AI_*` settings. Both methods reject (or the stream throws)
 * with a {@link TextGenerationError}, or with the abort reason once `signal` fired.
 */
export interface TextGenerator {
  /** Provider and model, for logs (`openai-compatible:llama3.1`). */
  readonly model: string;
  /** The whole answer at once. */
  generate(request: TextGenerationRequest): Promise<{ text: string; usage: TextUsage }>;
  /** The answer as it is generated: deltas, then one `finish` part. */
  stream(request: TextGenerationRequest): AsyncIterable<TextStreamPart>;
}
