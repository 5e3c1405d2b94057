/**
 * @module tools/manifest
 * The JSON Schemas agents read in `tools/list` (and the AI SDK tool definitions), kept small: one draft-7 rendering
 * of each tool's zod schema with what only the server needs left out. The server still validates every call with
 * the full zod schema and says what to fix; the manifest tells a model what to send in as few tokens as that takes
 * (issue 35: the whole `tools/list` at most 24,000 characters, with a description on every parameter).
 *
 * What is stated: each parameter's type, description, enum, `format` and array item type. What is not: the limits
 * (the descriptions give those that matter, such as page sizes), patterns (a date's becomes `format: date`), and the
 * fields of an object parameter, which its description names (`Recipients: [{email, name?}]`).
 */
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * Keywords a model does not need to produce a valid call: the limits that matter are in the descriptions, and the
 * server checks every one and says what to fix.
 */
const SERVER_ONLY_KEYWORDS = new Set([
  '$schema',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'multipleOf',
  'propertyNames',
  'maxProperties',
  'contentEncoding',
  'default',
]);

/** A pattern of calendar dates (`^\d{4}-\d{2}-\d{2}$` and its kin): to a model, `format: date` says it in fewer characters. */
function isDatePattern(pattern: string): boolean {
  const regex = new RegExp(pattern);
  return regex.test('2025-01-31') && !regex.test('2025-01-31T10:00') && !regex.test('2025-1-31x');
}

/**
 * One parameter (or its items): its type, description (when `described`), enum and format; an object's fields and
 * shared definitions are left out (`$ref` becomes `type: object`).
 */
function parameter(node: unknown, described: boolean): JsonSchema {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return {};
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (SERVER_ONLY_KEYWORDS.has(key)) continue;
    switch (key) {
      case 'description':
        if (described) schema.description = value;
        break;
      case 'properties':
      case 'required':
      case 'definitions':
      case '$defs':
        break;
      case '$ref':
        schema.type = 'object';
        break;
      case 'pattern':
        if (isDatePattern(value as string)) schema.format = 'date';
        break;
      case 'items':
        schema.items = parameter(value, false);
        break;
      case 'additionalProperties':
        // Stated when it says something (metadata's string values); `{}` (anything) is the default.
        if (value && typeof value === 'object' && Object.keys(value).length > 0)
          schema.additionalProperties = parameter(value, false);
        break;
      case 'allOf':
      case 'anyOf': {
        // An address is a string with an address pattern and the single-line guard: to a model, `format: email`.
        const parts = (value as JsonSchema[]).map((part) => parameter(part, false));
        if (
          key === 'allOf' &&
          parts.every((part) => Object.keys(part).every((name) => name === 'type' || name === 'format'))
        )
          Object.assign(schema, ...parts);
        else schema[key] = parts;
        break;
      }
      default:
        schema[key] = value;
    }
  }
  return schema;
}

/** A tool's input schema as JSON Schema for `tools/list` and the AI SDK: every parameter typed and described. */
export function inputJsonSchema(schema: z.ZodObject): JsonSchema {
  const full = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const properties = Object.fromEntries(
    Object.entries((full.properties ?? {}) as JsonSchema).map(([name, child]) => [name, parameter(child, true)]),
  );
  const required = full.required as string[] | undefined;
  return { type: 'object', properties, ...(required?.length ? { required } : {}) };
}
