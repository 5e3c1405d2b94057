/**
 * @module attachment-text/limits
 * The bounds of a read, with why each value. Every reader in this area is linear in its input; these keep its
 * output and its memory bounded too.
 */
import type { AttachmentTextLimits } from './contracts.js';

/** Bounds of the text (see {@link AttachmentTextLimits}); all of them are part of the cache key. */
export type Limits = Required<AttachmentTextLimits>;

/**
 * Defaults. 10,000 rows and 50 columns hold every real export we have seen whole (a CSV of 5,000 orders is about
 * 130,000 tokens, read in pages); 500 characters per cell keep one runaway cell from filling a page; 2,000,000
 * characters (about 500,000 tokens, 100 pages of the default budget) is more than an agent reads of one file.
 */
export const DEFAULT_LIMITS: Limits = {
  maxRows: 10_000,
  maxColumns: 50,
  maxCellCharacters: 500,
  maxPages: 500,
  maxCharacters: 2_000_000,
};

/** The limits of a call: its own values, each clamped to a sane range, else the defaults. */
export function limitsOf(options: AttachmentTextLimits): Limits {
  const pick = (value: number | undefined, fallback: number, max: number) =>
    value === undefined || !Number.isFinite(value) ? fallback : Math.min(max, Math.max(1, Math.floor(value)));
  return {
    maxRows: pick(options.maxRows, DEFAULT_LIMITS.maxRows, 100_000),
    maxColumns: pick(options.maxColumns, DEFAULT_LIMITS.maxColumns, 1_000),
    maxCellCharacters: pick(options.maxCellCharacters, DEFAULT_LIMITS.maxCellCharacters, 100_000),
    maxPages: pick(options.maxPages, DEFAULT_LIMITS.maxPages, 10_000),
    maxCharacters: pick(options.maxCharacters, DEFAULT_LIMITS.maxCharacters, 10_000_000),
  };
}

/**
 * Zip containers (DOCX, XLSX, PPTX, ODS), checked on their central directory before anything is inflated, and again
 * while inflating (an entry that inflates beyond its declared size is refused). Real Office files compress their
 * XML 5–30 times, a sheet of repeated cells up to about 100; deflate's ceiling is about 1,030, which is what a bomb
 * uses. The ratio is checked only on entries over 1 MB inflated, where it matters.
 */
export const ZIP_LIMITS = {
  maxEntries: 10_000,
  maxEntryBytes: 100 * 1024 * 1024,
  maxTotalBytes: 300 * 1024 * 1024,
  maxRatio: 200,
  ratioCheckedAbove: 1024 * 1024,
} as const;

/**
 * XML nesting: Office documents nest 10–30 deep (a table in a table cell in a text box: about 40); a document
 * nested deeper is hostile and is refused as unreadable.
 */
export const MAX_XML_DEPTH = 256;

/** Default tokens of a page: a long message or a document's first pages in about 5,000 tokens (issue 35). */
export const DEFAULT_MAX_TOKENS = 5_000;
