/**
 * @module operations/read-body
 * The /v3 extensions of message and thread reads (issue 35): `body_format` reads the body through src/reading
 * (Markdown, text, or the HTML with its hidden parts removed) and `max_tokens` cuts it to a token budget (src/tokens).
 * Without them a read answers as Nylas does: the stored HTML.
 */
import { looksLikeHtml, renderBody, type BodyFormat, type RenderedBody } from '../reading/index.js';
import { countTokens, truncateToTokens } from '../tokens/index.js';

/** The extensions a read was asked with. */
export interface BodyAsked {
  body_format?: BodyFormat | undefined;
  max_tokens?: number | undefined;
}

/**
 * A stored body (a message's HTML, or the text of a text/plain one) read in `format` through src/reading: what the
 * /v3 extensions below and the agent tools (tools/compact-items.ts) both read.
 */
export function readStoredBody(body: string, format: BodyFormat): RenderedBody {
  return renderBody(looksLikeHtml(body) ? { html: body } : { text: body }, { format });
}

/** `message` with its body read as asked (unchanged when neither extension was given, or it has no body). */
export async function bodyAsAsked<T extends { body?: string | undefined }>(message: T, asked: BodyAsked): Promise<T> {
  if ((asked.body_format === undefined && asked.max_tokens === undefined) || typeof message.body !== 'string')
    return message;
  let body = message.body;
  const extra: Record<string, unknown> = {};
  if (asked.body_format !== undefined) {
    const read = readStoredBody(body, asked.body_format);
    body = read.body;
    extra.body_format = read.format;
    extra.hidden_text_removed = read.hiddenTextRemoved;
  }
  if (asked.max_tokens !== undefined) {
    const kept = await truncateToTokens(body, asked.max_tokens);
    if (kept.truncated) {
      const total = await countTokens(body);
      const left = await countTokens(kept.text);
      extra.body_cut = { omitted_tokens: total - left, total_tokens: total };
      body = kept.text;
    }
  }
  return { ...message, body, ...extra };
}
