/**
 * @module attachment-text/extracted
 * What each format's reader returns: the whole text (bounded by the limits), its format, and what it learnt of the
 * file (title, pages, sheets, what the bounds left out).
 */
import type { AttachmentMetadata } from './contracts.js';

/** The fields of the metadata a format's reader fills in; the rest (kind, bytes, hash, sizes) are the engine's. */
export type FormatMetadata = Partial<
  Omit<AttachmentMetadata, 'kind' | 'contentType' | 'filename' | 'bytes' | 'sha256' | 'characters' | 'tokens'>
>;

/** A format reader's result. */
export interface Extracted {
  text: string;
  format: 'markdown' | 'text';
  metadata: FormatMetadata;
}
