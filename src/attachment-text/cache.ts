/**
 * @module attachment-text/cache
 * Texts already extracted, by content hash and the options that shape them: a bounded in-memory LRU (entries and
 * characters), so the pages after the first, and the same attachment read again (a forward, another message of the
 * thread), cost no second extraction. Per process; nothing is written anywhere.
 */
import type { AttachmentKind } from './contracts.js';
import type { FormatMetadata } from './extracted.js';

/** One extracted text. `tokens` is filled when the first page is cut (the worker counts it then). */
export interface CachedText {
  kind: AttachmentKind;
  contentType: string;
  text: string;
  format: 'markdown' | 'text';
  metadata: FormatMetadata;
  tokens: number | undefined;
}

/** A least-recently-used map bounded by entries and by the characters of their texts. */
export class TextCache {
  private readonly entries = new Map<string, CachedText>();
  private characters = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxCharacters: number,
  ) {}

  get(key: string): CachedText | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CachedText): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.characters -= old.text.length;
    }
    // A text larger than the whole cache is not kept (its pages then extract again).
    if (entry.text.length > this.maxCharacters) return;
    this.entries.set(key, entry);
    this.characters += entry.text.length;
    for (const [oldest, value] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.characters <= this.maxCharacters) break;
      this.entries.delete(oldest);
      this.characters -= value.text.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
