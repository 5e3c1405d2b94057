/**
 * @module smart-compose/smart-compose
 * Smart Compose (Nylas §12): a message body generated from a prompt, or a reply to a stored message, by the model
 * the operator configured (`AGENTPOST_AI_*`, {@link TextGenerator} in the deps). Nothing is sent or stored. The
 * transports only translate: the whole suggestion ({@link SmartComposeService.compose}) or its pieces as they come
 * ({@link SmartComposeService.stream}), both checked the same way before the model is called:
 * 1. the grant exists and is a connected account (an Agent Account is refused, as the specification says);
 * 2. the prompt is at most {@link MAX_PROMPT_TOKENS} tokens (counted, src/tokens/);
 * 3. a model is configured (else 503, naming the settings);
 * 4. for a reply, the original message exists in the mailbox.
 * Provider failures become AppErrors: rate limit 429, no answer within `AGENTPOST_AI_TIMEOUT` 504, anything else 502
 * with the provider's message. Each call that reached the model is counted with its tokens (`Metrics.smartCompose`).
 */
import type { Principal, RateLimitDetails } from '../access.js';
import {
  type CoreDeps,
  type SmartComposeOutcome,
  type TextGenerationRequest,
  type TextStreamPart,
  type TextUsage,
  TextGenerationError,
} from '../ports/index.js';
import { AppError } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import { HOSTED_PROVIDER } from '../providers/index.js';
import type { MessageService } from '../messages/index.js';
import {
  composeUserMessage,
  originalMessageData,
  replyUserMessage,
  SMART_COMPOSE_INSTRUCTIONS,
} from './reply-context.js';
import { countTokens, loadTokenizer, TOKEN_ENCODING } from '../tokens/index.js';
import type { SmartComposeInput, SmartComposeOptions, SmartComposeService } from './contracts.js';

/** The specification's limit on a prompt. */
export const MAX_PROMPT_TOKENS = 1_000;
/** Most tokens a suggestion may take: a long email, and a bound on what a call may cost. */
export const MAX_SUGGESTION_TOKENS = 2_000;

/** The settings that choose the model, named in the 503. */
const MODEL_SETTINGS = 'AGENTPOST_AI_PROVIDER, AGENTPOST_AI_MODEL, AGENTPOST_AI_API_KEY and AGENTPOST_AI_BASE_URL';

/** Builds the service. */
export function createSmartComposeService(
  deps: CoreDeps,
  grants: GrantService,
  messages: MessageService,
): SmartComposeService {
  const { config, logger } = deps;
  const metrics = deps.metrics;
  // With a model, the tokenizer is loaded at start-up rather than by the first request (see loadTokenizer).
  if (deps.text)
    loadTokenizer().catch((error: unknown) =>
      logger.error('smart compose: cannot load the tokenizer', {
        error: error instanceof Error ? error.message : String(error),
      }),
    );

  /** Runs the checks and builds the model request; returns it with the grant's id and the deadline's controller. */
  async function prepare(principal: Principal, input: SmartComposeInput, options: SmartComposeOptions) {
    const grant = await grants.require(principal, input.grant_id);
    if (grant.provider === HOSTED_PROVIDER) {
      throw new AppError(
        'invalid_request',
        'Smart Compose runs only against connected accounts, not Agent Accounts: this grant is an Agent Account (provider "nylas"). Use a connected (IMAP) grant, or write the body with your own model.',
        { field: 'grant_id' },
        { type: 'smart_compose_not_supported' },
      );
    }
    const tokens = await countTokens(input.prompt);
    if (tokens > MAX_PROMPT_TOKENS) {
      throw new AppError(
        'invalid_request',
        `prompt: the prompt is ${tokens} tokens long; Smart Compose takes at most ${MAX_PROMPT_TOKENS} tokens (counted with the ${TOKEN_ENCODING} encoding). Shorten it.`,
        {
          field: 'prompt',
          tokens,
          limit: MAX_PROMPT_TOKENS,
        },
      );
    }
    const text = deps.text;
    if (!text)
      throw new AppError(
        'unavailable',
        `Smart Compose has no model configured: set ${MODEL_SETTINGS} (see docs/smart-compose.md).`,
      );
    let content = composeUserMessage(input.prompt);
    if (input.message_id !== undefined) {
      const original = await messages.find(principal, { grant_id: grant.id, message_id: input.message_id });
      content = replyUserMessage(input.prompt, await originalMessageData(original));
    }
    // The deadline covers the whole generation; the client's signal ends it early.
    const deadline = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          new TextGenerationError(
            'timeout',
            `the model did not finish within ${config.aiTimeoutMs} ms (AGENTPOST_AI_TIMEOUT)`,
          ),
        ),
      config.aiTimeoutMs,
    );
    timer.unref?.();
    const signals = options.signal ? [deadline.signal, options.signal] : [deadline.signal];
    const request: TextGenerationRequest = {
      system: SMART_COMPOSE_INSTRUCTIONS,
      messages: [{ role: 'user', content }],
      maxOutputTokens: MAX_SUGGESTION_TOKENS,
      signal: AbortSignal.any(signals),
    };
    return {
      grantId: grant.id,
      text,
      request,
      deadline,
      cancelled: () => options.signal?.aborted === true && !deadline.signal.aborted,
      done: () => clearTimeout(timer),
    };
  }

  /** The AppError of a failed generation, counted in the metrics. */
  function failure(
    call: { grantId: string; text: { model: string }; deadline: AbortController; cancelled(): boolean },
    error: unknown,
    usage: TextUsage = { inputTokens: undefined, outputTokens: undefined },
  ): AppError {
    const { grantId, deadline } = call;
    const model = call.text.model;
    let outcome: SmartComposeOutcome = 'provider_error';
    let mapped: AppError;
    const timedOut = deadline.signal.aborted || (error instanceof TextGenerationError && error.kind === 'timeout');
    if (call.cancelled()) {
      // Nobody is left to answer; counted apart so that it does not look like a provider's fault.
      metrics?.smartCompose(grantId, 'cancelled', usage);
      return new AppError('invalid_request', 'Smart Compose: the request was cancelled by the client.', undefined, {
        cause: error,
      });
    }
    if (timedOut) {
      outcome = 'timeout';
      mapped = new AppError(
        'timeout',
        `Smart Compose: the model (${model}) did not answer within ${config.aiTimeoutMs} ms (AGENTPOST_AI_TIMEOUT). Try again, or with a shorter request.`,
        undefined,
        { cause: error },
      );
    } else if (error instanceof TextGenerationError && error.kind === 'rate_limit') {
      outcome = 'rate_limited';
      const details: RateLimitDetails | undefined =
        error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : undefined;
      mapped = new AppError(
        'rate_limited',
        `Smart Compose: the model provider's rate limit was reached (${error.message}). Try again later.`,
        details,
        { cause: error },
      );
    } else {
      const message = error instanceof Error ? error.message : String(error);
      mapped = new AppError('upstream_error', `Smart Compose: the model provider failed: ${message}`, undefined, {
        cause: error,
      });
    }
    logger.warn('smart compose failed', {
      grant_id: grantId,
      model,
      outcome,
      error: error instanceof Error ? error.message : String(error),
    });
    metrics?.smartCompose(grantId, outcome, usage);
    return mapped;
  }

  return {
    /** The whole suggestion. */
    async compose(
      principal: Principal,
      input: SmartComposeInput,
      options: SmartComposeOptions = {},
    ): Promise<{ suggestion: string }> {
      const call = await prepare(principal, input, options);
      const { grantId, text, request, done } = call;
      try {
        const result = await text.generate(request);
        metrics?.smartCompose(grantId, 'ok', result.usage);
        return { suggestion: result.text.trim() };
      } catch (error) {
        throw failure(call, error);
      } finally {
        done();
      }
    },

    /**
     * The suggestion as it is generated. Every check, and the model's first answer, come before this resolves:
     * a refusal or a provider error rejects it (the transport still answers with the right status). A failure
     * later comes out of the iterator as an AppError.
     */
    async stream(
      principal: Principal,
      input: SmartComposeInput,
      options: SmartComposeOptions = {},
    ): Promise<AsyncIterable<string>> {
      const call = await prepare(principal, input, options);
      const { grantId, text, request, done } = call;
      const parts = text.stream(request)[Symbol.asyncIterator]();
      let first: IteratorResult<TextStreamPart>;
      try {
        first = await parts.next();
      } catch (error) {
        done();
        throw failure(call, error);
      }
      async function* pieces(): AsyncGenerator<string> {
        let usage: TextUsage = { inputTokens: undefined, outputTokens: undefined };
        let ended = false;
        try {
          for (let step = first; !step.done; step = await parts.next()) {
            if (step.value.type === 'delta') {
              if (step.value.text !== '') yield step.value.text;
            } else usage = step.value.usage;
          }
          ended = true;
          metrics?.smartCompose(grantId, 'ok', usage);
        } catch (error) {
          ended = true;
          throw failure(call, error, usage);
        } finally {
          done();
          if (!ended) {
            // The consumer stopped early (the client went away): end the generation too, and count it so.
            metrics?.smartCompose(grantId, 'cancelled', usage);
            await parts.return?.();
          }
        }
      }
      return pieces();
    },
  };
}

export type { SmartComposeInput, SmartComposeOptions, SmartComposeService } from './contracts.js';
