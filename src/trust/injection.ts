/**
 * @module trust/injection
 * How much a message reads as instructions to an assistant, 0 to 1, with the reasons: bounded heuristics, no model.
 *
 * Each signal has a code and a weight (docs/reading.md says why each weighs what it does); a code counts once, at
 * its strongest, and the codes combine as independent evidence (noisy-OR: 1 − Π(1 − w)), so one strong signal or two
 * middling ones make a high score while a single weak one stays low. Instructions found in hidden text (the
 * conversion removed it, so no person saw it) add `hidden_instructions`.
 *
 * Linear: the text is normalised in one pass, every pattern is a regular expression without nested or overlapping
 * quantifiers (constant work per position), and the look-back windows are of fixed size.
 */
import type { Injection } from './contracts.js';
import { hasNonAscii } from './domains.js';

/** A reason as the wire gives it. */
type Reason = Injection['reasons'][number];

/** Characters of the text read at most (a message body over this is cut; its head carries what a model reads first). */
export const MAX_SCANNED_CHARS = 2_000_000;
/** Hits of one pattern counted at most. */
const MAX_HITS = 20;
/** Excerpt length on the wire. */
const EXCERPT_CHARS = 100;
/** Reasons returned at most (the wire schema's bound). */
const MAX_REASONS = 12;

/** Zero-width, bidi-control and soft-hyphen characters: invisible, used to split trigger words (`ig\u200bnore`). */
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * Cyrillic and Greek letters that pass for Latin ones inside a Latin word (`іgnore` with a Cyrillic і). Mapped one to
 * one, so the mapped text keeps the original's indexes; only for the English patterns (Russian is matched unmapped).
 */
const LATIN_LOOKALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  с: 'c',
  е: 'e',
  һ: 'h',
  і: 'i',
  ј: 'j',
  о: 'o',
  р: 'p',
  ѕ: 's',
  х: 'x',
  у: 'y',
  ԁ: 'd',
  ԝ: 'w',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/** The text a pattern reads: NFKC (full-width and ligature forms folded), lower case, invisible characters gone,
 * runs of spaces one space, line breaks kept (role labels start lines). */
export function normaliseForScan(text: string): string {
  const cut = text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text;
  return cut
    .normalize('NFKC')
    .toLowerCase()
    .replace(INVISIBLE, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+/g, ' ')
    .replace(/ ?\n ?/g, '\n');
}

/** The normalised text with Latin look-alikes mapped (same length). */
function latinised(text: string): string {
  if (!hasNonAscii(text)) return text;
  let out = '';
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    out += LATIN_LOOKALIKES[char] ?? char;
  }
  return out;
}

/** A signal: its code, weight, and the pattern that finds it (`latin`: read on the look-alike-mapped text). */
interface Signal {
  code: string;
  weight: number;
  pattern: RegExp;
  latin: boolean;
  /** Read with its line breaks (role labels start a line); other patterns read lines joined, as mail wraps prose. */
  lines: boolean;
}

/** Ways to say "the instructions before these". */
const EARLIER = '(?:previous|prior|above|earlier|preceding|former|original|initial|existing|system|old)';
const DIRECTIVES =
  '(?:instructions?|prompts?|directions|rules|directives|guidelines|commands|context|programming|guardrails)';
/** Words of what an assistant is. */
const ASSISTANT =
  '(?:ai|a\\.i\\.|artificial intelligence|llm|large language model|language model|chatbot|ai assistant|ai agent|ai model|email assistant|virtual assistant|autonomous agent)';
/** Agentpost's own tools and the generic ones of agent hosts: what an injection asks a model to call. */
const TOOL_NAMES =
  '(?:send_message|send_email|reply_message|forward_message|forward_email|create_draft|send_draft|update_message|delete_message|list_messages|get_message|get_thread|read_attachment|create_event|update_event|delete_event|create_contact|smart_compose|create_webhook|http_request|fetch_url|browse|run_command|execute_command|shell|bash|python)';

/** Builds a signal's regular expression (global; `u` not used: the patterns are ASCII or BMP literals). */
function signal(code: string, weight: number, source: string, latin = true, lines = false): Signal {
  return { code, weight, pattern: new RegExp(source, 'g'), latin, lines };
}

/**
 * The pattern signals. Weights: see docs/reading.md ("Injection weights"). Each pattern: fixed words with
 * alternations of literals, and counted repeats of a literal word group at most.
 */
export const SIGNALS: readonly Signal[] = [
  // Telling the reader to drop the instructions it has: the core of an injection.
  // "Ignore all previous instructions", "ignore previous instructions", "disregard your prior rules".
  signal(
    'assistant_directive',
    0.6,
    `\\b(?:ignore|disregard|forget|override|bypass|skip|discard)\\s(?:(?:all|any|every|each|of|your)\\s){1,3}(?:the\\s)?${EARLIER}\\s${DIRECTIVES}\\b`,
  ),
  signal(
    'assistant_directive',
    0.6,
    `\\b(?:ignore|disregard|forget|override|bypass|skip|discard)\\s${EARLIER}\\s${DIRECTIVES}\\b`,
  ),
  // "Please ignore the previous instructions (I sent)": how people correct themselves. Weak alone.
  signal(
    'assistant_directive',
    0.25,
    `\\b(?:ignore|disregard|forget)\\s(?:the|my|our|these|those)\\s${EARLIER}\\s${DIRECTIVES}\\b`,
  ),
  signal(
    'assistant_directive',
    0.6,
    `\\b(?:ignore|disregard|forget) (?:all|any|everything) (?:you (?:were|have been) told|(?:of )?your ${DIRECTIVES})\\b`,
  ),
  signal(
    'assistant_directive',
    0.55,
    '\\bfrom now on,? you (?:are|will act|must act|will respond|must respond|must obey|will obey|will follow|must follow)\\b',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:override|bypass|disable|turn off) (?:your |the |all )?(?:safety|security|content|moderation) (?:filters?|guidelines|rules|policies|restrictions|checks)\\b',
  ),
  signal('assistant_directive', 0.5, '\\b(?:jailbreak|developer mode|dan mode|do anything now)\\b'),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:ignoriere|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie) (?:(?:alle|sämtliche|die|deine|ihre|bisherigen|vorherigen|obigen|früheren|vorigen) ){1,3}(?:anweisungen|instruktionen|befehle|regeln|vorgaben)\\b',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:ignore[rz]?|oublie[rz]?) (?:toutes |tous )?(?:les |vos |tes )?(?:instructions|consignes|directives|règles) (?:précédentes|antérieures|ci-dessus|initiales)',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:ignora|ignore|ignorar|ignorad|olvida|olvide) (?:todas )?(?:las |tus |sus )?(?:instrucciones|indicaciones|reglas|órdenes) (?:anteriores|previas)',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:ignora|ignorate|dimentica) (?:tutte )?(?:le )?(?:istruzioni|indicazioni|regole) (?:precedenti|sopra)',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:ignore|ignora|esqueça|esqueca) (?:todas )?(?:as )?(?:instruções|instrucoes|orientações|regras) (?:anteriores|prévias)',
  ),
  signal(
    'assistant_directive',
    0.6,
    '\\b(?:negeer|vergeet) (?:alle )?(?:de |je |uw )?(?:vorige|eerdere|voorgaande) (?:instructies|opdrachten|regels)\\b',
  ),
  signal(
    'assistant_directive',
    0.6,
    '(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте) (?:все )?(?:предыдущие|прошлые|прежние|вышеуказанные) (?:инструкции|указания|команды)',
    false,
  ),
  signal(
    'assistant_directive',
    0.6,
    '(?:忽略|无视|忘记|忽视|忘掉)(?:之前|以上|上面|先前|前面|此前)(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|提示|规则)',
    false,
  ),
  signal(
    'assistant_directive',
    0.6,
    '(?:以前|前|上記|これまで)の(?:すべての|全ての)?(?:指示|命令|ルール)を(?:無視|忘れ)',
    false,
  ),

  // Writing to the model as a model.
  signal('addresses_assistant', 0.5, `\\b(?:you are|you're) (?:an |a |the )?${ASSISTANT}\\b`),
  // "As an AI assistant, you…": the article and the "you" after it keep "as AI agents become…" out.
  signal(
    'addresses_assistant',
    0.5,
    '\\bas an? (?:ai|llm|large language model|language model|ai assistant|ai agent|ai model|email assistant)(?: assistant| model| agent)?,? you\\b',
  ),
  signal(
    'addresses_assistant',
    0.5,
    `\\b(?:if you are|if you're|to any|to the|by the|for the|dear|hello|hi|attention|note to the|message for the|instructions for the) (?:${ASSISTANT}|assistant) (?:reading|processing|summari[sz]ing|handling|parsing|(?:that|who) (?:reads|processes|handles|manages|summari[sz]es))\\b`,
  ),
  signal(
    'addresses_assistant',
    0.5,
    `\\b(?:dear|attention|hello|hi) (?:llm|ai assistant|ai agent|ai model|ai system|chatgpt|claude|gemini|copilot)\\b`,
  ),
  signal(
    'addresses_assistant',
    0.5,
    `\\bif you are (?:an |a )?(?:ai|llm|language model|ai assistant|ai agent|automated agent|bot)\\b`,
  ),
  signal(
    'addresses_assistant',
    0.5,
    `\\b${ASSISTANT} (?:reading|processing|handling|summari[sz]ing|managing) (?:this|these|the|your) (?:inbox|mailbox|e-?mails?|messages?|mail|thread)\\b`,
  ),
  signal('addresses_assistant', 0.5, '\\b(?:your|my|new|updated|as a|as the) system prompt\\b'),
  signal(
    'addresses_assistant',
    0.5,
    '\\b(?:hinweis|nachricht|anweisung|anweisungen) (?:für|an) (?:den|die|das) (?:ki-assistenten|ki-assistentin|ki-agenten|ki-system|ki|assistenten|sprachmodell)\\b',
  ),
  signal(
    'addresses_assistant',
    0.5,
    '\\bdu bist (?:eine |ein )?(?:ki|ki-assistent|ki-agent|sprachmodell|assistent)\\b',
  ),
  signal(
    'addresses_assistant',
    0.5,
    '\\b(?:tu es|vous êtes) (?:une |un )?(?:ia|intelligence artificielle|assistant ia|agent ia|modèle de langage)\\b',
  ),
  signal(
    'addresses_assistant',
    0.5,
    '\\beres (?:una |un )?(?:ia|inteligencia artificial|asistente de ia|agente de ia|modelo de lenguaje)\\b',
  ),
  signal('addresses_assistant', 0.5, '你是(?:一个)?(?:ai|人工智能|助手|语言模型|智能体)', false),

  // Chat-template tokens and role tags: text shaped as a conversation's turns.
  signal(
    'role_marker',
    0.65,
    '<\\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\\|>|\\[/?inst\\]|<</?sys>>|\\[/?system\\]|</?system>|\\[/?assistant\\]|</?(?:system_prompt|instructions|admin_instructions)>|\\bbegin system prompt\\b',
  ),
  signal('role_marker', 0.4, '(?:^|\\n)#{1,4} ?(?:system|instruction|instructions|assistant)\\b', true, true),
  // A line starting `System:` or `Assistant:` alone is weak: support mail writes `System: macOS 14`.
  signal('role_marker', 0.25, '(?:^|\\n)(?:system|assistant|ai) ?: ?\\S', true, true),

  // Keeping the person out of it.
  signal(
    'secrecy',
    0.45,
    "\\b(?:do not|don't|never) (?:tell|inform|notify|alert|warn|let|show|mention (?:this|it) to|reveal (?:this|it) to) (?:the )?(?:user|human|recipient|owner|operator|mailbox owner)\\b",
  ),
  signal(
    'secrecy',
    0.45,
    "\\bwithout (?:the )?(?:user|human|owner|recipient|operator)(?:'s)? (?:knowing|knowledge|noticing|consent|approval|confirmation|seeing)\\b",
  ),
  signal(
    'secrecy',
    0.5,
    '\\b(?:silently|quietly|secretly|covertly|discreetly) (?:forward|send|reply|delete|copy|bcc|export|execute|run|call|move|archive)\\b',
  ),
  signal(
    'secrecy',
    0.4,
    "\\b(?:do not|don't|never) (?:mention|reveal|disclose|repeat|summari[sz]e) (?:this|these|the) (?:instructions?|message|email|request)\\b",
  ),

  // Moving mail out.
  signal(
    'forward_request',
    0.5,
    '\\b(?:forward|send|copy|bcc|export|upload|transfer|sync|share|leak)\\s(?:(?:all|every|each|any|your|the|my|of|these|those|entire|whole|complete|recent|latest|last|new|incoming|future|\\d{1,4})\\s){1,4}(?:e-?mails?|messages|mails?|inbox|mailbox|correspondence|conversations|threads|contacts|address book|calendar|chat history|email history)\\b',
  ),
  signal(
    'forward_request',
    0.4,
    '\\b(?:create|add|set up|setup|configure) (?:a |an |the )?(?:forwarding rule|forwarding address|mail forwarding|auto-?forward(?:ing)?(?: rule)?|inbox rule to forward|filter to forward)\\b',
  ),
  signal(
    'forward_request',
    0.5,
    '\\b(?:leite|leiten sie|sende|senden sie) (?:alle|sämtliche) (?:e-mails|emails|mails|nachrichten)\\b',
  ),
  signal(
    'forward_request',
    0.5,
    '\\b(?:transf[eé]re[rz]?|envoie[rz]?) (?:tous|toutes) (?:les |vos )?(?:e-?mails|courriels|messages)',
  ),
  signal(
    'forward_request',
    0.5,
    '\\b(?:reenv[ií]a|reenviar|env[ií]a|reenvíe|reenvie) (?:todos|todas) (?:los |las |tus )?(?:correos|mensajes|e-?mails)',
  ),
  signal('forward_request', 0.5, '\\binoltra (?:tutte le (?:e-?mail|mail)|tutti i messaggi)'),
  signal('forward_request', 0.5, '\\bencaminh[ea] (?:todos os |todas as )?(?:e-?mails|mensagens)'),
  signal('forward_request', 0.5, '\\bstuur (?:alle )?(?:e-?mails|berichten) door\\b'),
  signal(
    'forward_request',
    0.5,
    '(?:перешли|перешлите|пересылай|пересылайте|отправь|отправьте) (?:все )?(?:письма|сообщения)',
    false,
  ),
  signal('forward_request', 0.5, '(?:转发|发送)(?:所有|全部)(?:的)?(?:邮件|电子邮件|消息)', false),

  // Tool calls written out: text shaped as the model's own tool use.
  signal(
    'tool_call',
    0.55,
    '["\'](?:tool|tool_name|function_call|tool_calls|tool_use|tool_code|functioncall)["\'] ?: ?[{["\'a-z]',
  ),
  // A tool call naming a tool an agent host really has: stronger than the JSON shape alone.
  signal('tool_call', 0.65, `"(?:name|tool|tool_name|function)" ?: ?"${TOOL_NAMES}"`),
  signal(
    'tool_call',
    0.6,
    `\\b(?:call|use|invoke|run|execute|trigger) (?:the )?[\`'"]?${TOOL_NAMES}[\`'"]?(?: (?:tool|function|action))?\\b`,
  ),
  signal('tool_call', 0.5, '<(?:tool_call|function_calls?|invoke|antml:invoke|tool_use)\\b'),

  // Asking for data to be put in a URL the reader's client will fetch.
  signal(
    'url_exfiltration',
    0.5,
    '\\b(?:append|add|include|encode|insert|put) (?:the |your |all |this )?(?:[a-z0-9_-]{1,20} ){0,3}(?:to|in|into|as) (?:the |this |a )?(?:url|link|query string|query parameter|image url|image link|image source)\\b',
  ),
];

/**
 * Words that ask for a secret: passwords, keys, tokens and one-time codes. Matched with a request verb in the few words
 * before and no negation (`never share this code`), see {@link credentialRequests}.
 */
const CREDENTIAL =
  /\b(?:password|passwd|passcode|pass code|api[ -]?key|secret key|access key|private key|access token|auth token|bearer token|refresh token|session token|session cookie|credentials|login details|log-in details|sign-in details|2fa code|2fa|mfa code|one-time code|one time code|one-time password|otp|verification code|security code|authentication code|recovery codes?|backup codes?|seed phrase|recovery phrase|pin code|kennwort|passwort|mot de passe|contraseña|пароль|密码)/g;
/** Verbs that ask for something to be handed over. */
const REQUEST_VERB =
  /\b(?:send|reply|respond|share|provide|forward|give|tell|paste|e-?mail (?:me|us|it|them)|submit|text|disclose|reveal|print|output|dump|list|read out|what is|what's|schick|senden|sende|envoyez|envoie|envía|enviar|отправь)\b/;
/** Words that turn a request into a warning. */
const NEGATION = /\b(?:never|not|don't|dont|won't|nobody|no one|cannot|can't|niemals|nie|jamais|nunca)\b/;
/** Characters before a credential word searched for a verb (six to ten words). */
const WINDOW = 60;

/** Requests for secrets: a credential word after a request verb, not negated, in its window. */
function credentialRequests(text: string): { count: number; index: number } {
  let count = 0;
  let first = -1;
  CREDENTIAL.lastIndex = 0;
  for (let match = CREDENTIAL.exec(text); match && count < MAX_HITS; match = CREDENTIAL.exec(text)) {
    const start = Math.max(0, match.index - WINDOW);
    let window = text.slice(start, match.index);
    // The window ends at the sentence or paragraph (two spaces: a blank line, joined) before the word.
    const sentence = Math.max(
      window.lastIndexOf('. '),
      window.lastIndexOf('!'),
      window.lastIndexOf('?'),
      window.lastIndexOf('  '),
    );
    if (sentence >= 0) window = window.slice(sentence + 1);
    if (REQUEST_VERB.test(window) && !NEGATION.test(window)) {
      count++;
      if (first < 0) first = match.index - window.length;
    }
  }
  return { count, index: first };
}

/** Addresses in text: a `@` with a word before it and a dotted name after it. At most {@link MAX_HITS}. */
function addressesIn(text: string): { index: number; address: string }[] {
  const found: { index: number; address: string }[] = [];
  for (let at = text.indexOf('@'); at >= 0 && found.length < MAX_HITS; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && /[a-z0-9._%+-]/.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at < 255 && /[a-z0-9.-]/.test(text[end]!)) end++;
    const domain = text.slice(at + 1, end).replace(/\.+$/, '');
    if (start < at && domain.includes('.'))
      found.push({ index: start, address: text.slice(start, at + 1 + domain.length) });
  }
  return found;
}

/** Verbs of sending, and things worth stealing, in the words before an address. */
const SEND_VERB = /\b(?:send|forward|email|e-mail|bcc|cc|post|upload|transmit|exfiltrate|copy|report|mail)\b/;
const DATA_NOUN =
  /\b(?:summary|contents|content|list|history|credentials|passwords?|data|emails|messages|inbox|conversations?|threads?|attachments|api keys?|tokens?|everything|all of|copies|copy of)\b/;
/** Characters before an address searched. */
const ADDRESS_WINDOW = 80;

/** "Send the inbox summary to x@y": a sending verb and a data word shortly before an address. */
function sendToAddress(text: string): { count: number; index: number } {
  let count = 0;
  let first = -1;
  for (const { index } of addressesIn(text)) {
    const window = text.slice(Math.max(0, index - ADDRESS_WINDOW), index);
    if (SEND_VERB.test(window) && DATA_NOUN.test(window)) {
      count++;
      if (first < 0) first = Math.max(0, index - ADDRESS_WINDOW);
    }
  }
  return { count, index: first };
}

/** Placeholders and words an exfiltration URL carries for the model to fill in. */
const EXFILTRATION_HINT =
  /\{\{|\}\}|\$\{|<[a-z_]{2,30}>|\[[a-z_ ]{2,30}\]|secret|password|token|api_?key|summary|inbox|conversation|history|data=/;

/**
 * Markdown images whose URL has a query (`![x](https://host/p.png?d=…)`): a client that renders the answer fetches it
 * and sends the query along. Weighted up when the URL holds a placeholder or a word for stolen data.
 */
function markdownImages(text: string): { count: number; index: number; weight: number } {
  let count = 0;
  let first = -1;
  let weight = 0;
  for (let at = text.indexOf('!['); at >= 0 && count < MAX_HITS; at = text.indexOf('![', at + 2)) {
    const close = text.indexOf('](', at + 2);
    if (close < 0) break;
    if (close - at > 512) continue;
    let end = close + 2;
    while (end < text.length && end - close < 4096 && text[end] !== ')' && text[end] !== '\n') end++;
    const url = text.slice(close + 2, end).trim();
    if (!/^https?:\/\//.test(url)) continue;
    const query = url.indexOf('?');
    if (query < 0 || !url.includes('=', query)) continue;
    count++;
    if (first < 0) first = at;
    weight = Math.max(weight, EXFILTRATION_HINT.test(url.slice(query)) ? 0.65 : 0.5);
  }
  return { count, index: first, weight };
}

/** An excerpt of the original-cased text around an index, one line, at most {@link EXCERPT_CHARS}. */
function excerptAt(text: string, index: number): string {
  const start = Math.max(0, index);
  return text
    .slice(start, start + EXCERPT_CHARS * 2)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, EXCERPT_CHARS);
}

/** What one text (the visible body, or the hidden text) raised: each code at its strongest, with where it was. */
interface Found {
  code: string;
  weight: number;
  excerpt: string;
  hits: number;
}

/** Scans one text. */
function scan(raw: string): Map<string, Found> {
  const found = new Map<string, Found>();
  const text = normaliseForScan(raw);
  if (text.length === 0) return found;
  const latin = latinised(text);
  // The same texts with lines joined (same length, so the indexes agree).
  const flatLatin = latin.replaceAll('\n', ' ');
  const flat = text.replaceAll('\n', ' ');
  const note = (code: string, weight: number, index: number, hits: number) => {
    const previous = found.get(code);
    if (previous && previous.weight >= weight) {
      previous.hits += hits;
      return;
    }
    found.set(code, { code, weight, excerpt: excerptAt(text, index), hits: hits + (previous?.hits ?? 0) });
  };
  for (const item of SIGNALS) {
    const subject = item.lines ? (item.latin ? latin : text) : item.latin ? flatLatin : flat;
    item.pattern.lastIndex = 0;
    let hits = 0;
    let index = -1;
    for (let match = item.pattern.exec(subject); match && hits < MAX_HITS; match = item.pattern.exec(subject)) {
      if (index < 0) index = match.index;
      hits++;
      if (match[0].length === 0) item.pattern.lastIndex++;
    }
    if (hits > 0) note(item.code, item.weight, index, hits);
  }
  const credentials = credentialRequests(flatLatin);
  if (credentials.count > 0) note('credential_request', 0.45, credentials.index, credentials.count);
  const sends = sendToAddress(flatLatin);
  if (sends.count > 0) note('send_to_address', 0.3, sends.index, sends.count);
  const images = markdownImages(text);
  if (images.count > 0) note('markdown_exfiltration', images.weight, images.index, images.count);
  return found;
}

/** The weight of `hidden_instructions`: instructions nobody was shown are hardly ever innocent. */
const HIDDEN_INSTRUCTIONS_WEIGHT = 0.5;
/** Hidden text that alone is worth a mention: far more than a newsletter's preheader and its padding. */
const HIDDEN_TEXT_NOTABLE_CHARS = 2_000;
const HIDDEN_TEXT_WEIGHT = 0.1;

/** What the injection score reads. */
export interface InjectionInput {
  subject?: string | undefined;
  text?: string | undefined;
  hiddenText?: string | undefined;
  hiddenTextRemoved?: number | undefined;
}

/** Rounds a score to two decimals (stable on the wire and in tests). */
function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The injection score and its reasons. The subject and the visible text are scanned together, the hidden text apart:
 * its findings count too, and any of them adds `hidden_instructions`.
 */
export function injectionScore(input: InjectionInput): Injection {
  const visible = scan(`${input.subject ?? ''}\n${input.text ?? ''}`);
  const hidden = input.hiddenText ? scan(input.hiddenText) : new Map<string, Found>();
  const all = new Map(visible);
  let hiddenFirst: Found | undefined;
  for (const finding of hidden.values()) {
    hiddenFirst ??= finding;
    if (hiddenFirst.weight < finding.weight) hiddenFirst = finding;
    const previous = all.get(finding.code);
    if (!previous || previous.weight < finding.weight) all.set(finding.code, finding);
  }
  if (hiddenFirst)
    all.set('hidden_instructions', {
      code: 'hidden_instructions',
      weight: HIDDEN_INSTRUCTIONS_WEIGHT,
      excerpt: hiddenFirst.excerpt,
      hits: hidden.size,
    });
  else if ((input.hiddenTextRemoved ?? 0) >= HIDDEN_TEXT_NOTABLE_CHARS)
    all.set('hidden_text', {
      code: 'hidden_text',
      weight: HIDDEN_TEXT_WEIGHT,
      excerpt: `${input.hiddenTextRemoved} characters of hidden text removed`,
      hits: 1,
    });
  const ordered = [...all.values()].sort((a, b) => b.weight - a.weight || a.code.localeCompare(b.code));
  let keep = 1;
  for (const finding of ordered) keep *= 1 - finding.weight;
  const reasons: Reason[] = ordered.slice(0, MAX_REASONS).map((finding) => ({
    code: finding.code,
    excerpt: finding.excerpt,
  }));
  return { score: round(1 - keep), reasons };
}
