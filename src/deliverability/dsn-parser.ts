/**
 * @module deliverability/dsn-parser
 * Delivery status notifications (pure), in two forms:
 * - RFC 3464: a `multipart/report; report-type=delivery-status` whose `message/delivery-status` part has one group
 *   of fields per recipient (`Final-Recipient`, `Original-Recipient`, `Action`, `Status`, `Diagnostic-Code`,
 *   `Remote-MTA`). Postfix, Sendmail, modern Exim, Gmail, Outlook/Exchange and most providers send this.
 * - Text: what older or simpler MTAs write for people (qmail, classic Exim, Yahoo's "delivery error", a Postfix or
 *   Sendmail report without its status part). Recognised from the sender and subject, then read for the
 *   addresses it names and the reply codes next to them. A `message/delivery-status` part that holds no valid
 *   recipient group falls back to this reader on the rest of the report.
 * A delay warning (RFC 3464 `Action: delayed`, or "has not yet been delivered … will keep trying") is not a bounce:
 * its entries keep `action: 'delayed'` and the intake records nothing for them.
 */
import { codesIn } from './bounce-classification.js';
import { fieldGroups, headerOf, type MimeReport } from '../mime/index.js';

/** What a report says about one recipient. */
export interface BounceEntry {
  /** Lower-cased address the report names (Final-Recipient, or the address in the text), when it names one. */
  recipient: string | undefined;
  /** Lower-cased Original-Recipient, when given. */
  originalRecipient: string | undefined;
  /** RFC 3464 action: `failed`, `delayed`, `delivered`, `relayed` or `expanded`. */
  action: 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';
  /** Enhanced status code (`5.1.1`), when known. */
  status: string | undefined;
  /** SMTP reply code (550), when the diagnostic has one. */
  smtpCode: number | undefined;
  /** The diagnostic (the remote server's reply, or the text next to the address). */
  diagnostic: string;
}

/** A delivery status notification as read. */
export interface ParsedBounce {
  kind: 'bounce';
  /** `rfc3464`: from a valid `message/delivery-status` part; `text`: from the human-readable text. */
  format: 'rfc3464' | 'text';
  entries: BounceEntry[];
}

const ACTIONS = new Set(['failed', 'delayed', 'delivered', 'relayed', 'expanded']);
/** Longest diagnostic kept. */
const MAX_DIAGNOSTIC = 1000;
/** Entries read from one report. */
const MAX_ENTRIES = 100;

/** `rfc822; user@example.com` → `user@example.com` (lower-cased), or undefined when it is no address. */
function addressField(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const semicolon = value.indexOf(';');
  const address = (semicolon >= 0 ? value.slice(semicolon + 1) : value).trim().replace(/^<|>$/g, '').toLowerCase();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? address : undefined;
}

/** `smtp; 550 5.1.1 …` → `550 5.1.1 …`. */
function diagnosticField(value: string | undefined): string {
  if (!value) return '';
  const semicolon = value.indexOf(';');
  const text = semicolon >= 0 && semicolon < 20 ? value.slice(semicolon + 1) : value;
  return text.replace(/\s+/g, ' ').trim().slice(0, MAX_DIAGNOSTIC);
}

/**
 * The recipient groups of a `message/delivery-status` body. A group counts when it has a valid `Action` and a
 * valid `Status` (RFC 3464 requires both); the others are skipped. Empty when the part holds none.
 */
export function parseDeliveryStatus(text: string): BounceEntry[] {
  const entries: BounceEntry[] = [];
  for (const group of fieldGroups(text)) {
    const action =
      headerOf(group, 'action')
        ?.trim()
        .toLowerCase()
        .split(/[\s(;]/)[0] ?? '';
    const statusField = headerOf(group, 'status')?.trim() ?? '';
    const status = /^([245])\.(\d{1,3})\.(\d{1,3})/.exec(statusField)?.[0];
    if (!ACTIONS.has(action) || !status) continue;
    const diagnostic = diagnosticField(headerOf(group, 'diagnostic-code'));
    entries.push({
      recipient: addressField(headerOf(group, 'final-recipient')),
      originalRecipient: addressField(headerOf(group, 'original-recipient')),
      action: action as BounceEntry['action'],
      status,
      smtpCode: codesIn(diagnostic).smtpCode,
      diagnostic: diagnostic || `Status ${status}`,
    });
    if (entries.length >= MAX_ENTRIES) break;
  }
  return entries;
}

/** Senders of bounces (MAILER-DAEMON, postmaster, "Mail Delivery Subsystem"). */
const BOUNCE_SENDER = /mailer-daemon|postmaster|mail delivery|mail administrator|mailer@|mdaemon|microsoftexchange/i;
/** Subjects of bounces. */
const BOUNCE_SUBJECT =
  /undeliver|returned mail|delivery (status notification|failure|has failed|failed|problem)|failure notice|mail delivery failed|non-?delivery|could not be delivered|not delivered|delivery error|rejected:|failed delivery/i;
/** Bodies of bounces. */
const BOUNCE_BODY =
  /could not be delivered|couldn't be delivered|wasn't able to deliver|unable to deliver|was not delivered|delivery (has )?failed|permanent (fatal )?error|permanent failure|following address(es)?( had permanent fatal errors| failed)|delivery to the following recipient|undeliverable|message was undeliverable|returned to sender|giving up on|i'?m afraid i wasn'?t able to deliver|address not found|delivery error/i;
/** A delay warning: the sender will keep trying. */
const DELAY =
  /not yet been delivered|will (continue to |keep )?(retry|try)|still trying|delivery (status notification )?\(?delay|delayed mail|warning: could not send message for past|message (is|has been) delayed|temporarily deferred and will be retried/i;
/** Where the returned copy of the message starts, in text bounces. */
const ORIGINAL_MARKER =
  /^\s*(-{2,}\s*)?(below this line is a copy of the message|this is a copy of the message|original message|the original message was|------ this is a copy|----- original message -----|----- transcript of session follows -----|----- message header follows -----|--- below this line)/im;
/** Addresses the text of a bounce names that are not recipients (its own senders, our return paths). */
const NOT_A_RECIPIENT = /^(mailer-daemon|postmaster|bounce\+|double-bounce|noreply|no-reply)/i;

/** Whether the report's headers and text look like a bounce of some MTA. */
function looksLikeBounce(report: MimeReport, text: string): boolean {
  const from = headerOf(report.headers, 'from') ?? '';
  const subject = headerOf(report.headers, 'subject') ?? '';
  const fromBounceSender = BOUNCE_SENDER.test(from);
  const bounceSubject = BOUNCE_SUBJECT.test(subject);
  const reportType = report.type === 'multipart/report';
  if (!fromBounceSender && !bounceSubject && !reportType) return false;
  return (
    BOUNCE_BODY.test(text) ||
    DELAY.test(text) ||
    DELAY.test(subject) ||
    (bounceSubject && fromBounceSender && /\b[45]\d\d\b|[45]\.\d\.\d/.test(text))
  );
}

/** The text of a report that people read: its text parts before the returned message. */
export function notificationText(report: MimeReport): string {
  const texts: string[] = [];
  for (const part of report.parts) {
    if (part.type === 'text/plain') texts.push(part.text);
    else if (part.type === 'text/html' && texts.length === 0)
      texts.push(
        part.text
          .replace(/<br\s*\/?>|<\/(p|div|tr|li)>/gi, '\n')
          .replace(/<[^>]*>/g, ' ')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&')
          .replace(/&nbsp;/g, ' '),
      );
    if (part.type === 'message/rfc822' || part.type === 'text/rfc822-headers') break;
  }
  const text = texts.join('\n');
  const marker = ORIGINAL_MARKER.exec(text);
  return (marker ? text.slice(0, marker.index) : text).slice(0, 64 * 1024);
}

/** The entries of a text bounce: each address it names, with the text up to the next address as its diagnostic. */
export function parseTextBounce(report: MimeReport): BounceEntry[] | 'delayed' | undefined {
  const text = notificationText(report);
  if (!looksLikeBounce(report, text)) return undefined;
  const subject = headerOf(report.headers, 'subject') ?? '';
  const permanent =
    /permanent|giving up|gave up|could not be delivered|failed:|have failed|has failed|undeliverable|address not found|delivery error|user unknown|does not exist|5\d\d[ -]/i.test(
      text,
    );
  if (
    (DELAY.test(text) || DELAY.test(subject)) &&
    !/permanent|giving up|gave up|failed:|have failed|has failed|undeliverable/i.test(text)
  )
    return 'delayed';
  const found: { address: string; index: number; end: number }[] = [];
  const pattern =
    /<?([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)>?/g;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null && found.length < MAX_ENTRIES * 4) {
    const address = match[1]!.toLowerCase();
    if (NOT_A_RECIPIENT.test(address)) continue;
    found.push({ address, index: match.index, end: match.index + match[0].length });
  }
  const entries = new Map<string, BounceEntry>();
  for (let index = 0; index < found.length && entries.size < MAX_ENTRIES; index++) {
    const { address, end } = found[index]!;
    // The diagnostic: what follows the address, to the next address that is another one (or a blank-line break
    // after some text), and failing that the line the address stands on.
    let stop = text.length;
    for (let next = index + 1; next < found.length; next++) {
      if (found[next]!.address !== address) {
        stop = found[next]!.index;
        break;
      }
    }
    let chunk = text.slice(end, Math.min(stop, end + 2000));
    const paragraph = /\S[\s\S]*?\r?\n[ \t]*\r?\n/.exec(chunk);
    if (paragraph && codesIn(paragraph[0]).smtpCode !== undefined) chunk = paragraph[0];
    const lineStart = text.lastIndexOf('\n', found[index]!.index) + 1;
    const line = text.slice(lineStart, found[index]!.index);
    const diagnostic = `${line} ${chunk}`
      .replace(/^[\s:>.(]+/, '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, MAX_DIAGNOSTIC);
    const codes = codesIn(chunk);
    const existing = entries.get(address);
    if (existing && existing.smtpCode !== undefined) continue;
    if (existing && codes.smtpCode === undefined && codes.status === undefined) continue;
    entries.set(address, {
      recipient: address,
      originalRecipient: undefined,
      action: 'failed',
      status: codes.status,
      smtpCode: codes.smtpCode,
      diagnostic,
    });
  }
  if (entries.size === 0) {
    if (!permanent) return undefined;
    // A bounce that names no address: the token says whose it is; the first line with a code says why.
    const line =
      text
        .split(/\r?\n/)
        .find((candidate) => codesIn(candidate).smtpCode !== undefined || codesIn(candidate).status !== undefined) ??
      text.split(/\r?\n/).find((candidate) => BOUNCE_BODY.test(candidate)) ??
      '';
    const codes = codesIn(line);
    return [
      {
        recipient: undefined,
        originalRecipient: undefined,
        action: 'failed',
        status: codes.status,
        smtpCode: codes.smtpCode,
        diagnostic: line.trim().slice(0, MAX_DIAGNOSTIC),
      },
    ];
  }
  return [...entries.values()];
}

/**
 * A delivery status notification, standard or not, or undefined when the message is none (an auto-reply, a
 * person's answer, anything else that reached a return path).
 */
export function parseBounce(report: MimeReport): ParsedBounce | undefined {
  const statusPart = report.parts.find(
    (part) => part.type === 'message/delivery-status' || part.type === 'message/global-delivery-status',
  );
  if (statusPart) {
    const entries = parseDeliveryStatus(statusPart.text);
    if (entries.length > 0) return { kind: 'bounce', format: 'rfc3464', entries };
  }
  // No status part, or a malformed one: what the text says.
  const text = parseTextBounce(report);
  if (text === undefined) return undefined;
  if (text === 'delayed')
    return {
      kind: 'bounce',
      format: 'text',
      entries: [
        {
          recipient: undefined,
          originalRecipient: undefined,
          action: 'delayed',
          status: undefined,
          smtpCode: undefined,
          diagnostic: 'delayed',
        },
      ],
    };
  return { kind: 'bounce', format: 'text', entries: text };
}
