/**
 * @module reading/quotes
 * Collapses what a reply repeats, keeping what the person wrote: quoted history (`>` lines after an `On … wrote:`
 * attribution, Outlook's `From: … Sent: …` header and what follows it, `-----Original Message-----`) becomes one
 * line such as `[quoted history from Alice Smith, 2026-10-01: 42 lines collapsed]`; text written *between* quoted
 * lines (inline answers) is kept, each after the quoted line it answers (`> question`). Signatures (`-- `, a
 * sign-off's contact block, "Sent from my iPhone") and legal disclaimers become one line too.
 *
 * It reads text (the Markdown or text of reading/html-to-markdown, or a text/plain body), line by line, once; every
 * pattern is tried on a bounded line (at most {@link MAX_PATTERN_LINE} characters) and anchored, so nothing
 * backtracks over the body.
 */
import type { CollapsedText, CollapseOptions } from './contracts.js';

/** Lines longer than this are never attributions, headers, separators or sign-offs (and are not matched). */
const MAX_PATTERN_LINE = 400;
/** A quoted line kept as the context of an answer is cut after this many characters. */
const MAX_CONTEXT = 200;

/** Verbs of attributions (`On …, Alice wrote:`) in the languages of common mail clients. */
const WROTE_VERBS = [
  'wrote',
  'writes',
  'schrieb',
  'a écrit',
  'escribió',
  'ha scritto',
  'schreef',
  'escreveu',
  'skrev',
  'napisał(a)',
  'napisała',
  'napisał',
  'pisze',
  'napsal(a)',
  'napsal',
  'написал(а)',
  'написала',
  'написал',
  'kirjoitti',
  'yazdı',
  'írta',
  'scrise',
  '写道',
  '書きました',
  '작성',
];
/** An attribution's ending: a verb, then a colon (ASCII or full-width), at the end of the line. */
const WROTE_END = new RegExp(`(${WROTE_VERBS.map(escapeRegExp).join('|')})\\s?[:：]$`, 'i');
/** The word an attribution starts with (`On`, `Am`, `Le`, `El`, …). */
const ON_WORD = /^(on|am|le|el|il giorno|il|op|em|på|den|w dniu|dne|в|el día)\s/i;

/** The word that begins a quoted message's header block (`From:` of Outlook's and other clients' localised headers). */
export const FROM_WORD = /^(from|von|de|da|van|från|fra|od|от|lähettäjä|kimden|feladó|发件人|差出人)\s?[:：]/i;
const SENT_WORD =
  /^(sent|gesendet|envoyé|enviado|inviato|verzonden|skickat|sendt|wysłano|отправлено|date|datum|fecha|data|päivämäärä|tarih|发送时间|日時)\s?[:：]/i;
const TO_WORD = /^(to|an|à|para|a|aan|till|til|do|кому|vastaanottaja|kime|收件人|宛先|cc|kopie|copie)\s?[:：]/i;
const SUBJECT_WORD =
  /^(subject|betreff|objet|asunto|oggetto|onderwerp|ämne|emne|temat|тема|aihe|konu|主题|件名)\s?[:：]/i;
const HEADER_LINE = new RegExp(
  [FROM_WORD, SENT_WORD, TO_WORD, SUBJECT_WORD, /^(reply-to|antwort an|répondre à)\s?:/i]
    .map((pattern) => pattern.source)
    .join('|'),
  'i',
);

const ORIGINAL_MESSAGE =
  /^-{2,}\s?(original message|ursprüngliche nachricht|message d'origine|mensaje original|messaggio originale|oorspronkelijk bericht|originalmeddelande|oprindelig meddelelse|opprinnelig melding|alkuperäinen viesti|wiadomość oryginalna|исходное сообщение|mensagem original)\s?-{2,}$/i;
const FORWARDED =
  /^(-{2,}\s?(forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|vidarebefordrat meddelande|mensagem encaminhada|пересылаемое сообщение)\s?-{2,}|begin forwarded message:|anfang der weitergeleiteten nachricht:|début du message réexpédié ?:|inicio del mensaje reenviado:)$/i;
/** Outlook's rule above its header of a quoted message (a line of underscores). */
const UNDERSCORE_RULE = /^_{10,}$/;

/** Lines that a phone's mail app adds, alone or as the start of a signature. */
const SENT_FROM_DEVICE =
  /^(sent from my \S.{0,40}|sent from (mail|outlook|yahoo mail)\b.{0,40}|get outlook for (ios|android)|sent from outlook for (ios|android)|von meinem \S.{0,30} gesendet|envoyé de mon \S.{0,30}|enviado desde mi \S.{0,30}|inviato da \S.{0,30}|verzonden vanaf mijn \S.{0,30}|skickat från min \S.{0,30})$/i;
/** A closing phrase that begins a signature (the name follows on the next line). */
const SIGN_OFF =
  /^(best|best regards|best wishes|kind regards|warm regards|warmest regards|regards|many thanks|thanks|thanks again|thanks so much|thank you|cheers|sincerely|yours|yours sincerely|yours truly|all the best|talk soon|take care|mit freundlichen grüßen|mit freundlichen grüssen|viele grüße|beste grüße|liebe grüße|grüße|cordialement|bien cordialement|bien à vous|saludos|un saludo|atentamente|cordiali saluti|saluti|distinti saluti|met vriendelijke groet|groeten|vriendelijke groet|med vänliga hälsningar|hälsningar|med venlig hilsen|mvh|pozdrawiam|с уважением|atenciosamente|abraços)[\s,.!—–-]*$/i;
/** What a contact block's lines hold: a phone number, an address, a site. */
const CONTACT =
  /(\+?\d[\d\s().-]{6,}\d|@[a-z0-9-]+\.|https?:\/\/|www\.|^(tel|phone|mobile|mob|cell|fax|t|m|e|w|p)\s?[:.]|linkedin|twitter)/i;
/** Words of a legal disclaimer; a closing paragraph with two of them (or a heading of one) is collapsed. */
const DISCLAIMER_WORDS = [
  'confidential',
  'intended recipient',
  'intended solely',
  'intended only',
  'privileged',
  'if you have received this',
  'received this email in error',
  'received this message in error',
  'in error',
  'notify the sender',
  'unauthorized',
  'unauthorised',
  'prohibited',
  'disclaimer',
  'vertraulich',
  'irrtümlich',
  'destinataire',
  'confidentiel',
  'confidencial',
  'riservat',
  'virus',
  'legally binding',
];
const DISCLAIMER_HEADING =
  /^(confidentiality notice|confidentiality|disclaimer|legal notice|important notice|privileged)/i;

/** `1 line`, `3 lines`. */
function lineCount(count: number): string {
  return count === 1 ? '1 line' : `${count} lines`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** How deeply a line is quoted (`>`, `> >`, `>>`) and its text after the markers. */
function quoteOf(line: string): { level: number; content: string } {
  let level = 0;
  let at = 0;
  while (at < line.length) {
    const code = line.charCodeAt(at);
    if (code === 0x3e /* > */) level++;
    else if (code !== 0x20 || level === 0) break;
    at++;
  }
  return level === 0 ? { level, content: line } : { level, content: line.slice(at).trim() };
}

const isBlank = (line: string) => line.trim().length === 0;

/** A line as patterns read it: trimmed, without Markdown emphasis or escapes around it. */
function bare(line: string): string {
  if (line.length > MAX_PATTERN_LINE) return '';
  return line
    .trim()
    .replace(/^[*_\\]+|[*_\\]+$/g, '')
    .replace(/\*\*/g, '')
    .trim();
}

/** How many lines an attribution starting at `index` takes (1, or 2 when Gmail wrapped it), or 0. */
function attributionAt(lines: string[], index: number): number {
  const line = bare(lines[index]!);
  if (line.length === 0 || quoteOf(lines[index]!).level > 0) return 0;
  const lower = line.toLowerCase();
  if (WROTE_END.test(line.slice(-40))) return 1;
  if (ON_WORD.test(line)) {
    if (line.endsWith(':') && WROTE_VERBS.some((verb) => lower.includes(` ${verb} `))) return 1;
    const next = lines[index + 1];
    if (next !== undefined && next.length < 200 && WROTE_END.test(bare(next).slice(-40))) return 2;
  }
  return 0;
}

/** The end (exclusive) of Outlook's header block starting at `index` (`From:`, then `Sent:`/`Date:`, `To:`/`Subject:`), or -1. */
function headerEnd(lines: string[], index: number): number {
  const first = lines[index];
  if (first === undefined || !FROM_WORD.test(bare(first))) return -1;
  let sent = false;
  let addressed = false;
  let at = index + 1;
  for (; at < lines.length && at < index + 10; at++) {
    const line = bare(lines[at]!);
    if (line.length === 0) {
      if (sent) break;
      continue;
    }
    if (SENT_WORD.test(line)) sent = true;
    else if (TO_WORD.test(line) || SUBJECT_WORD.test(line)) addressed = true;
    else if (!HEADER_LINE.test(line)) break;
  }
  return sent && addressed ? at : -1;
}

/** Who and when, read from an attribution or a header. */
interface Origin {
  from?: string;
  date?: string;
  subject?: string;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  janv: 1,
  ene: 1,
  gen: 1,
  feb: 2,
  fév: 2,
  févr: 2,
  fev: 2,
  mar: 3,
  mär: 3,
  mars: 3,
  mrt: 3,
  apr: 4,
  avr: 4,
  abr: 4,
  may: 5,
  mai: 5,
  mayo: 5,
  mag: 5,
  mei: 5,
  jun: 6,
  juin: 6,
  giu: 6,
  jul: 7,
  juil: 7,
  lug: 7,
  aug: 8,
  août: 8,
  ago: 8,
  sep: 9,
  sept: 9,
  set: 9,
  oct: 10,
  okt: 10,
  out: 10,
  ott: 10,
  nov: 11,
  dec: 12,
  dez: 12,
  déc: 12,
  dic: 12,
};

function isoDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31 || year < 1970 || year > 2200) return undefined;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A date (YYYY-MM-DD) found in a header's or an attribution's text, in the forms mail clients write. */
export function looseDate(text: string): string | undefined {
  const sample = text.slice(0, 200);
  const iso = /(\d{4})-(\d{2})-(\d{2})/.exec(sample);
  if (iso) return isoDate(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const dotted = /\b(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})\b/.exec(sample);
  if (dotted) return isoDate(Number(dotted[3]), Number(dotted[2]), Number(dotted[1]));
  const parsed = Date.parse(sample.replace(/\s(at|um|à|a las|alle|om)\s/gi, ' ').replace(/\(.*?\)/g, ''));
  if (!Number.isNaN(parsed)) {
    const date = new Date(parsed);
    return isoDate(date.getFullYear(), date.getMonth() + 1, date.getDate());
  }
  const year = /\b(19|20)\d{2}\b/.exec(sample);
  if (!year) return undefined;
  const words = sample.toLowerCase().split(/[\s,.]+/);
  let month: number | undefined;
  let day: number | undefined;
  for (const word of words) {
    const named = MONTHS[word] ?? MONTHS[word.slice(0, 4)] ?? MONTHS[word.slice(0, 3)];
    if (month === undefined && named !== undefined && /^\p{L}+$/u.test(word)) month = named;
    else if (day === undefined && /^\d{1,2}$/.test(word)) day = Number(word);
  }
  return month !== undefined && day !== undefined ? isoDate(Number(year[0]), month, day) : undefined;
}

/** A display name without its quotes and brackets; the address when there is no name. */
function personOf(text: string): string | undefined {
  const angle = text.indexOf('<');
  const mailto = text.indexOf('[mailto:');
  const cut = angle >= 0 ? angle : mailto >= 0 ? mailto : text.length;
  const name = text
    .slice(0, cut)
    .replace(/["'“”]/g, '')
    .replace(/^[\s,(]+|[\s,(]+$/g, '')
    .trim();
  if (name.length > 0 && name.length <= 80) return name;
  const address = /[^\s<>[\]:]+@[^\s<>[\]]+/.exec(text);
  return address ? address[0] : undefined;
}

/** Who wrote, and when, as an attribution (`On Tue, Oct 1, 2026 at 10:03 AM Alice <a@x> wrote:`) says it. */
function parseAttribution(text: string): Origin {
  let line = bare(text).replace(ON_WORD, '');
  const lower = line.toLowerCase();
  for (const verb of WROTE_VERBS) {
    const at = lower.lastIndexOf(verb);
    if (at >= 0) {
      line = `${line.slice(0, at)} ${line.slice(at + verb.length)}`;
      break;
    }
  }
  line = line.replace(/[:：]\s*$/, '').trim();
  // The name follows the last time or date in the line.
  const markers =
    /\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:\s?[ap]\.?\s?m\.?)?|\d{4}-\d{2}-\d{2}|\b\d{4}\b|\d{1,2}\/\d{1,2}\/\d{2,4}/gi;
  let end = 0;
  for (let match = markers.exec(line); match; match = markers.exec(line)) end = match.index + match[0].length;
  const origin: Origin = {};
  const from = personOf(line.slice(end).replace(/^\s*(,|um|at|à|alle)\s/i, ''));
  if (from !== undefined) origin.from = from;
  const date = end > 0 ? looseDate(line.slice(0, end)) : undefined;
  if (date !== undefined) origin.date = date;
  return origin;
}

/** Who, when and what, as Outlook's header block says it. */
function parseHeader(lines: string[], start: number, end: number): Origin {
  const origin: Origin = {};
  for (let at = start; at < end; at++) {
    const line = bare(lines[at]!);
    const value = line.slice(line.search(/[:：]/) + 1).trim();
    if (FROM_WORD.test(line)) {
      const from = personOf(value);
      if (from !== undefined) origin.from = from;
    } else if (SENT_WORD.test(line)) {
      const date = looseDate(value);
      if (date !== undefined) origin.date = date;
    } else if (SUBJECT_WORD.test(line) && value.length > 0) origin.subject = value.slice(0, 120);
  }
  return origin;
}

function describe(origin: Origin | undefined): string {
  const parts = [origin?.from, origin?.date].filter((part): part is string => part !== undefined);
  return parts.length > 0 ? ` from ${parts.join(', ')}` : '';
}

/** Whether a line is one of the markers this module writes. */
const MARKER = /^\[(quoted|inline replies|forwarded message|signature|legal disclaimer)\b/;

/** The quoted line an answer answers: the last non-blank one (with the one before it when it is very short). */
function contextOf(quoted: string[]): { text: string; used: number } {
  const contents: string[] = [];
  for (let at = quoted.length - 1; at >= 0 && contents.length < 2; at--) {
    const content = quoteOf(quoted[at]!).content;
    if (content.length > 0 && !/^>[> ]*$/.test(content)) contents.unshift(content);
    else if (contents.length > 0) break;
  }
  if (contents.length === 0) return { text: '', used: 0 };
  const last = contents.at(-1)!;
  const text = last.length < 30 && contents.length === 2 ? contents.join(' ') : last;
  const used = last.length < 30 && contents.length === 2 ? 2 : 1;
  return { text: text.length > MAX_CONTEXT ? `${text.slice(0, MAX_CONTEXT)}…` : text, used };
}

/** The quoted-history pass (see the module comment). */
function collapseQuoted(lines: string[], options: CollapseOptions, stats: CollapsedText): string[] {
  const mode = options.quoted ?? 'collapse';
  const out: string[] = [];
  const count = lines.length;
  // quotedAfter[i]: whether a quoted line comes at or after line i.
  const quotedAfter = new Uint8Array(count + 1);
  for (let at = count - 1; at >= 0; at--) quotedAfter[at] = quoteOf(lines[at]!).level > 0 ? 1 : quotedAfter[at + 1]!;
  let quotesAllowed = options.bareQuotes ?? true;
  let origin: Origin | undefined;
  let announced = true;

  const nonBlank = (from: number, to: number) => {
    let total = 0;
    for (let at = from; at < to; at++) if (!isBlank(lines[at]!)) total++;
    return total;
  };
  const collapseRest = (from: number) => {
    const total = nonBlank(from, count);
    stats.quotedCollapsed += total;
    if (mode === 'collapse' && total > 0)
      out.push('', `[quoted history${describe(origin)}: ${lineCount(total)} collapsed]`);
  };
  const startsHistory = (at: number) => {
    const line = bare(lines[at]!);
    return (
      attributionAt(lines, at) > 0 ||
      ORIGINAL_MESSAGE.test(line) ||
      FORWARDED.test(line) ||
      headerEnd(lines, at) >= 0 ||
      (UNDERSCORE_RULE.test(line) && headerEnd(lines, at + 1) >= 0)
    );
  };

  let index = 0;
  while (index < count) {
    const line = lines[index]!;
    if (quotesAllowed && quoteOf(line).level > 0) {
      let end = index;
      while (end < count) {
        if (quoteOf(lines[end]!).level > 0) {
          end++;
          continue;
        }
        let next = end;
        while (next < count && isBlank(lines[next]!)) next++;
        if (next < count && next > end && quoteOf(lines[next]!).level > 0) end = next;
        else break;
      }
      const quoted = lines.slice(index, end);
      let next = end;
      while (next < count && isBlank(lines[next]!)) next++;
      const answered = next < count && !startsHistory(next);
      if (answered) {
        const context = contextOf(quoted);
        const earlier = quoted.filter((quotedLine) => quoteOf(quotedLine).content.length > 0).length - context.used;
        if (!announced && origin !== undefined) {
          if (mode === 'collapse') out.push(`[inline replies to ${describe(origin).slice(6) || 'the quoted message'}]`);
          announced = true;
        }
        if (earlier > 0) {
          stats.quotedCollapsed += earlier;
          if (mode === 'collapse') out.push(`[quoted: ${lineCount(earlier)} collapsed]`);
        }
        if (context.text.length > 0) out.push(`> ${context.text}`);
        stats.inlineAnswers++;
      } else {
        const total = quoted.filter((quotedLine) => quoteOf(quotedLine).content.length > 0).length;
        stats.quotedCollapsed += total;
        if (mode === 'collapse' && total > 0) {
          out.push('', `[quoted history${describe(origin)}: ${lineCount(total)} collapsed]`, '');
        }
      }
      index = end;
      continue;
    }
    const text = bare(line);
    const attribution = attributionAt(lines, index);
    if (attribution > 0) {
      origin = parseAttribution(lines.slice(index, index + attribution).join(' '));
      let next = index + attribution;
      while (next < count && isBlank(lines[next]!)) next++;
      if (next < count && quoteOf(lines[next]!).level > 0) {
        quotesAllowed = true;
        announced = false;
        index = next;
        continue;
      }
      collapseRest(index);
      return out;
    }
    if (FORWARDED.test(text)) {
      const end = headerEnd(lines, index + 1);
      const forwarded = end >= 0 ? parseHeader(lines, index + 1, end) : {};
      if ((options.forwarded ?? 'keep') === 'keep') {
        const subject = forwarded.subject !== undefined ? `: "${forwarded.subject}"` : '';
        out.push(`[forwarded message${describe(forwarded)}${subject}]`);
        index = end >= 0 ? end : index + 1;
        quotesAllowed = true;
        continue;
      }
      origin = forwarded;
      collapseRest(index);
      return out;
    }
    const afterRule = UNDERSCORE_RULE.test(text) || ORIGINAL_MESSAGE.test(text) ? index + 1 : index;
    const end = headerEnd(lines, afterRule);
    if (end >= 0 || ORIGINAL_MESSAGE.test(text)) {
      origin = end >= 0 ? parseHeader(lines, afterRule, end) : {};
      const rest = end >= 0 ? end : index + 1;
      if (quotedAfter[rest] === 1) {
        // The quoted history follows, marked as quotes (Outlook's, as reading/html-to-markdown writes it): answers
        // between its lines are kept.
        quotesAllowed = true;
        announced = false;
        index = rest;
        continue;
      }
      collapseRest(index);
      return out;
    }
    out.push(line);
    index++;
  }
  return out;
}

/** Whether a paragraph reads as a legal disclaimer. */
function isDisclaimer(paragraph: string[]): boolean {
  const text = paragraph.join(' ').toLowerCase();
  if (DISCLAIMER_HEADING.test(bare(paragraph[0] ?? ''))) return true;
  if (text.length < 80) return false;
  let found = 0;
  for (const word of DISCLAIMER_WORDS) if (text.includes(word) && ++found >= 2) return true;
  return false;
}

/** Collapses the legal disclaimers and the signature at the end of one run of a person's own lines. */
function collapseSegment(segment: string[], options: CollapseOptions, stats: CollapsedText): string[] {
  const disclaimers = options.disclaimers ?? 'collapse';
  const signatures = options.signatures ?? 'collapse';
  let lines = segment;
  let tail: string[] = [];
  if (disclaimers !== 'keep') {
    // Closing paragraphs that are disclaimers (never the first paragraph).
    let cut = lines.length;
    let at = lines.length;
    while (at > 0) {
      let end = at;
      while (end > 0 && isBlank(lines[end - 1]!)) end--;
      let start = end;
      while (start > 0 && !isBlank(lines[start - 1]!)) start--;
      if (start === end || start === 0 || !isDisclaimer(lines.slice(start, end))) break;
      cut = start;
      at = start;
    }
    if (cut < lines.length) {
      const total = lines.slice(cut).filter((line) => !isBlank(line)).length;
      stats.disclaimersCollapsed += total;
      if (disclaimers === 'collapse') tail = [`[legal disclaimer: ${lineCount(total)} collapsed]`];
      lines = lines.slice(0, cut);
    }
  }
  if (signatures !== 'keep') {
    const start = signatureStart(lines, signatures === 'remove' && options.signOff === 'remove');
    if (start !== undefined) {
      const total = lines.slice(start.collapseFrom).filter((line) => !isBlank(line)).length;
      if (total > 1 || start.collapseFrom > start.signOff || signatures === 'remove') {
        stats.signaturesCollapsed += total;
        const kept = lines.slice(0, start.collapseFrom);
        if (signatures === 'collapse') kept.push(`[signature: ${lineCount(total)} collapsed]`);
        lines = kept;
      }
    }
  }
  if (tail.length > 0) {
    while (lines.length > 0 && isBlank(lines.at(-1)!)) lines = lines.slice(0, -1);
    lines = [...lines, '', ...tail];
  }
  // A blank line that ended the run still separates it from what follows.
  if (segment.length > 0 && isBlank(segment.at(-1)!) && lines.length > 0 && !isBlank(lines.at(-1)!)) {
    lines = [...lines, ''];
  }
  return lines;
}

/**
 * Where a signature starts in a run of lines: the `-- ` delimiter or a "Sent from my …" line (all collapsed), or a
 * sign-off followed by a name and a contact block (the sign-off and the name kept, the block collapsed).
 */
function signatureStart(lines: string[], fromSignOff = false): { signOff: number; collapseFrom: number } | undefined {
  if (fromSignOff) {
    // The closing phrase and everything after it, when what follows is a signature's length (messages/clean).
    for (let at = lines.length - 1; at >= Math.max(0, lines.length - 15); at--) {
      if (SIGN_OFF.test(bare(lines[at]!))) return { signOff: at, collapseFrom: at };
    }
  }
  const from = Math.max(0, lines.length - 40);
  for (let at = from; at < lines.length; at++) {
    const text = lines[at]!.trim();
    if (text === '--' || text === '-- ' || text === '\\--') return { signOff: at, collapseFrom: at };
    if (SENT_FROM_DEVICE.test(bare(text))) return { signOff: at, collapseFrom: at };
  }
  for (let at = lines.length - 1; at >= Math.max(0, lines.length - 15); at--) {
    if (!SIGN_OFF.test(bare(lines[at]!))) continue;
    let name = at + 1;
    while (name < lines.length && isBlank(lines[name]!)) name++;
    if (name >= lines.length || bare(lines[name]!).length > 60) return undefined;
    const block = lines.slice(name + 1).filter((line) => !isBlank(line));
    if (
      block.length >= 2 &&
      block.length <= 12 &&
      block.some((line) => line.length <= MAX_PATTERN_LINE && CONTACT.test(line))
    ) {
      return { signOff: at, collapseFrom: name + 1 };
    }
    return undefined;
  }
  return undefined;
}

/**
 * Collapses quoted history, signatures and disclaimers in a text (see the module comment), keeping inline answers
 * with the quoted line each answers.
 */
export function collapseQuotes(text: string, options: CollapseOptions = {}): CollapsedText {
  const stats: CollapsedText = {
    text: '',
    quotedCollapsed: 0,
    inlineAnswers: 0,
    signaturesCollapsed: 0,
    disclaimersCollapsed: 0,
  };
  const lines = text.split('\n');
  const quoted = (options.quoted ?? 'collapse') === 'keep' ? lines : collapseQuoted(lines, options, stats);
  // Signatures and disclaimers, in each run of the person's own lines (between quotes and markers).
  const out: string[] = [];
  let segment: string[] = [];
  const flush = () => {
    if (segment.length > 0) out.push(...collapseSegment(segment, options, stats));
    segment = [];
  };
  for (const line of quoted) {
    if (quoteOf(line).level > 0 || MARKER.test(line)) {
      flush();
      out.push(line);
    } else segment.push(line);
  }
  flush();
  const normalised: string[] = [];
  for (const line of out) {
    if (isBlank(line) && (normalised.length === 0 || isBlank(normalised.at(-1)!))) continue;
    normalised.push(line.trimEnd());
  }
  while (normalised.length > 0 && isBlank(normalised.at(-1)!)) normalised.pop();
  stats.text = normalised.join('\n');
  return stats;
}
