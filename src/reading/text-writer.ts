/**
 * @module reading/text-writer
 * Writes text as lines with their prefixes (`> ` of quotes, the bullets and indents of lists), white space
 * normalised as it goes: one space between words, no trailing spaces, at most one blank line in a row. Bounded:
 * past `max` characters nothing more is written and `truncated` is set. Each prefix is written once per line, and
 * prefixes nest at most {@link MAX_SEGMENTS} deep, so the work per character is constant.
 */

/** A line prefix: `first` on the first line written inside it (a bullet), `rest` on the following ones. */
export interface Segment {
  first: string;
  rest: string;
  used: boolean;
  /** A quote marker (`> `): written on blank lines too, so that a quote stays one run of lines. */
  quote: boolean;
  /** A suspended prefix is not written (an answer inside Outlook's unmarked quoted history). */
  active: boolean;
}

/** Prefixes nest at most this deep (deeper lists and quotes are written at this depth). */
export const MAX_SEGMENTS = 8;

export class TextWriter {
  private readonly parts: string[] = [];
  private size = 0;
  private readonly segments: Segment[] = [];
  /** Newlines at the end of what is written (0: inside a line). */
  private trailingNewlines = 0;
  private started = false;
  private pendingBreaks = 0;
  private pendingSpace = false;
  /** The quote markers of blank lines to write: the fewer of those when the break was asked for and now. */
  private breakPrefix: string | undefined;
  truncated = false;

  /**
   * @param max the bound of the output, in characters
   * @param inline when true, line breaks are written as spaces (link texts, table cells, headings)
   */
  constructor(
    private readonly max: number,
    private readonly inline = false,
  ) {}

  /** Characters written so far. */
  get written(): number {
    return this.size;
  }

  get full(): boolean {
    return this.truncated;
  }

  private emit(text: string): void {
    if (this.truncated || text.length === 0) return;
    if (this.size + text.length > this.max) {
      this.parts.push(text.slice(0, Math.max(0, this.max - this.size)));
      this.size = this.max;
      this.truncated = true;
      return;
    }
    this.parts.push(text);
    this.size += text.length;
  }

  /** Asks for a line break (1) or a blank line (2) before whatever is written next. */
  requestBreak(lines: 1 | 2): void {
    if (this.inline) {
      this.pendingSpace = this.started;
      return;
    }
    if (lines > this.pendingBreaks) this.pendingBreaks = lines;
    const prefix = this.quotePrefix();
    if (this.breakPrefix === undefined || prefix.length < this.breakPrefix.length) this.breakPrefix = prefix;
    this.pendingSpace = false;
  }

  /** A `<br>`: a line break, or a blank line when the line is already empty (two `<br>` in a row). */
  lineBreak(): void {
    if (this.inline) {
      this.pendingSpace = this.started;
      return;
    }
    if (!this.started) return;
    if (this.pendingBreaks >= 1 || this.trailingNewlines >= 1) this.pendingBreaks = 2;
    else this.pendingBreaks = 1;
    this.pendingSpace = false;
  }

  /** A space before whatever is written next on this line. */
  space(): void {
    if (this.started && this.trailingNewlines === 0 && this.pendingBreaks === 0) this.pendingSpace = true;
  }

  private quotePrefix(): string {
    const markers: string[] = [];
    for (const segment of this.segments) if (segment.active && segment.quote) markers.push('>');
    return markers.join(' ');
  }

  /** Writes the pending breaks, the line's prefix and a pending space, before content. */
  private beforeContent(): void {
    if (!this.started) {
      this.started = true;
      this.pendingBreaks = 0;
      this.trailingNewlines = 1;
    } else if (this.pendingBreaks > 0) {
      const needed = this.pendingBreaks - this.trailingNewlines;
      const current = this.quotePrefix();
      const blank =
        this.breakPrefix !== undefined && this.breakPrefix.length < current.length ? this.breakPrefix : current;
      for (let line = 0; line < needed; line++) {
        if (line > 0 || this.trailingNewlines > 0) this.emit(blank);
        this.emit('\n');
      }
      if (needed > 0) this.trailingNewlines = this.pendingBreaks;
      this.pendingSpace = false;
    }
    this.pendingBreaks = 0;
    this.breakPrefix = undefined;
    if (this.trailingNewlines > 0) {
      for (const segment of this.segments) {
        if (!segment.active) continue;
        this.emit(segment.used ? segment.rest : segment.first);
        segment.used = true;
      }
      this.trailingNewlines = 0;
    } else if (this.pendingSpace) {
      this.emit(' ');
    }
    this.pendingSpace = false;
  }

  /** Writes text whose white space is already collapsed (a leading or trailing space becomes a pending space). */
  text(text: string): void {
    if (this.truncated || text.length === 0) return;
    const startsWithSpace = text.charCodeAt(0) === 0x20;
    const endsWithSpace = text.charCodeAt(text.length - 1) === 0x20;
    const body = startsWithSpace || endsWithSpace ? text.trim() : text;
    if (startsWithSpace) this.space();
    if (body.length > 0) {
      this.beforeContent();
      this.emit(this.inline ? body.replace(/\n/g, ' ') : body);
    }
    if (endsWithSpace) this.space();
  }

  /** Writes a token as it is (a link, an emphasis), separated from the text before by a pending space only. */
  token(token: string): void {
    if (this.truncated || token.length === 0) return;
    this.beforeContent();
    this.emit(token);
  }

  /** Writes preformatted text: its lines kept (each with the prefixes), its spaces as written. */
  preformatted(text: string): void {
    if (this.inline) {
      this.text(text.replace(/\s+/g, ' '));
      return;
    }
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (index > 0) {
        if (this.trailingNewlines > 0 || !this.started) this.pendingBreaks = 2;
        else this.pendingBreaks = 1;
      }
      const content = line.replace(/\s+$/, '');
      if (content.length > 0) this.token(content);
    });
  }

  /** Opens a prefix; returns it, to close with {@link popSegment}. Past {@link MAX_SEGMENTS}, nothing is added. */
  pushSegment(first: string, rest: string, quote = false): Segment | undefined {
    if (this.inline || this.segments.length >= MAX_SEGMENTS) return undefined;
    const segment: Segment = { first, rest, used: false, quote, active: true };
    this.segments.push(segment);
    return segment;
  }

  popSegment(segment: Segment | undefined): void {
    if (segment === undefined) return;
    const index = this.segments.lastIndexOf(segment);
    if (index >= 0) this.segments.splice(index, 1);
  }

  /** Adds a quote prefix under all others (Outlook's quoted history runs to the end of the body). */
  addOuterQuote(): Segment | undefined {
    if (this.inline) return undefined;
    const segment: Segment = { first: '> ', rest: '> ', used: false, quote: true, active: true };
    this.segments.unshift(segment);
    this.requestBreak(1);
    return segment;
  }

  /** Suspends or resumes a prefix; the text after the change starts on a new line. */
  setActive(segment: Segment | undefined, active: boolean): void {
    if (segment === undefined || segment.active === active) return;
    this.requestBreak(1);
    segment.active = active;
  }

  /** What was written, white space normalised. */
  toString(): string {
    const text = this.parts.join('');
    if (this.inline) return text.trim();
    const lines = text.split('\n');
    const out: string[] = [];
    let blank = 0;
    for (const raw of lines) {
      const line = raw.trimEnd();
      if (line.length === 0 || /^>[> ]*$/.test(line)) {
        blank++;
        if (blank > 1 && line.length === 0) continue;
      } else blank = 0;
      out.push(line);
    }
    return out.join('\n').trim();
  }
}
