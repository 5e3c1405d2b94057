/**
 * @module reading/css
 * Just enough CSS to tell what a person cannot see: inline `style` declarations, the simple rules of `<style>`
 * blocks (`tag`, `.class`, `tag.class`, `#id`), colours, and the ways mail hides text (display:none,
 * visibility:hidden, opacity:0, font-size:0, zero height with overflow hidden, off-screen positions, negative text
 * indents). Every scan is one pass over its input; nothing backtracks.
 */

/** A colour as red, green, blue (0–255) and alpha (0–1). */
export interface Colour {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** Declarations as lower-case property → value (`!important` dropped); the last one of a property wins. */
export type Declarations = Map<string, string>;

/** CSS named colours that mail uses (the rest parse as unknown, which never hides anything). */
const NAMED_COLOURS: Record<string, string> = {
  white: 'ffffff',
  black: '000000',
  red: 'ff0000',
  green: '008000',
  blue: '0000ff',
  yellow: 'ffff00',
  gray: '808080',
  grey: '808080',
  silver: 'c0c0c0',
  lightgray: 'd3d3d3',
  lightgrey: 'd3d3d3',
  gainsboro: 'dcdcdc',
  whitesmoke: 'f5f5f5',
  snow: 'fffafa',
  ivory: 'fffff0',
  azure: 'f0ffff',
  ghostwhite: 'f8f8ff',
  floralwhite: 'fffaf0',
  mintcream: 'f5fffa',
  navy: '000080',
  maroon: '800000',
  orange: 'ffa500',
  purple: '800080',
  teal: '008080',
  darkgray: 'a9a9a9',
  darkgrey: 'a9a9a9',
  dimgray: '696969',
  dimgrey: '696969',
};

/** Two colours closer than this on every channel read as the same to a person. */
const SAME_COLOUR_DISTANCE = 16;
/** A colour this transparent (or more) is not seen. */
const INVISIBLE_ALPHA = 0.1;
/** An offset at least this far off-screen (in px) hides what it moves. */
const OFF_SCREEN_PX = 500;
/** Text this small (in px) or smaller is not read by a person. */
const TINY_FONT_PX = 1;

const WHITE: Colour = { r: 255, g: 255, b: 255, a: 1 };
export const DEFAULT_BACKGROUND = WHITE;
export const DEFAULT_COLOUR: Colour = { r: 0, g: 0, b: 0, a: 1 };

function hexColour(hex: string): Colour | undefined {
  if (!/^[0-9a-f]+$/i.test(hex)) return undefined;
  if (hex.length === 3 || hex.length === 4) {
    const part = (index: number) => parseInt(hex[index]! + hex[index]!, 16);
    return { r: part(0), g: part(1), b: part(2), a: hex.length === 4 ? part(3) / 255 : 1 };
  }
  if (hex.length === 6 || hex.length === 8) {
    const part = (index: number) => parseInt(hex.slice(index, index + 2), 16);
    return { r: part(0), g: part(2), b: part(4), a: hex.length === 8 ? part(6) / 255 : 1 };
  }
  return undefined;
}

/** A number of an `rgb()` argument: `255`, `100%`, `0.5`. */
function channel(value: string, percentScale: number): number {
  const number = parseFloat(value);
  if (Number.isNaN(number)) return NaN;
  return value.trim().endsWith('%') ? (number / 100) * percentScale : number;
}

/** Parses one colour value (`#fff`, `#ffffff`, `rgb(…)`, `rgba(…)`, a name, `transparent`); undefined if unknown. */
export function parseColour(raw: string): Colour | undefined {
  const value = raw.trim().toLowerCase();
  if (value.length === 0 || value.length > 64) return undefined;
  if (value === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  if (value[0] === '#') return hexColour(value.slice(1));
  const named = NAMED_COLOURS[value];
  if (named !== undefined) return hexColour(named);
  if (value.startsWith('rgb')) {
    const open = value.indexOf('(');
    const close = value.indexOf(')', open);
    if (open < 0 || close < 0) return undefined;
    const parts = value
      .slice(open + 1, close)
      .split(/[\s,/]+/)
      .filter((part) => part.length > 0);
    if (parts.length < 3) return undefined;
    const colour = {
      r: channel(parts[0]!, 255),
      g: channel(parts[1]!, 255),
      b: channel(parts[2]!, 255),
      a: parts[3] === undefined ? 1 : channel(parts[3], 1),
    };
    return [colour.r, colour.g, colour.b, colour.a].some(Number.isNaN) ? undefined : colour;
  }
  // A bare 3- or 6-digit hex, as old `bgcolor="ffffff"` attributes write it.
  if (value.length === 6 || value.length === 3) return hexColour(value);
  return undefined;
}

/** Whether a person sees no difference between the two colours (the text colour fully opaque or not). */
export function sameColour(text: Colour, background: Colour): boolean {
  return (
    Math.abs(text.r - background.r) <= SAME_COLOUR_DISTANCE &&
    Math.abs(text.g - background.g) <= SAME_COLOUR_DISTANCE &&
    Math.abs(text.b - background.b) <= SAME_COLOUR_DISTANCE
  );
}

/** Whether a colour is (nearly) fully transparent. */
export function transparent(colour: Colour): boolean {
  return colour.a < INVISIBLE_ALPHA;
}

/**
 * Parses declarations (`a: b; c: d`), as in a `style` attribute or inside a rule's braces, into `into`. Properties
 * and values are lower-cased, `!important` dropped. At most 4 KB of declarations are read.
 */
export function parseDeclarations(text: string, into: Declarations = new Map()): Declarations {
  const source = text.length > 4096 ? text.slice(0, 4096) : text;
  for (const declaration of source.split(';')) {
    const colon = declaration.indexOf(':');
    if (colon <= 0) continue;
    const property = declaration.slice(0, colon).trim().toLowerCase();
    let value = declaration
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    const important = value.indexOf('!important');
    if (important >= 0) value = value.slice(0, important).trim();
    if (property.length > 0 && property.length < 40) into.set(property, value);
  }
  return into;
}

/** A CSS length in px (`12px`, `9pt`, `1em`, `0`); undefined for what is not a length (percentages included). */
export function lengthInPx(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const token = value.trim().split(/\s+/)[0] ?? '';
  if (token.length > 32) return undefined;
  const match = /^(-?\d*\.?\d+)(px|pt|em|rem|ex|ch|in|cm|mm|vw|vh)?$/.exec(token);
  if (!match) return undefined;
  const number = parseFloat(match[1]!);
  switch (match[2]) {
    case undefined:
    case 'px':
      return number;
    case 'pt':
      return (number * 4) / 3;
    case 'em':
    case 'rem':
    case 'ch':
    case 'ex':
      return number * 16;
    case 'in':
      return number * 96;
    case 'cm':
      return number * 37.8;
    case 'mm':
      return number * 3.78;
    default:
      // Viewport units: only their sign and zero matter here.
      return number * 10;
  }
}

/** Whether declarations hide an element and what it holds (see the module comment). */
export function hides(declarations: Declarations): boolean {
  if (declarations.size === 0) return false;
  const get = (property: string) => declarations.get(property);
  if (get('display') === 'none') return true;
  const visibility = get('visibility');
  if (visibility === 'hidden' || visibility === 'collapse') return true;
  const opacity = get('opacity');
  if (opacity !== undefined && parseFloat(opacity) < INVISIBLE_ALPHA) return true;
  const fontSize = lengthInPx(get('font-size'));
  if (fontSize !== undefined && fontSize <= TINY_FONT_PX) return true;
  const overflow = get('overflow') ?? get('overflow-y') ?? get('overflow-x');
  if (overflow === 'hidden' || overflow === 'clip') {
    for (const property of ['max-height', 'height', 'max-width', 'width']) {
      const size = lengthInPx(get(property));
      if (size !== undefined && size <= 0) return true;
    }
  }
  const position = get('position');
  if (position === 'absolute' || position === 'fixed') {
    for (const property of ['left', 'top', 'right', 'bottom']) {
      const offset = lengthInPx(get(property));
      if (offset !== undefined && offset <= -OFF_SCREEN_PX) return true;
    }
    const clip = get('clip');
    if (
      clip !== undefined &&
      clip.length < 64 &&
      /^rect\(\s*0(px)?[\s,]+0(px)?[\s,]+0(px)?[\s,]+0(px)?\s*\)$/.test(clip)
    )
      return true;
  }
  for (const property of ['text-indent', 'margin-left', 'margin-top']) {
    const offset = lengthInPx(get(property));
    if (offset !== undefined && offset <= -OFF_SCREEN_PX) return true;
  }
  const transform = get('transform');
  if (transform !== undefined && /^scale\(\s*0(\.0+)?\s*\)$/.test(transform)) return true;
  return false;
}

/** The space-separated tokens of a value, a parenthesised group (`rgb(0, 0, 0)`) kept whole. One pass. */
function topLevelTokens(value: string): string[] {
  const tokens: string[] = [];
  let depth = 0;
  let start = 0;
  for (let at = 0; at <= value.length; at++) {
    const code = at < value.length ? value.charCodeAt(at) : 0x20;
    if (code === 0x28 /* ( */) depth++;
    else if (code === 0x29 /* ) */) depth = Math.max(0, depth - 1);
    else if (depth === 0 && (code === 0x20 || code === 0x09 || code === 0x0a)) {
      if (at > start) tokens.push(value.slice(start, at));
      start = at + 1;
    }
  }
  return tokens;
}

/** The text colour declared, if any. */
export function declaredColour(declarations: Declarations): Colour | undefined {
  const value = declarations.get('color');
  return value === undefined ? undefined : parseColour(value);
}

/**
 * The background declared: a colour, `image` when a background image is set (what shows under text is then
 * unknown), or undefined when none is declared. A transparent background colour counts as none.
 */
export function declaredBackground(declarations: Declarations): Colour | 'image' | undefined {
  const image = declarations.get('background-image');
  if (image !== undefined && image !== 'none') return 'image';
  const shorthand = declarations.get('background');
  const colourValue = declarations.get('background-color');
  if (shorthand !== undefined) {
    if (shorthand.includes('url(') || shorthand.includes('gradient(')) return 'image';
    if (colourValue === undefined) {
      for (const token of topLevelTokens(shorthand)) {
        const colour = parseColour(token);
        if (colour) return transparent(colour) ? undefined : colour;
      }
      return undefined;
    }
  }
  if (colourValue === undefined) return undefined;
  const colour = parseColour(colourValue);
  return colour && !transparent(colour) ? colour : undefined;
}

/** The rules of `<style>` blocks that can be matched cheaply, keyed by selector. */
export interface StyleRules {
  /** `tag` → declarations. */
  tags: Map<string, Declarations>;
  /** `.class` (any tag) → declarations. */
  classes: Map<string, Declarations>;
  /** `tag.class` → declarations, keyed `tag.class`. */
  tagClasses: Map<string, Declarations>;
  /** `#id` → declarations. */
  ids: Map<string, Declarations>;
  /**
   * A rule this reader cannot match (a descendant or attribute selector) sets a background: what is under text is
   * then unknown, so no text is judged the same colour as its background.
   */
  uncertainBackground: boolean;
}

export function emptyStyleRules(): StyleRules {
  return { tags: new Map(), classes: new Map(), tagClasses: new Map(), ids: new Map(), uncertainBackground: false };
}

/** At most this many selectors are kept from all `<style>` blocks. */
const MAX_RULES = 2000;

function add(map: Map<string, Declarations>, key: string, declarations: Declarations, rules: StyleRules): void {
  if (rules.tags.size + rules.classes.size + rules.tagClasses.size + rules.ids.size >= MAX_RULES) return;
  const existing = map.get(key);
  if (existing === undefined) map.set(key, new Map(declarations));
  else for (const [property, value] of declarations) existing.set(property, value);
}

/**
 * Adds the rules of one `<style>` block to `rules`. Rules inside at-rules (`@media`, `@supports`) are skipped: they
 * apply to some screens only (a mobile-only `display:none` hides nothing on a desktop). Comments are skipped.
 */
export function addStyleRules(css: string, rules: StyleRules): void {
  let depth = 0;
  let atRuleDepth = 0;
  let selectorStart = 0;
  let selector = '';
  let blockStart = -1;
  const length = css.length;
  for (let at = 0; at < length; at++) {
    const code = css.charCodeAt(at);
    if (code === 0x2f /* / */ && css.charCodeAt(at + 1) === 0x2a /* * */) {
      const close = css.indexOf('*/', at + 2);
      at = close < 0 ? length : close + 1;
      continue;
    }
    if (code === 0x7b /* { */) {
      if (depth === 0 || (atRuleDepth === 0 && depth > 0)) {
        selector = css.slice(selectorStart, at).trim();
      }
      depth++;
      if (selector.startsWith('@') && atRuleDepth === 0) atRuleDepth = depth;
      blockStart = at + 1;
      continue;
    }
    if (code === 0x7d /* } */) {
      if (depth > 0 && atRuleDepth === 0 && blockStart >= 0) {
        applyRule(selector, css.slice(blockStart, at), rules);
      }
      if (depth === atRuleDepth) atRuleDepth = 0;
      depth = Math.max(0, depth - 1);
      blockStart = -1;
      selectorStart = at + 1;
      selector = '';
      continue;
    }
    if (code === 0x3b /* ; */ && depth === 0) selectorStart = at + 1;
  }
}

const SIMPLE_SELECTOR = /^([a-z][a-z0-9]*)?([.#][a-z0-9_-]+)?$/i;

function applyRule(selectorText: string, body: string, rules: StyleRules): void {
  if (selectorText.startsWith('@')) return;
  const declarations = parseDeclarations(body);
  if (declarations.size === 0) return;
  const setsBackground = declaredBackground(declarations) !== undefined;
  for (const raw of selectorText.split(',')) {
    const selector = raw.trim().toLowerCase();
    const match = selector.length <= 128 ? SIMPLE_SELECTOR.exec(selector) : null;
    if (!match || selector.length === 0) {
      if (setsBackground) rules.uncertainBackground = true;
      continue;
    }
    const tag = match[1];
    const qualifier = match[2];
    if (qualifier === undefined) {
      if (tag !== undefined) add(rules.tags, tag, declarations, rules);
    } else if (qualifier[0] === '#') {
      add(rules.ids, qualifier.slice(1), declarations, rules);
    } else if (tag === undefined) {
      add(rules.classes, qualifier.slice(1), declarations, rules);
    } else {
      add(rules.tagClasses, `${tag}.${qualifier.slice(1)}`, declarations, rules);
    }
  }
}

/**
 * The declarations that apply to an element: its tag's rules, then its classes', then its id's, then its inline
 * style (the order of CSS specificity, which is what mail relies on). Undefined when nothing applies.
 */
export function declarationsFor(
  tag: string,
  classAttribute: string | undefined,
  idAttribute: string | undefined,
  style: string | undefined,
  rules: StyleRules,
): Declarations | undefined {
  let result: Declarations | undefined;
  const merge = (declarations: Declarations | undefined) => {
    if (declarations === undefined) return;
    result ??= new Map();
    for (const [property, value] of declarations) result.set(property, value);
  };
  merge(rules.tags.get(tag));
  if (classAttribute !== undefined && (rules.classes.size > 0 || rules.tagClasses.size > 0)) {
    const classes = classAttribute.length > 1024 ? classAttribute.slice(0, 1024) : classAttribute;
    for (const name of classes.toLowerCase().split(/\s+/)) {
      if (name.length === 0) continue;
      merge(rules.classes.get(name));
      merge(rules.tagClasses.get(`${tag}.${name}`));
    }
  }
  if (idAttribute !== undefined && rules.ids.size > 0) merge(rules.ids.get(idAttribute.toLowerCase()));
  if (style !== undefined && style.length > 0) {
    result ??= new Map();
    parseDeclarations(style, result);
  }
  return result;
}
