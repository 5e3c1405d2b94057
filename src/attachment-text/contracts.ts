/**
 * @module attachment-text/contracts
 * The declared interface of src/attachment-text/: attachments (PDF, DOCX, XLSX, ODS, CSV, PPTX, HTML, plain text,
 * iCalendar, message/rfc822) read as text a model can take, paged by tokens with an opaque cursor.
 */

/** What an attachment was read as. `image` and `unknown` carry metadata only. */
export type AttachmentKind =
  'pdf' | 'docx' | 'xlsx' | 'ods' | 'pptx' | 'csv' | 'html' | 'text' | 'calendar' | 'message' | 'image' | 'unknown';

/** Why an attachment could not be read (the `reason` of an {@link AttachmentTextErrorLike}). */
export type AttachmentTextErrorReason =
  /** Larger than the bytes, memory or text an extraction may use. */
  | 'too_large'
  /** A zip container (DOCX, XLSX, PPTX, ODS) that inflates beyond its caps: ratio, entry or total size, entry count. */
  | 'zip_bomb'
  /** The extraction overran its deadline and its thread was stopped. */
  | 'timeout'
  /** Damaged or not what it claims to be (a PDF cut short, a zip without its directory, XML nested too deep). */
  | 'unreadable'
  /** Needs a password (an encrypted PDF, an encrypted Office file, an encrypted zip entry). */
  | 'encrypted'
  /** A recognised format this reader does not read (legacy binary Office, a zip method other than deflate). */
  | 'unsupported'
  /** A cursor that does not belong to this attachment and these options. */
  | 'invalid_cursor';

/** The shape of the error every failed read throws (`AttachmentTextError` in index.ts). */
export interface AttachmentTextErrorLike extends Error {
  readonly reason: AttachmentTextErrorReason;
}

/**
 * Bounds of one extraction. They are part of the result (a smaller `maxRows` gives another text), so they are part
 * of the cache key and of the cursor.
 */
export interface AttachmentTextLimits {
  /** Rows of one table (a sheet, a CSV) written out; the rest are counted and named (default 10,000). */
  maxRows?: number;
  /** Columns of one table written out (default 50). */
  maxColumns?: number;
  /** Characters of one table cell (default 500). */
  maxCellCharacters?: number;
  /** PDF pages read (default 500). */
  maxPages?: number;
  /** Characters of the whole text; beyond it the text ends with a note (default 2,000,000). */
  maxCharacters?: number;
}

/** What the caller knows of the attachment, and how much of its text it wants. */
export interface AttachmentTextOptions extends AttachmentTextLimits {
  /** The declared MIME type (from the message); the bytes' own signature wins when they disagree. */
  contentType?: string | undefined;
  /** The declared file name; its extension helps when the type is generic (application/octet-stream). */
  filename?: string | undefined;
  /** Tokens of this page (o200k_base, the tokenizer the project ships); default 5,000, at least 1. */
  maxTokens?: number | undefined;
  /** The `nextCursor` of the previous page: the page continues exactly where that one ended. */
  cursor?: string | undefined;
  /**
   * HTML → Markdown for HTML attachments and HTML message bodies, when the caller has a better one than the simple
   * built-in conversion (src/reading's). It runs on the calling thread, so it must be linear and bounded itself;
   * its result is cached like the rest.
   */
  htmlToMarkdown?: ((html: string) => string) | undefined;
  /** Milliseconds the whole read may take (default the reader's, 15 s). */
  timeoutMs?: number | undefined;
}

/** One sheet or table of a spreadsheet or CSV. */
export interface SheetSummary {
  name: string;
  /** Non-empty rows and the widest row's columns in the file. */
  rows: number;
  columns: number;
  /** Of those, written out (within `maxRows` / `maxColumns`). */
  rowsShown: number;
  columnsShown: number;
  hidden?: boolean;
}

/** An attachment inside a message/rfc822 attachment (listed, not read). */
export interface InnerAttachment {
  filename: string;
  contentType: string;
  bytes: number;
}

/** What is known of the attachment besides its text. */
export interface AttachmentMetadata {
  kind: AttachmentKind;
  /** The type it was read as (from its signature, else its declared type or extension). */
  contentType: string;
  filename?: string;
  bytes: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  /** False for images and unknown types: then `note` says why and `text` is empty. */
  textReadable: boolean;
  /** A sentence for the reader: why there is no text, or what was left out. */
  note?: string;
  /** The whole text's length and tokens (o200k_base), across every page. */
  characters: number;
  tokens: number;
  title?: string;
  author?: string;
  /** ISO 8601, when the document says. */
  created?: string;
  /** PDF: pages in the file, and pages read (within `maxPages`). */
  pages?: number;
  pagesRead?: number;
  sheets?: SheetSummary[];
  slides?: number;
  events?: number;
  image?: { format: string; width?: number; height?: number };
  /** message/rfc822: its own attachments. */
  attachments?: InnerAttachment[];
  /** What the bounds left out (rows, columns, pages, characters), one sentence each. */
  omitted?: string[];
}

/** One page of an attachment's text. */
export interface AttachmentText {
  text: string;
  format: 'markdown' | 'text';
  /** Present (true) when more text follows: read it with `nextCursor`. */
  truncated?: true;
  nextCursor?: string;
  /** Where this page lies in the whole text (characters) and its tokens. */
  page: { start: number; end: number; tokens: number };
  metadata: AttachmentMetadata;
}

/** Options of a reader (its worker threads and cache). */
export interface AttachmentTextReaderOptions {
  /** Worker threads, 1 or 2 (default: 2 when the machine has 3 cores or more, else 1). */
  workers?: number;
  /** Milliseconds one read may take, by default (15 s). */
  timeoutMs?: number;
  /** Old-generation heap cap of a worker thread, MB (default 256). */
  maxHeapMb?: number;
  /** Largest attachment read, bytes (default 25 MB). */
  maxBytes?: number;
  /** Characters of text kept in the cache across entries (default 16,000,000), and entries (default 64). */
  cacheCharacters?: number;
  cacheEntries?: number;
}

/**
 * An attachment kept in a content-addressed store: known by its SHA-256 and size, with its first bytes to tell its
 * kind. Its bytes are loaded whole only when the cache does not hold its text (the pages after the first load none).
 */
export interface StoredAttachment {
  /** Lower-case hex SHA-256 of the bytes (the store's address of them). */
  sha256: string;
  size: number;
  /** The first bytes: at least 4 KB (what detection looks at), or all of them. */
  head: Uint8Array;
  load(): Promise<Uint8Array>;
}

/** Reads attachments as text; one per process is enough (`extractAttachmentText` uses a shared one). */
export interface AttachmentTextReader {
  extract(bytes: Uint8Array | StoredAttachment, options?: AttachmentTextOptions): Promise<AttachmentText>;
  /** Starts the worker threads and loads the tokenizer now, so the first read does not wait for them. */
  warmUp(): Promise<void>;
  /** Stops the threads; reads under way fail. */
  close(): Promise<void>;
}
