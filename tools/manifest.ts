/**
 * @module tools/manifest
 * The JSON Schemas agents read in `tools/list`, kept small: one draft-7 rendering of each tool's zod schema, with
 * what only the server needs left out. The server still validates every call with the full zod schema; the
 * manifest tells a model what to send, in as few tokens as that takes.
 */
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/** The header-injection guard every single-line string carries: enforced by the server, noise in a prompt. */
const SINGLE_LINE_PATTERN = '^[^\\r\\n\\0]*$';

/** Longest pattern worth stating (a date's is short; an address's or Base64's is a paragraph of noise). */
const MAX_STATED_PATTERN = 40;
/**
 * Keywords a model does not need to produce a valid call: the limits that matter are in the descriptions (page
 * size, time ranges), and the server checks every one and says what to fix.
 */
const SERVER_ONLY_KEYWORDS = new Set([
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'propertyNames',
  'maxProperties',
  'contentEncoding',
]);

/**
 * Levels of properties whose descriptions are stated: a tool's own parameters. Their fields (a
 * reminder override's method) are named clearly enough; their parent's description says how to fill them.
 */
const DESCRIBED_DEPTH = 1;

function tidy(node: unknown, describedDepth: number): unknown {
  if (Array.isArray(node)) return node.map((item) => tidy(item, describedDepth));
  if (!node || typeof node !== 'object') return node;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === '$schema') continue;
    if (key === 'description' && describedDepth < 0) continue;
    if (key === 'properties') {
      schema.properties = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, child]) => [name, tidy(child, describedDepth - 1)]),
      );
      continue;
    }
    if (key === 'pattern' && (value === SINGLE_LINE_PATTERN || (value as string).length > MAX_STATED_PATTERN)) continue;
    if (SERVER_ONLY_KEYWORDS.has(key)) continue;
    schema[key] = tidy(value, describedDepth);
  }
  // An address is a string with a long address pattern and the single-line guard: to a model, `format: email`.
  const allOf = schema.allOf as JsonSchema[] | undefined;
  if (
    allOf?.every((part) =>
      Object.keys(part).every((key) => key === 'pattern' || (key === 'type' && part.type === schema.type)),
    )
  ) {
    const patterns = allOf
      .map((part) => part.pattern)
      .filter((pattern): pattern is string => typeof pattern === 'string');
    delete schema.allOf;
    if (patterns.some((pattern) => pattern.includes('@'))) schema.format = 'email';
    else if (patterns[0]) schema.pattern = patterns[0];
  }
  return schema;
}

/** Smallest object schema worth sharing through `$defs` (characters of its JSON). */
const MIN_SHARED = 120;

/**
 * Each object schema that occurs more than once (to, cc, bcc, reply_to and from are one address type) moves to
 * `$defs` under the name of the property where it first appears, and every occurrence becomes a `$ref`.
 */
function shareRepeated(root: JsonSchema): JsonSchema {
  const seen = new Map<string, { count: number; name: string }>();
  const visit = (node: unknown, name: string) => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, name));
    if (!node || typeof node !== 'object') return;
    const schema = node as JsonSchema;
    const text = JSON.stringify(schema);
    if (schema !== root && schema.type === 'object' && schema.properties && text.length >= MIN_SHARED) {
      const entry = seen.get(text);
      if (entry) entry.count += 1;
      else seen.set(text, { count: 1, name });
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties')
        for (const [property, child] of Object.entries(value as JsonSchema)) visit(child, property);
      else visit(value, name);
    }
  };
  visit(root, 'root');
  const shared = new Map<string, string>();
  const names = new Set<string>();
  for (const [text, { count, name }] of seen) {
    if (count < 2) continue;
    let unique = name;
    for (let suffix = 2; names.has(unique); suffix += 1) unique = `${name}${suffix}`;
    names.add(unique);
    shared.set(text, unique);
  }
  if (shared.size === 0) return root;
  const definitions: JsonSchema = {};
  const replace = (node: unknown, top: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => replace(item, false));
    if (!node || typeof node !== 'object') return node;
    const name = top ? undefined : shared.get(JSON.stringify(node));
    if (name) {
      definitions[name] ??= Object.fromEntries(
        Object.entries(node as JsonSchema).map(([key, value]) => [key, replace(value, false)]),
      );
      return { $ref: `#/$defs/${name}` };
    }
    return Object.fromEntries(Object.entries(node as JsonSchema).map(([key, value]) => [key, replace(value, false)]));
  };
  const result = replace(root, true) as JsonSchema;
  return { ...result, $defs: definitions };
}

/** A tool's input schema as JSON Schema for `tools/list`: descriptions kept, server-only limits left out, repeats shared. */
export function inputJsonSchema(schema: z.ZodObject): JsonSchema {
  return shareRepeated(
    tidy(
      z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }),
      DESCRIBED_DEPTH - 1,
    ) as JsonSchema,
  );
}

/** Levels of properties an output schema states: a list's page and its items' fields; an object's own fields. */
const LIST_OUTPUT_DEPTH = 2;
const OBJECT_OUTPUT_DEPTH = 1;

/** Only the types, `properties`, `items` and `required` down to `depth` levels of properties. */
function shape(node: unknown, depth: number): unknown {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const schema = node as JsonSchema;
  const result: JsonSchema = {};
  if (schema.type !== undefined) result.type = schema.type;
  if (Array.isArray(schema.anyOf)) result.anyOf = schema.anyOf.map((part) => shape(part, depth));
  if (schema.items) result.items = shape(schema.items, depth);
  if (schema.properties && depth > 0) {
    result.properties = Object.fromEntries(
      Object.entries(schema.properties as JsonSchema).map(([key, value]) => [key, shape(value, depth - 1)]),
    );
    if (Array.isArray(schema.required) && schema.required.length) result.required = schema.required;
  }
  return result;
}

/**
 * A tool's output schema for `tools/list`: the shape of `structuredContent` (types, properties and required: a
 * page and its items' fields, an object's own fields), without descriptions or limits: the tool description says what fields mean, and clients use the
 * output schema to check and type the result, which the full zod schema on the server already guarantees.
 */
export function outputJsonSchema(schema: z.ZodObject): JsonSchema {
  const depth = 'data' in schema.shape ? LIST_OUTPUT_DEPTH : OBJECT_OUTPUT_DEPTH;
  return shape(
    tidy(z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'any' }), -1),
    depth,
  ) as JsonSchema;
}
