/**
 * @module trust/link-text
 * Whether a word a person reads is a web address or a domain (`https://paypal.com/login`, `www.paypal.com`,
 * `paypal.com`, `support@paypal.com`), and which domain it shows. A hand-written scanner, linear in the word, so that
 * hostile text cannot make it backtrack.
 */

/** Longest word read; a real address that is longer still shows its host in the first part. */
const MAX_TOKEN_CHARS = 2048;

/** Characters that wrap a word in prose: `(paypal.com)`, `<https://…>`, `"www.x.com".` */
const WRAPPING = '()[]<>{}"\'`«»“”‘’.,;:!?*';

/**
 * Endings of file names, which look like top-level domains to a scanner (`invoice.pdf`, `setup.exe`). Without a scheme
 * or `www.`, a word ending in one is a file, not a domain (`.zip` and `.mov` are real TLDs too, rarely used honestly).
 */
const FILE_EXTENSIONS = new Set([
  'pdf',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'csv',
  'txt',
  'rtf',
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'bmp',
  'heic',
  'zip',
  'rar',
  'gz',
  'tgz',
  '7z',
  'exe',
  'msi',
  'dmg',
  'iso',
  'js',
  'ts',
  'json',
  'xml',
  'html',
  'htm',
  'php',
  'asp',
  'aspx',
  'jsp',
  'mp3',
  'mp4',
  'mov',
  'avi',
  'wav',
  'ics',
  'eml',
  'msg',
  'vcf',
  'md',
  'log',
  'py',
  'sh',
  'bat',
]);

/** Generic top-level domains a bare domain in prose is believed under (every two-letter country code is, too). */
const GENERIC_TLDS = new Set(
  (
    'com net org info biz edu gov mil int io ai app dev xyz online site top club shop store tech cloud email support ' +
    'help link live news pro mobi page website space services solutions company business center digital global ' +
    'network systems software security bank finance money pay credit loan agency group world today zone icu cyou ' +
    'click work life blog wiki media studio design host web'
  ).split(' '),
);

/** Whether every character of a label is a letter, digit or hyphen (Unicode letters allowed: IDNs). */
function isLabel(label: string): boolean {
  if (label.length === 0 || label.length > 63) return false;
  for (const char of label) {
    const code = char.codePointAt(0)!;
    const ascii = (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || code === 0x2d;
    if (!ascii && !(code > 0x7f && /\p{L}|\p{M}/u.test(char))) return false;
  }
  return true;
}

/** Whether a host name (lower case) is made of labels and ends in a top-level domain of letters. */
function isHostName(host: string): boolean {
  const labels = host.split('.');
  if (labels.length < 2 || labels.length > 127) return false;
  if (!labels.every(isLabel)) return false;
  const tld = labels[labels.length - 1]!;
  if (tld.length < 2) return false;
  for (const char of tld) if (/\d/.test(char)) return false;
  return true;
}

/** The word without the punctuation prose wraps around it. */
function unwrap(token: string): string {
  let start = 0;
  let end = Math.min(token.length, MAX_TOKEN_CHARS);
  while (start < end && WRAPPING.includes(token[start]!)) start++;
  while (end > start && WRAPPING.includes(token[end - 1]!)) end--;
  return token.slice(start, end);
}

/**
 * The domain a word shows (lower case, as written), or undefined when it is not an address: a URL with a scheme
 * (`http:`, `https:`, `ftp:`; its host), `www.` followed by a host, an email address (its domain), or a bare host name
 * whose last label is not a file ending.
 */
export function domainOfToken(token: string): string | undefined {
  const word = unwrap(token).toLowerCase();
  if (word.length < 4) return undefined;
  let rest = word;
  let schemed = false;
  const scheme = /^(?:https?|ftp):\/\//.exec(word);
  if (scheme) {
    rest = word.slice(scheme[0].length);
    schemed = true;
  } else if (word.startsWith('mailto:')) rest = word.slice(7);
  const at = rest.indexOf('@');
  const stop = (() => {
    let end = rest.length;
    for (const mark of ['/', '?', '#']) {
      const index = rest.indexOf(mark);
      if (index >= 0 && index < end) end = index;
    }
    return end;
  })();
  if (at >= 0 && at < stop) {
    // user@host (an address, or credentials in a URL: the host is what opens)
    rest = rest.slice(at + 1);
    const host = rest.slice(0, stop - at - 1).replace(/:\d{1,5}$/, '');
    return isHostName(host) ? host : undefined;
  }
  const host = rest.slice(0, stop).replace(/:\d{1,5}$/, '');
  if (!isHostName(host)) return undefined;
  if (!schemed && !host.startsWith('www.')) {
    // A bare `word.word` is a domain only under a country code or a common generic TLD: `J.Smith` and `invoice.pdf`
    // are not.
    const tld = host.slice(host.lastIndexOf('.') + 1);
    if (FILE_EXTENSIONS.has(tld)) return undefined;
    if (tld.length !== 2 && !GENERIC_TLDS.has(tld)) return undefined;
  }
  return host;
}

/** The first word of a text that shows a domain, among its first 20 words. */
export function domainInText(text: string): { shown: string; domain: string } | undefined {
  let count = 0;
  for (const token of text.slice(0, MAX_TOKEN_CHARS).split(/\s+/)) {
    if (token.length === 0) continue;
    if (++count > 20) break;
    const domain = domainOfToken(token);
    if (domain) return { shown: token, domain };
  }
  return undefined;
}
