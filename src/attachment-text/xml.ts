/**
 * @module attachment-text/xml
 * Streaming reads of the XML parts of Office files with htmlparser2 in XML mode: no tree is built, entities are only
 * the predefined and numeric ones (no DTD, so no entity expansion), the bytes are decoded and fed in chunks (no
 * string the size of the part), and nesting is bounded by {@link MAX_XML_DEPTH}: deeper is refused as unreadable
 * (htmlparser2 keeps its open elements in an array it shifts, so an unbounded depth would be quadratic).
 */
import { StringDecoder } from 'node:string_decoder';
import { Parser } from 'htmlparser2';
import { AttachmentTextError } from './errors.js';
import { MAX_XML_DEPTH } from './limits.js';

/** Callbacks of {@link walkXml}. Names are local names (the namespace prefix dropped: `w:p` → `p`). */
export interface XmlHandlers {
  open?(name: string, attributes: Record<string, string>, depth: number): void;
  close?(name: string, depth: number): void;
  text?(text: string): void;
}

/** Bytes fed to the parser at a time. */
const CHUNK = 1024 * 1024;

/** The local part of a qualified name. */
export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** An attribute by its qualified name, else by its local name under any prefix (`r:id` also finds `ns2:id`). */
export function attribute(attributes: Record<string, string>, qualified: string): string | undefined {
  const direct = attributes[qualified];
  if (direct !== undefined) return direct;
  const local = localName(qualified);
  for (const [name, value] of Object.entries(attributes)) if (localName(name) === local) return value;
  return undefined;
}

/**
 * Walks the XML of `bytes` (UTF-8, or UTF-16 with its byte order mark), calling `handlers` in document order.
 * Throws an AttachmentTextError (`unreadable`) when it nests deeper than `maxDepth`.
 */
export function walkXml(bytes: Uint8Array, handlers: XmlHandlers, part: string, maxDepth = MAX_XML_DEPTH): void {
  let depth = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        depth++;
        if (depth > maxDepth)
          throw new AttachmentTextError('unreadable', `The part ${part} nests deeper than ${maxDepth} elements.`);
        handlers.open?.(localName(name), attributes, depth);
      },
      onclosetag(name) {
        handlers.close?.(localName(name), depth);
        depth--;
      },
      ontext(text) {
        handlers.text?.(text);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  const utf16 = bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe;
  const decoder = new StringDecoder(utf16 ? 'utf16le' : 'utf8');
  for (let at = 0; at < bytes.length; at += CHUNK) parser.write(decoder.write(bytes.subarray(at, at + CHUNK)));
  parser.write(decoder.end());
  parser.end();
}

/** The relationships of an OPC part (`_rels/x.xml.rels`): id → target, resolved against the part's folder. */
export function readRelationships(
  bytes: Uint8Array | undefined,
  base: string,
): Map<string, { target: string; type: string; external: boolean }> {
  const relationships = new Map<string, { target: string; type: string; external: boolean }>();
  if (!bytes) return relationships;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        if (name !== 'Relationship') return;
        const id = attributes.Id;
        const target = attributes.Target;
        if (!id || target === undefined) return;
        const external = attributes.TargetMode === 'External';
        relationships.set(id, {
          target: external ? target : resolvePartName(base, target),
          type: attributes.Type ?? '',
          external,
        });
      },
    },
    `${base}_rels`,
  );
  return relationships;
}

/** A relative part name resolved against a folder (`xl/` + `worksheets/sheet1.xml`, `../notesSlides/x.xml`). */
export function resolvePartName(base: string, target: string): string {
  const parts = target.startsWith('/') ? [] : base.split('/').filter(Boolean);
  for (const piece of target.split('/')) {
    if (piece === '' || piece === '.') continue;
    if (piece === '..') parts.pop();
    else parts.push(piece);
  }
  return parts.join('/');
}
