/**
 * @module mail/stages/trust-stage
 * The part of the `trust` block the inbound rules can read (`trust.injection`, `trust.dmarc`), computed at ingest only
 * for a message one of whose recipients' rules has such a condition: every other message costs nothing here, and the
 * block a read shows is computed at read time (src/trust/trust-reader.ts). The message is parsed on the parser pool
 * (never on the event loop, nor on the mail writer thread, whose fast path parses simple mail later for the store);
 * DMARC is the authentication stage's verdict, `none` where that stage did not run (mail not received over SMTP: an
 * `Authentication-Results` field it carries may be the sender's own).
 */
import type { GrantEnforcement } from '../../admin/index.js';
import type { MimeParser } from '../../mime/index.js';
import type { AuthenticationVerdict } from '../../ports/index.js';
import { assessContent, authenticationVerdicts, readTrustBody } from '../../trust/index.js';

/** What the rules read of a message's trust block. */
export interface IngestTrust {
  injection: number;
  dmarc: string;
}

/** Whether any of the recipients' inbound rules reads the trust block. */
export function trustNeeded(applied: readonly GrantEnforcement[]): boolean {
  return applied.some((enforcement) => enforcement.inbound.some((rule) => rule.needsTrust === true));
}

/** The injection score and the DMARC verdict of a raw message. */
export async function ingestTrust(
  parser: Pick<MimeParser, 'parse'>,
  raw: Buffer,
  authentication: AuthenticationVerdict | undefined,
): Promise<IngestTrust> {
  const parsed = await parser.parse(raw);
  const message = parsed.ok ? parsed.value : parsed.partial;
  const content = assessContent({ subject: message?.subject ?? '', ...readTrustBody(message?.body ?? '') });
  return {
    injection: content.injection.score,
    dmarc: authenticationVerdicts(authentication ? { stored: authentication } : undefined).dmarc,
  };
}
