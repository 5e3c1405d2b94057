/**
 * @module mime/parse-worker
 * Runs in a worker thread (see parse-inbound.ts, started by storage/engine/worker-module.ts): parses untrusted MIME with
 * mailparser off the event loop and returns plain data (normalize.ts). Importing it elsewhere only gives its options.
 *
 * Every conversion here is linear in its input and bounded: the HTML→text conversion of mailparser is off
 * (it blocked for 28 s on 1 MB of nested <div>); the snippet and search text come from a bounded prefix.
 */
import { parentPort } from 'node:worker_threads';
import { simpleParser, type SimpleParserOptions } from 'mailparser';
import { normalize, sha256, type WireParsedMessage } from './normalize.js';
import { parseSimpleMessage } from './simple-mime.js';
import { cutParts, type PartToCut } from './cut-parts.js';

/** mailparser options: nothing that is superlinear on hostile input. */
export const PARSER_OPTIONS: SimpleParserOptions = {
  keepCidLinks: true,
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
  maxHtmlLengthToParse: 2 * 1024 * 1024,
};

/** The header section scanned when the full parse failed. */
const MAX_FALLBACK_HEADER = 256 * 1024;

/**
 * The header section alone (up to the first empty line, bounded), for a second chance at the envelope fields when
 * the full parse failed.
 */
function headerSection(raw: Buffer): Buffer {
  const limit = Math.min(raw.length, MAX_FALLBACK_HEADER);
  const head = raw.subarray(0, limit);
  const end = head.indexOf('\r\n\r\n');
  const endLf = head.indexOf('\n\n');
  const cut = end >= 0 && (endLf < 0 || end < endLf) ? end : endLf;
  return Buffer.concat([cut >= 0 ? head.subarray(0, cut) : head, Buffer.from('\r\n\r\n')]);
}

function describe(error: unknown): string {
  // Whatever was thrown (or its `message`), as String() gives it.
  const message: unknown =
    (error && typeof error === 'object' && 'message' in error ? error.message : error) ?? 'unknown error';
  return String(message).slice(0, 500);
}

if (parentPort) {
  const port = parentPort;
  const parse = async (job: { id: number; raw: Uint8Array }) => {
    const raw = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength);
    const rawHash = sha256(raw);
    try {
      const fast = parseSimpleMessage(raw);
      const mail = fast ?? (await simpleParser(raw, PARSER_OPTIONS));
      const { value, transfer } = normalize(mail);
      port.postMessage({ id: job.id, ok: true, rawHash, value }, transfer);
    } catch (error) {
      let partial: WireParsedMessage | undefined;
      try {
        partial = normalize(await simpleParser(headerSection(raw), PARSER_OPTIONS)).value;
        partial.attachments = [];
      } catch {
        partial = undefined;
      }
      port.postMessage({ id: job.id, ok: false, rawHash, error: describe(error), partial });
    }
  };
  // A cut (parse-inbound.ts MimeParser.cut): the parts a policy removed, replaced by their notes.
  const cut = (job: { id: number; raw: Uint8Array; parts: PartToCut[] }) => {
    const raw = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength);
    let out: Buffer | undefined;
    try {
      out = cutParts(raw, job.parts);
    } catch {
      out = undefined;
    }
    // Its own buffer, handed over without a copy (`raw` itself when nothing was cut: copied, it was transferred in).
    const bytes = out ? new Uint8Array(out) : null;
    port.postMessage({ id: job.id, cut: bytes }, bytes ? [bytes.buffer] : []);
  };
  // parse() answers every job itself, failures included; nothing waits on its promise.
  port.on('message', (job: { id: number; raw: Uint8Array; parts?: PartToCut[] }) =>
    job.parts ? cut({ ...job, parts: job.parts }) : void parse(job),
  );
}
