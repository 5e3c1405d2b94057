/**
 * @module mail/stages/policy-raw
 * The raw message a copy stores once its policy removed attachments (stage 4, ./policy-limits.ts): what a policy
 * removed is gone from every path a client reads, `fields=raw_mime` included. Each removed part is replaced in place
 * by a short `text/plain` part naming it (file name, type, size, why, the policy) (src/mime/cut-parts.ts, run on a
 * thread of the parser pool); the rest
 * of the message stays byte for byte. When a removed part cannot be found in the raw message, or the message did not
 * parse while the policy limits attachments (so nothing in it could be checked), the body is replaced whole by such
 * a note and only the header fields stay: the rewrite fails closed. Authentication ran before (DKIM verdicts are of
 * the message as received, kept on the message and in its `Authentication-Results` field).
 */
import { withBodyReplaced, type MimeParser, type ParsedMessage } from '../../mime/index.js';
import type { RemovedAttachment } from '../contracts.js';
import { limitOf } from './policy-limits.js';
import type { StoredPolicyLimits } from '../../../storage/index.js';

/** Characters of a file name or type written in a note (a hostile one is cut). */
const MAX_NAME = 200;

/** A file name or type as a note writes it: control characters gone, bounded. */
function plain(text: string): string {
  const cleaned = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return cleaned.length > MAX_NAME ? `${cleaned.slice(0, MAX_NAME)}…` : cleaned;
}

/** The line a note gives one removed attachment. */
function removedLine(entry: RemovedAttachment): string {
  const name = entry.filename ? `"${plain(entry.filename)}"` : 'an attachment without a file name';
  return `${name} (${plain(entry.content_type)}, ${entry.size} bytes): ${entry.reason}`;
}

/** The note that replaces one removed attachment. */
export function removedNote(entry: RemovedAttachment, policyId: string): string {
  return `An attachment was removed here by the mailbox's policy ${policyId} before the message was stored:\r\n${removedLine(entry)}\r\n`;
}

/** Whether a policy limits attachments at all. */
export function limitsAttachments(limits: StoredPolicyLimits | undefined): boolean {
  return (
    (limits?.limit_attachment_allowed_types?.length ?? 0) > 0 ||
    limitOf(limits, 'limit_attachment_size_limit') !== undefined ||
    limitOf(limits, 'limit_attachment_count_limit') !== undefined
  );
}

/**
 * The raw message to store for a copy: `raw` itself when its policy removed nothing, else `raw` with the removed
 * parts cut out (see the module notes). `keep` flags `parsed.attachments` in order, as the policy decided.
 */
export async function policyRaw(
  parser: Pick<MimeParser, 'cut'>,
  raw: Buffer,
  parsed: ParsedMessage,
  decision: {
    policyId: string;
    keep: readonly boolean[];
    removed: readonly RemovedAttachment[];
    /** The parse failed under a policy that limits attachments: nothing of the body was checked. */
    unchecked: boolean;
  },
): Promise<Buffer> {
  const { policyId, keep, removed } = decision;
  if (decision.unchecked) {
    return withBodyReplaced(
      raw,
      `The body of this message was removed by the mailbox's policy ${policyId} before it was stored: the message ` +
        'could not be parsed, so its attachments could not be checked against the policy.\r\n',
    );
  }
  if (removed.length === 0) return raw;
  let next = 0;
  // On the parser pool's threads: decoding and hashing a 40 MB message takes a few hundred milliseconds.
  const cut = await parser.cut(
    raw,
    parsed.attachments.map((attachment, index) => ({
      hash: attachment.hash,
      size: attachment.content.length,
      note: keep[index] ? undefined : removedNote(removed[next++]!, policyId),
    })),
  );
  if (cut) return cut;
  return withBodyReplaced(
    raw,
    `The body of this message was removed by the mailbox's policy ${policyId} before it was stored: attachments ` +
      'the policy removed could not be cut out of it alone. Removed:\r\n' +
      removed.map((entry) => `${removedLine(entry)}\r\n`).join(''),
  );
}
