/**
 * @module mail-extract/codes
 * One-time codes in a mail's subject and visible text: tokens of 4 to 8 digits (`123456`, `123-456`, `123 456`) or of
 * 4 to 10 letters and digits with at least one digit (`X7K9PQ`; up to 16 in hyphenated groups, `AB12-CD34`), found within {@link NEAR} characters of a
 * word like code, PIN, verification, OTP or passcode, ranked best first. Linear in the text (regular expressions with
 * no backtracking over unbounded runs, one merge of two sorted lists), and bounded: the caller caps the text, and at
 * most {@link MAX_CANDIDATES} tokens and {@link MAX_KEYWORDS} keywords of a text are looked at. Pure.
 */
import type { ExtractedCode, ExtractedWhere } from './contracts.js';

/** How far (characters) a keyword may be from a code. */
const NEAR = 100;
/** Tokens of one text looked at, at most. */
const MAX_CANDIDATES = 2_000;
/** Keywords of one text looked at, at most. */
const MAX_KEYWORDS = 500;
/** Codes returned, at most. */
export const MAX_CODES = 5;

const KEYWORDS =
  /\b(?:codes?|pin|otp|passcode|pass code|one[- ]time|verification|verify|verifying|security|confirmation|confirm|2fa|mfa|login|sign[- ]?in|token|código|code de|kod|pincode)\b/gi;
/** A token: digits in two or three groups (`123 456`, `123-456`), or letters and digits in up to three groups joined by hyphens. */
const TOKENS =
  /(?<![\w@./#:=+%&-])(\d{3,4}(?:[- ]\d{3,4}){1,2}(?![\w-])|[A-Za-z0-9]{2,10}(?:-[A-Za-z0-9]{2,10}){0,2})(?![\w@/%&]|[.:,-]?\w)/g;

interface Candidate {
  value: string;
  score: number;
  where: ExtractedWhere;
  context: string;
}

/** The keywords' positions (start and end) in `text`, in order. */
function keywordSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  for (const match of text.matchAll(KEYWORDS)) {
    spans.push([match.index, match.index + match[0].length]);
    if (spans.length >= MAX_KEYWORDS) break;
  }
  return spans;
}

/** The code a token stands for (groups joined), or undefined when it does not look like one. */
function codeOf(token: string): string | undefined {
  const groups = token.split(/[- ]/);
  const joined = groups.join('');
  if (/^\d+$/.test(joined)) {
    if (joined.length < 4 || joined.length > 8) return undefined;
    // `123 456` and `123-456` are one code; `Order 2024 12345` is not (groups of a code are alike in length).
    if (groups.length > 1 && groups.some((group) => group.length !== groups[0]!.length)) return undefined;
    return joined;
  }
  if (
    joined.length < 4 ||
    joined.length > (groups.length > 1 ? 16 : 10) ||
    !/\d/.test(joined) ||
    !/[A-Za-z]/.test(joined)
  )
    return undefined;
  // Letters and digits mixed, upper case or all one case: `x7k9pq` is a code, `Step2` or `mp4` are words.
  if (!/^[A-Z0-9]+$/.test(joined) && !/^[a-z0-9]+$/.test(joined)) return undefined;
  if (/^[a-z]+\d{1,2}$/i.test(joined) && joined.length < 6) return undefined;
  return token.includes('-') ? token : joined;
}

/** Score of a token at `distance` characters from the nearest keyword (lower distance, higher score). */
function scoreOf(value: string, distance: number, before: boolean, alone: boolean): number {
  let score = 100 - distance;
  if (/^\d{6}$/.test(value)) score += 30;
  else if (/^\d+$/.test(value)) score += 20;
  else score += 10;
  // `Your code is 123456` (a keyword before it) reads more surely than a number only followed by one.
  if (before) score += 10;
  if (alone) score += 15;
  return score;
}

/** The words around a match, whitespace collapsed. */
function contextOf(text: string, start: number, end: number): string {
  const from = Math.max(0, start - 40);
  const to = Math.min(text.length, end + 40);
  return `${from > 0 ? '…' : ''}${text.slice(from, to).replace(/\s+/g, ' ').trim()}${to < text.length ? '…' : ''}`;
}

/** The code candidates of one text near its keywords. */
function candidatesIn(text: string, where: ExtractedWhere): Candidate[] {
  const spans = keywordSpans(text);
  if (spans.length === 0) return [];
  const found: Candidate[] = [];
  let next = 0; // the first keyword span that starts after the token (spans are in order, as the tokens)
  let looked = 0;
  for (const match of text.matchAll(TOKENS)) {
    if (++looked > MAX_CANDIDATES) break;
    const token = match[1]!;
    const start = match.index;
    const end = start + token.length;
    while (next < spans.length && spans[next]![0] < start) next++;
    const previous = spans[next - 1];
    const following = spans[next];
    // A token inside a keyword (`code` itself) is none.
    if (previous && previous[1] > start) continue;
    const value = codeOf(token);
    if (value === undefined) continue;
    const behind = previous ? start - previous[1] : Infinity;
    const ahead = following ? following[0] - end : Infinity;
    const distance = Math.min(behind, ahead);
    if (distance > NEAR) continue;
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    const lineEnd = text.indexOf('\n', end);
    const alone = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd).trim() === token;
    // A year (`© 2024`, `Order 2024`) is no code, unless it stands alone on its line.
    if (/^(19|20)\d\d$/.test(value) && !alone) continue;
    found.push({
      value,
      score: scoreOf(value, distance, behind <= NEAR, alone) + (where === 'subject' ? 5 : 0),
      where,
      context: contextOf(text, start, end),
    });
  }
  return found;
}

/** The one-time codes of a subject and a visible body text, best first, each value once. Pure. */
export function extractCodes(subject: string, text: string): ExtractedCode[] {
  const all = [...candidatesIn(subject, 'subject'), ...candidatesIn(text, 'body')];
  all.sort((left, right) => right.score - left.score);
  const seen = new Set<string>();
  const codes: ExtractedCode[] = [];
  for (const { value, where, context } of all) {
    if (seen.has(value)) continue;
    seen.add(value);
    codes.push({ value, where, context });
    if (codes.length >= MAX_CODES) break;
  }
  return codes;
}
