/**
 * The edge adapter of Smart Compose's model (server/ai-text-generator.ts), provider-independent part, on the AI
 * SDK's own mock models (`ai/test`): the text, the streamed deltas and the usage reach the core's TextGenerator
 * shape, and the SDK's failures are classified (429 with Retry-After, timeouts, anything else with the provider's
 * message). The providers themselves are built from the settings; the openai-compatible one is exercised end to
 * end against a loopback server in smart-compose.test.ts.
 */
import { APICallError } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import {
  classifyError,
  createAiTextGenerator,
  languageModelOf,
  textGeneratorOf,
} from '../../server/ai-text-generator.js';
import { TextGenerationError, type TextGenerationRequest, type TextStreamPart } from '../../src/index.js';
import { textGeneratorOf as exported } from '../../server/embed.js';
import { createImapGrant } from '../helpers/imap-grant.js';
import { startTestService } from '../helpers/service.js';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const request = (signal: AbortSignal = new AbortController().signal): TextGenerationRequest => ({
  system: 'You write emails.',
  messages: [{ role: 'user', content: 'Request:\nSay hi' }],
  maxOutputTokens: 123,
  signal,
});

async function collect(parts: AsyncIterable<TextStreamPart>): Promise<TextStreamPart[]> {
  const out: TextStreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

const apiError = (statusCode: number, message: string, headers: Record<string, string> = {}) =>
  new APICallError({
    message,
    url: 'http://model.test/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    isRetryable: statusCode >= 429,
  });

describe('textGeneratorOf', () => {
  it('generates the text with its usage, the system prompt apart from the messages', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Hi there.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(42, 3),
        warnings: [],
      }),
    });
    const generator = textGeneratorOf(model, 'mock:model');
    expect(generator.model).toBe('mock:model');
    expect(await generator.generate(request())).toEqual({
      text: 'Hi there.',
      usage: { inputTokens: 42, outputTokens: 3 },
    });
    const call = model.doGenerateCalls[0]!;
    expect(call.prompt).toEqual([
      { role: 'system', content: 'You write emails.' },
      { role: 'user', content: [{ type: 'text', text: 'Request:\nSay hi' }] },
    ]);
    expect(call.maxOutputTokens).toBe(123);
  });

  it('streams the deltas, then the usage', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Hello ' },
            { type: 'text-delta', id: 't', delta: 'world' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(10, 2) },
          ],
        }),
      }),
    });
    expect(await collect(textGeneratorOf(model, 'mock').stream(request()))).toEqual([
      { type: 'delta', text: 'Hello ' },
      { type: 'delta', text: 'world' },
      { type: 'finish', usage: { inputTokens: 10, outputTokens: 2 } },
    ]);
  });

  it('classifies a rate limit (with Retry-After) and an error, generating and streaming, without retrying', async () => {
    const limited = new MockLanguageModelV3({
      doGenerate: async () => {
        throw apiError(429, 'Too many tokens per minute', { 'retry-after': '12' });
      },
    });
    const error = await textGeneratorOf(limited, 'mock')
      .generate(request())
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TextGenerationError);
    expect(error).toMatchObject({ kind: 'rate_limit', message: 'Too many tokens per minute', retryAfterSeconds: 12 });
    expect(limited.doGenerateCalls).toHaveLength(1);

    const failing = new MockLanguageModelV3({
      doStream: async () => {
        throw apiError(500, 'Internal model failure');
      },
    });
    const streamed = await collect(textGeneratorOf(failing, 'mock').stream(request())).catch(
      (thrown: unknown) => thrown,
    );
    expect(streamed).toMatchObject({ kind: 'provider', message: 'Internal model failure (HTTP 500)' });
    expect(failing.doStreamCalls).toHaveLength(1);

    const broken = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Half' },
            { type: 'error', error: new Error('connection reset by the model') },
          ],
        }),
      }),
    });
    const parts: TextStreamPart[] = [];
    const midway = await (async () => {
      for await (const part of textGeneratorOf(broken, 'mock').stream(request())) parts.push(part);
    })().catch((thrown: unknown) => thrown);
    expect(parts).toEqual([{ type: 'delta', text: 'Half' }]);
    expect(midway).toMatchObject({ kind: 'provider', message: 'connection reset by the model' });
  });

  it('reports an aborted call as the abort reason (the core puts its timeout there)', async () => {
    const controller = new AbortController();
    const model = new MockLanguageModelV3({
      doGenerate: async ({ abortSignal }) =>
        new Promise((_resolve, reject) => {
          abortSignal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })),
          );
        }),
    });
    const reason = new TextGenerationError('timeout', 'the model did not finish in time');
    const pending = textGeneratorOf(model, 'mock')
      .generate(request(controller.signal))
      .catch((thrown: unknown) => thrown);
    setTimeout(() => controller.abort(reason), 10);
    expect(await pending).toBe(reason);
  });
});

describe('classifyError', () => {
  it('maps statuses and error names', () => {
    expect(classifyError(apiError(429, 'slow down'))).toMatchObject({
      kind: 'rate_limit',
      retryAfterSeconds: undefined,
    });
    expect(classifyError(apiError(504, 'gateway timeout'))).toMatchObject({ kind: 'timeout' });
    expect(classifyError(apiError(401, 'Incorrect API key provided'))).toMatchObject({
      kind: 'provider',
      message: 'Incorrect API key provided (HTTP 401)',
    });
    expect(classifyError(Object.assign(new Error('timed out'), { name: 'TimeoutError' }))).toMatchObject({
      kind: 'timeout',
    });
    expect(classifyError(new Error('fetch failed'))).toMatchObject({ kind: 'provider', message: 'fetch failed' });
  });
});

describe('languageModelOf', () => {
  it('builds the model of each provider from the settings', () => {
    const openai = languageModelOf({ provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-test', baseUrl: undefined });
    const anthropic = languageModelOf({
      provider: 'anthropic',
      model: 'claude-3-5-haiku-latest',
      apiKey: 'sk-ant-test',
      baseUrl: undefined,
    });
    const local = languageModelOf({
      provider: 'openai-compatible',
      model: 'llama3.1',
      apiKey: undefined,
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
    for (const [model, provider, id] of [
      [openai, /^openai\./, 'gpt-4o-mini'],
      [anthropic, /^anthropic\./, 'claude-3-5-haiku-latest'],
      [local, /^openai-compatible\./, 'llama3.1'],
    ] as const) {
      expect(typeof model).toBe('object');
      const built = model as { provider: string; modelId: string; specificationVersion: string };
      expect(built.provider).toMatch(provider);
      expect(built.modelId).toBe(id);
      expect(built.specificationVersion).toBe('v3');
    }
    expect(createAiTextGenerator(undefined)).toBeUndefined();
    expect(
      createAiTextGenerator({
        provider: 'openai-compatible',
        model: 'llama3.1',
        apiKey: undefined,
        baseUrl: 'http://127.0.0.1:11434/v1',
      })?.model,
    ).toBe('openai-compatible:llama3.1');
  });
});

describe('an AI SDK model given in the deps', () => {
  it('serves Smart Compose without any AGENTPOST_AI_* setting (embedding)', async () => {
    expect(exported).toBe(textGeneratorOf);
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: "From the embedder's model." }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(5, 5),
        warnings: [],
      }),
    });
    const service = await startTestService({ deps: { text: textGeneratorOf(model, 'mock:embedded') } });
    try {
      const applicationId = await service.core.accounts.applications.defaultApplicationId();
      const grant = await createImapGrant(service.core, {
        applicationId,
        email: 'embedded@connected.example',
        password: 'unused',
        imapPort: 1,
        smtpPort: 1,
        secrets: service.core.deps.secrets,
      });
      const answer = await service.nylas.messages.smartCompose.composeMessage({
        identifier: grant,
        requestBody: { prompt: 'Say hi' },
      });
      expect(answer.data.suggestion).toBe("From the embedder's model.");
      expect(model.doGenerateCalls).toHaveLength(1);
    } finally {
      await service.close();
    }
  });
});
