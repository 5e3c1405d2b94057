/**
 * @module reading/invisible
 * Characters a person never sees but a model reads: zero-width characters, bidi controls (which reorder what a person
 * sees), Unicode tag characters ("ASCII smuggling": U+E0020–U+E007F spell text invisibly) and the variation
 * selectors of the supplement (which can carry bytes the same way). One pass, no backtracking.
 */

/**
 * Removed wherever they are:
 * - U+00AD soft hyphen, U+034F combining grapheme joiner (marketing preheader padding), U+180E Mongolian vowel
 *   separator, U+200B zero-width space, U+200C zero-width non-joiner, U+200E/U+200F direction marks, U+2060 word
 *   joiner and U+2061–U+2064 invisible operators, U+FEFF zero-width no-break space (byte-order mark);
 * - U+202A–U+202E and U+2066–U+2069: bidi embeddings, overrides and isolates;
 * - U+E0000–U+E007F tag characters and U+E0100–U+E01EF variation selectors (as surrogate pairs: U+DB40 then
 *   U+DC00–U+DC7F or U+DD00–U+DDEF).
 * U+200D zero-width joiner is kept between two pictographs (it builds emoji such as 👩‍💻) and removed elsewhere.
 */
const INVISIBLE =
  /\u034f|[\u00ad\u180e\u200b\u200c\u200e\u200f\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]|\u200d|\udb40[\udc00-\udc7f\udd00-\uddef]/g;

/** A quick test before the replacing pass (most text has none). */
const ANY_INVISIBLE =
  /\u034f|[\u00ad\u180e\u200b-\u200f\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]|\udb40[\udc00-\udc7f\udd00-\uddef]/;

const PICTOGRAPH = /\p{Extended_Pictographic}/u;

/** The code point ending just before `index` (a surrogate pair read whole). */
function codePointBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) return text.slice(index - 2, index);
  return text.slice(index - 1, index);
}

/** The code point starting at `index`. */
function codePointAt(text: string, index: number): string {
  const point = text.codePointAt(index);
  return point === undefined ? '' : String.fromCodePoint(point);
}

/** `text` without its invisible characters, and how many UTF-16 code units were removed. */
export function removeInvisibleCharacters(text: string): { text: string; removed: number } {
  if (!ANY_INVISIBLE.test(text)) return { text, removed: 0 };
  let removed = 0;
  const out = text.replace(INVISIBLE, (match: string, offset: number) => {
    if (
      match === '\u200d' &&
      PICTOGRAPH.test(codePointBefore(text, offset)) &&
      PICTOGRAPH.test(codePointAt(text, offset + 1))
    ) {
      return match;
    }
    removed += match.length;
    return '';
  });
  return { text: out, removed };
}
