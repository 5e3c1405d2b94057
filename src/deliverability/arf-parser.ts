/**
 * @module deliverability/arf-parser
 * Complaints in the Abuse Reporting Format (RFC 5965), pure: a `multipart/report; report-type=feedback-report`
 * whose `message/feedback-report` part carries `Feedback-Type` (abuse, fraud, virus, other, not-spam …),
 * `Original-Mail-From` (the envelope sender of the reported message: our return path), `Original-Rcpt-To`,
 * `User-Agent`, `Arrival-Date`, `Source-IP` and `Reported-Domain`; the third part is the reported message or its
 * headers (`message/rfc822` or `text/rfc822-headers`).
 */
import { fieldGroups, headerOf, headersOf, splitEntity, type MimeReport } from '../mime/index.js';

/** A complaint as read. */
export interface ParsedComplaint {
  kind: 'complaint';
  /** Lower-cased `Feedback-Type` (`abuse` for "this is spam"). */
  feedbackType: string;
  /** The envelope sender of the reported message, as the reporter gives it (lower-cased, no angle brackets). */
  originalMailFrom: string | undefined;
  /** The envelope recipients of the reported message, as given (lower-cased). */
  originalRcptTo: string[];
  userAgent: string | undefined;
  arrivalDate: string | undefined;
  /** The reported message's Message-ID, from its headers, when they came along. */
  originalMessageId: string | undefined;
}

const address = (value: string | undefined): string | undefined => {
  const cleaned = value?.trim().replace(/^<|>$/g, '').toLowerCase();
  return cleaned ? cleaned : undefined;
};

/** The complaint in a report, or undefined when it holds no `message/feedback-report` with a `Feedback-Type`. */
export function parseComplaint(report: MimeReport): ParsedComplaint | undefined {
  const part = report.parts.find((candidate) => candidate.type === 'message/feedback-report');
  if (!part) return undefined;
  const fields = fieldGroups(part.text).flat();
  const feedbackType = headerOf(fields, 'feedback-type')?.trim().toLowerCase().split(/[\s;]/)[0];
  if (!feedbackType || !/^[a-z0-9-]{1,40}$/.test(feedbackType)) return undefined;
  const original = report.parts.find(
    (candidate) => candidate.type === 'message/rfc822' || candidate.type === 'text/rfc822-headers',
  );
  const originalHeaders = original
    ? splitEntity(
        original.text.includes('\n\n') || original.text.includes('\r\n\r\n')
          ? original.text
          : `${original.text}\r\n\r\n`,
      ).headers
    : [];
  return {
    kind: 'complaint',
    feedbackType,
    originalMailFrom: address(headerOf(fields, 'original-mail-from')),
    originalRcptTo: headersOf(fields, 'original-rcpt-to')
      .map((value) => address(value))
      .filter((value): value is string => value !== undefined),
    userAgent: headerOf(fields, 'user-agent'),
    arrivalDate: headerOf(fields, 'arrival-date') ?? headerOf(fields, 'received-date'),
    originalMessageId: headerOf(originalHeaders, 'message-id')?.trim().replace(/^<|>$/g, '').toLowerCase(),
  };
}
