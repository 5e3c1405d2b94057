/**
 * A scripted model for examples and scenario tests: the AI SDK's MockLanguageModelV3 plays a model that decides
 * its next tool call from the results it has seen, so `generateText` runs the real tool loop against a real
 * service without an LLM.
 */
import { generateText, stepCountIs, type Tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { unfence } from './fence.js';

/** What the model has seen so far: the output of each tool call, in order. */
export interface Transcript {
  results: { toolName: string; output: unknown }[];
  /** The last output of the named tool. */
  last<T = Record<string, unknown>>(toolName: string): T;
}

/** One step: a tool call to make, or the final answer. */
export type Step = (transcript: Transcript) => { tool: string; input: Record<string, unknown> } | { text: string };

function transcriptOf(prompt: unknown[]): Transcript {
  const results: Transcript['results'] = [];
  for (const message of prompt as { role: string; content: unknown }[]) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as {
      type: string;
      toolName: string;
      output: { type: string; value: unknown };
    }[]) {
      if (part.type !== 'tool-result') continue;
      if (part.output.type === 'error-text' || part.output.type === 'error-json')
        throw new Error(`tool ${part.toolName} failed: ${JSON.stringify(part.output.value)}`);
      // A model reads through the data fence (‹x›…‹/x› around text from outside): the markers are not the data.
      results.push({ toolName: part.toolName, output: unfence(part.output.value) });
    }
  }
  return {
    results,
    last<T>(toolName: string) {
      const found = [...results].reverse().find((result) => result.toolName === toolName);
      if (!found) throw new Error(`no result of ${toolName} yet`);
      return found.output as T;
    },
  };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

/** A mock language model that follows the script, one step per model call. */
export function scriptedModel(steps: Step[]): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const step = steps[Math.min(call, steps.length - 1)]!;
      call++;
      const action = step(transcriptOf(options.prompt));
      if ('text' in action) {
        return {
          content: [{ type: 'text', text: action.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          { type: 'tool-call', toolCallId: `call-${call}`, toolName: action.tool, input: JSON.stringify(action.input) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

/** Runs the script as an agent with the given tools; returns the tool calls it made and its final text. */
export async function runScriptedAgent(tools: Record<string, Tool>, steps: Step[], prompt = 'Do your job.') {
  const result = await generateText({
    model: scriptedModel(steps),
    tools,
    prompt,
    stopWhen: stepCountIs(steps.length + 1),
  });
  const toolCalls = result.steps.flatMap((step) => step.toolCalls.map((toolCall) => toolCall.toolName));
  const errors = result.steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-error'));
  if (errors.length > 0) throw new Error(`tool errors: ${JSON.stringify(errors)}`);
  return { text: result.text, toolCalls };
}
