/**
 * @module server/ai-text-generator
 * The model behind Smart Compose, at the edge like the other faces: the core's {@link TextGenerator} implemented
 * with the AI SDK (`ai`), its model built from the `AGENTPOST_AI_*` settings with the provider packages:
 * `@ai-sdk/openai`, `@ai-sdk/anthropic`, or `@ai-sdk/openai-compatible` for any server that speaks OpenAI's chat
 * completions API (a local one included). The SDK's own retries are off: a rate limit or an error goes back to the
 * caller at once, with its status, and the caller decides when to try again.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, RetryError, streamText, type LanguageModel } from 'ai';
import {
  TextGenerationError,
  type AiConfig,
  type TextGenerationRequest,
  type TextGenerator,
  type TextStreamPart,
  type TextUsage,
} from '../src/index.js';

/** The AI SDK model of the settings. `fetch` replaces the global one (tests). */
export function languageModelOf(ai: AiConfig, options: { fetch?: typeof fetch } = {}): LanguageModel {
  const common = {
    ...(ai.apiKey !== undefined ? { apiKey: ai.apiKey } : {}),
    ...(ai.baseUrl !== undefined ? { baseURL: ai.baseUrl } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  switch (ai.provider) {
    case 'openai':
      return createOpenAI(common)(ai.model);
    case 'anthropic':
      return createAnthropic(common)(ai.model);
    case 'openai-compatible':
      // `includeUsage` asks a streamed answer for its token counts (stream_options.include_usage).
      return createOpenAICompatible({ name: 'openai-compatible', baseURL: ai.baseUrl!, ...common, includeUsage: true })(
        ai.model,
      );
  }
}

/** The core's text generator of the settings, or undefined when no model is configured (Smart Compose answers 503). */
export function createAiTextGenerator(ai: AiConfig | undefined): TextGenerator | undefined {
  return ai ? textGeneratorOf(languageModelOf(ai), `${ai.provider}:${ai.model}`) : undefined;
}

/** Seconds of a `Retry-After` header (a number of seconds; an HTTP date is not used). */
function retryAfterOf(headers: Record<string, string> | undefined): number | undefined {
  const value = headers?.['retry-after'];
  return value !== undefined && /^\d{1,6}$/.test(value.trim()) ? Number(value) : undefined;
}

/**
 * A failure of the SDK as a {@link TextGenerationError}: a 429 is the provider's rate limit, an abort by the deadline
 * a timeout; anything else keeps the provider's message. A `signal` that fired is reported as its reason.
 */
export function classifyError(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (cause instanceof TextGenerationError) return cause;
  if (APICallError.isInstance(cause)) {
    if (cause.statusCode === 429)
      return new TextGenerationError('rate_limit', cause.message, retryAfterOf(cause.responseHeaders), { cause });
    if (cause.statusCode === 408 || cause.statusCode === 504)
      return new TextGenerationError('timeout', cause.message, undefined, { cause });
    return new TextGenerationError(
      'provider',
      cause.statusCode !== undefined ? `${cause.message} (HTTP ${cause.statusCode})` : cause.message,
      undefined,
      { cause },
    );
  }
  if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError'))
    return new TextGenerationError('timeout', cause.message, undefined, { cause });
  return new TextGenerationError('provider', cause instanceof Error ? cause.message : String(cause), undefined, {
    cause,
  });
}

function usageOf(usage: { inputTokens: number | undefined; outputTokens: number | undefined } | undefined): TextUsage {
  return { inputTokens: usage?.inputTokens, outputTokens: usage?.outputTokens };
}

/** A {@link TextGenerator} on any AI SDK language model (the providers above, or `ai/test`'s mock models). */
export function textGeneratorOf(model: LanguageModel, name: string): TextGenerator {
  const settings = (request: TextGenerationRequest) => ({
    model,
    system: request.system,
    messages: request.messages,
    maxOutputTokens: request.maxOutputTokens,
    abortSignal: request.signal,
    maxRetries: 0,
  });
  return {
    model: name,
    async generate(request) {
      try {
        const result = await generateText(settings(request));
        return { text: result.text, usage: usageOf(result.totalUsage) };
      } catch (error) {
        throw classifyError(error, request.signal);
      }
    },
    async *stream(request): AsyncGenerator<TextStreamPart> {
      const result = streamText({ ...settings(request), onError: () => undefined });
      try {
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') yield { type: 'delta', text: part.text };
          else if (part.type === 'error') throw part.error;
          else if (part.type === 'abort') throw request.signal.reason ?? new Error('the generation was aborted');
          else if (part.type === 'finish') yield { type: 'finish', usage: usageOf(part.totalUsage) };
        }
      } catch (error) {
        throw classifyError(error, request.signal);
      }
    },
  };
}
