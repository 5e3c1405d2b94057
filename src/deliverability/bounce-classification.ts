/**
 * @module deliverability/bounce-classification
 * Hard or soft (pure). A hard bounce says the address will not work: it goes on the application's suppression list.
 * A soft one says this message did not get through, and a later one may: it is recorded and counted, nothing more.
 * A wrong "hard" silences a good address until someone removes it, so only what names the address itself is hard.
 *
 * | what the report says                                                        | type |
 * |-----------------------------------------------------------------------------|------|
 * | any 4.x.x status or 4xx reply (even after the sender gave up retrying)      | soft |
 * | mailbox full / over quota / insufficient storage, 5.2.2, 5.2.3              | soft |
 * | 5.1.x (bad mailbox, bad domain, moved, null MX …)                           | hard |
 * | 5.2.1 (mailbox disabled)                                                    | hard |
 * | 5.4.4 (unable to route: no such domain)                                     | hard |
 * | "user unknown", "no such user", "does not exist", "no such domain", …       | hard |
 * | 5.3.4 (too big), 5.7.x (policy, spam, authentication), 5.5.x, other 5.x.x  | soft |
 * | a bare 5xx reply with no enhanced code and no telling words                 | soft |
 * The words are checked before the policy codes: `550 5.7.1 User unknown` is hard, `550 5.1.1 Mailbox full` soft.
 */
import type { BounceType } from '../../storage/schema/deliverability.js';

/** What a bounce is classified from. */
export interface BounceFacts {
  /** Enhanced status code (`5.1.1`), when known. */
  status?: string | undefined;
  /** SMTP reply code (550), when known. */
  smtpCode?: number | undefined;
  /** Diagnostic text. */
  diagnostic?: string | undefined;
}

/** Words that say the mailbox cannot take mail for now. */
const FULL =
  /mailbox (is )?full|over ?quota|quota exceeded|exceeded (the |its )?(storage|quota)|insufficient (system )?storage|mailbox size limit|out of storage/i;
/** Words that say the address itself does not exist. */
const UNKNOWN_ADDRESS =
  /user unknown|unknown user|no such (user|mailbox|recipient|person|address)|(user|mailbox|recipient|address|account) (does not|doesn't|did not) exist|(does not|doesn't) have an? [^\n]{0,40}?account|(mailbox|recipient|user|address) not found|invalid (recipient|mailbox|address)|unknown (recipient|mailbox|address)|recipnotfound|recipientnotfound|not (a )?valid (mailbox|recipient)|address rejected: user unknown|no mailbox here|mailbox unavailable: no such|account (has been )?(disabled|deleted|closed|terminated)/i;
/** Words that say the domain does not exist. */
const UNKNOWN_DOMAIN =
  /no such domain|domain (not found|does not exist)|host (or domain name )?not found|unrouteable (mail )?domain|unroutable address|name service error|domain name not found|nxdomain/i;

/** Hard or soft: see the module's table. */
export function classifyBounce(facts: BounceFacts): BounceType {
  const status = facts.status && /^[245]\.\d{1,3}\.\d{1,3}$/.test(facts.status) ? facts.status : undefined;
  const text = facts.diagnostic ?? '';
  const klass = status ? status[0] : facts.smtpCode !== undefined ? String(facts.smtpCode)[0] : undefined;
  if (klass === '4') return 'soft';
  if (status === '5.2.2' || status === '5.2.3' || FULL.test(text)) return 'soft';
  if (status?.startsWith('5.1.') || status === '5.2.1' || status === '5.4.4') return 'hard';
  if (UNKNOWN_ADDRESS.test(text) || UNKNOWN_DOMAIN.test(text)) return 'hard';
  return 'soft';
}

/** The enhanced status code and SMTP reply code found in a reply or diagnostic text, when there are any. */
export function codesIn(text: string): { status: string | undefined; smtpCode: number | undefined } {
  const smtp = /(?:^|[^\d.])([45]\d\d)(?:[ :;-]|$)/.exec(text);
  const status = /(?:^|[^\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.]*\d)/.exec(text);
  return { status: status?.[1], smtpCode: smtp ? Number(smtp[1]) : undefined };
}
