/**
 * @module tools/compact-budget
 * The size budget of a result (./compact.ts): a page loses items from its end, any other object has its longest
 * fields cut, and `truncated` says what was cut and which call returns it.
 */
import { fieldText } from '../src/operations/index.js';
import { callText, cut, operationsByName, RESULT_BUDGET, size, type Json, type ToolCall } from './compact-items.js';

/**
 * Cuts a result to `limit` characters ({@link RESULT_BUDGET} by default). A page loses items from its end (the call with a smaller limit gives the
 * cursor that continues right after the last one kept; {@link readForAgent} makes that call itself); any other
 * object has its longest fields cut. Either way `truncated` says what was cut and how to get it.
 */
export function withinBudget(tool: string, output: Json, input: Json, limit = RESULT_BUDGET): Json {
  if (size(output) <= limit) return output;
  if (Array.isArray(output.data)) {
    const items = [...(output.data as unknown[])];
    const total = items.length;
    let length = size(output);
    while (items.length > 1 && length > limit) length -= size(items.pop()) + 1;
    const kept = items.length;
    const cuts: string[] = [];
    const data = items.map((item) => {
      if (size(item) <= limit) return item;
      const shrunk = shrinkObject(item as Json, limit / 2);
      cuts.push(...shrunk.cuts.map((field) => `${fieldText((item as Json).id ?? 'an item')}: ${field}`));
      return shrunk.value;
    });
    // Items cut from the end: the page's next_cursor would skip them (the call with a smaller limit gives the right one).
    const { next_cursor: next, ...rest } = output;
    const call: ToolCall = { tool, arguments: { ...input, limit: kept } };
    const parts = [];
    if (kept < total) {
      parts.push(
        `${total - kept} of the ${total} items of this page were cut to fit; call ${tool} again with limit: ${kept}${typeof input.page_token === 'string' ? `, page_token: "${input.page_token}"` : ''} (${callText(call)}) and page on with its next_cursor`,
      );
    }
    if (cuts.length > 0)
      parts.push(`long fields were cut (${cuts.join('; ')}); the ${tool} operation at the /v3 API returns them whole`);
    return {
      ...rest,
      ...(kept === total && next !== undefined ? { next_cursor: next } : {}),
      data,
      truncated: { omitted: total - kept, hint: parts.join('; '), ...(kept < total ? { call } : {}) },
    };
  }
  const shrunk = shrinkObject(output, limit);
  const route = operationRoute(tool, input);
  return {
    ...shrunk.value,
    truncated: {
      omitted: size(output) - size(shrunk.value),
      hint: `long fields were cut to fit: ${shrunk.cuts.join('; ')}; the whole object is at ${route}`,
    },
  };
}

/** The /v3 route of a tool's operation, with the ids the agent gave filled in. */
function operationRoute(tool: string, input: Json): string {
  const binding = operationsByName.get(tool)?.http;
  if (!binding) return `the /v3 API (the ${tool} operation)`;
  return `${binding.method} /v3${binding.path.replace(/:([a-z_]+)/g, (_match, name: string) => (typeof input[name] === 'string' ? String(input[name]) : `{${name}}`))}`;
}

/**
 * `value` with its long strings and arrays cut so that each field takes about `budget` divided among them; says
 * which fields were cut and by how much. Arrays keep their first items (their own order; a thread's messages are
 * never cut here, see {@link threadForAgent}).
 */
function shrinkObject(value: Json, budget: number, path = ''): { value: Json; cuts: string[] } {
  const entries = Object.entries(value);
  const each = Math.max(200, Math.floor(budget / Math.max(1, entries.length)));
  const cuts: string[] = [];
  const shrunk = Object.fromEntries(
    entries.map(([key, field]) => {
      const name = `${path}${key}`;
      if (typeof field === 'string') {
        if (field.length > each) cuts.push(`${name} (${each - 1} of ${field.length} characters kept)`);
        return [key, cut(field, each)];
      }
      if (Array.isArray(field)) {
        if (size(field) <= each) return [key, field];
        const kept = Math.max(1, Math.floor(field.length * (each / size(field))));
        if (kept < field.length) cuts.push(`${name} (the first ${kept} of ${field.length} items kept)`);
        return [key, field.slice(0, kept)];
      }
      if (field && typeof field === 'object') {
        const inner = shrinkObject(field as Json, each, `${name}.`);
        cuts.push(...inner.cuts);
        return [key, inner.value];
      }
      return [key, field];
    }),
  );
  return { value: shrunk, cuts };
}
