/**
 * @module outbound/transactional-send
 * Sends from a domain without a mailbox (`POST /v3/domains/{domain}/messages/send`). The domain must belong to the
 * calling application (another's is a 404) and be verified (a trial subdomain, or ownership proved by DNS); the
 * sender must be on it. The message takes the same path out as a mailbox's send (MIME composed once, DKIM-signed
 * when the domain's DKIM is verified, local recipients delivered at once, the others through the durable queue),
 * but no sender's copy is stored anywhere: only the queued outbound record, kind `transactional`, with no grant.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { isDomainUsable } from '../domains/index.js';
import { AppError, invalid, notFound } from '../errors.js';
import { MAX_RECIPIENTS, type TransactionalSendInput, type TransactionalSendResult } from '../schemas/send.js';
import type { ComposeInput } from './compose.js';
import type { Composer, Submission } from './contracts.js';
import { domainOf } from './routing.js';

/** Parts a transactional send uses. */
export interface TransactionalSendParts {
  composer: Pick<Composer, 'resolveAttachments'>;
  submission: Pick<Submission, 'sendDetached'>;
}

/** Creates the transactional sender. */
export function createTransactionalSend(
  { db, clock, newId }: CoreDeps,
  { composer, submission }: TransactionalSendParts,
) {
  return async function sendFromDomain(
    principal: Principal,
    input: TransactionalSendInput,
  ): Promise<TransactionalSendResult> {
    const domainName = input.domain_name.toLowerCase();
    const [domain] = await db.orm
      .select()
      .from(tables.domains)
      .where(
        and(eq(tables.domains.domainAddress, domainName), eq(tables.domains.applicationId, principal.applicationId)),
      )
      .limit(1);
    if (!domain) throw notFound('Domain', domainName);
    if (!isDomainUsable(domain)) {
      throw new AppError(
        'invalid_request',
        `Domain ${JSON.stringify(domainName)} is not verified: verify its ownership record first (POST /v3/admin/domains/${domain.id}/verify with type ownership).`,
      );
    }
    if (input.send_at !== undefined)
      throw invalid(
        'send_at',
        'a send from a domain cannot be scheduled; send now, or schedule from a mailbox (/grants/{id}/messages/send).',
      );
    // The wire form is one object; the SDK's type also allows a list of one.
    const sender = Array.isArray(input.from) ? input.from[0]! : input.from;
    if (domainOf(sender.email) !== domainName)
      throw invalid('from', `the sender must be an address on ${domainName}, not ${sender.email}.`);
    const to = input.to ?? [];
    const cc = input.cc ?? [];
    const bcc = input.bcc ?? [];
    const recipients = new Set([...to, ...cc, ...bcc].map((entry) => entry.email.toLowerCase()));
    if (recipients.size === 0) throw invalid('to', 'give at least one recipient in to, cc or bcc.');
    if (recipients.size > MAX_RECIPIENTS) {
      throw invalid(
        'to',
        `${recipients.size} recipients; a message may have at most ${MAX_RECIPIENTS} (to, cc and bcc together). Split the list into several messages.`,
      );
    }
    const headerMessageId = `${newId()}@${domainName}`;
    const address = (entry: { name?: string | undefined; email: string }) =>
      entry.name ? { name: entry.name, email: entry.email } : { email: entry.email };
    const message: ComposeInput = {
      from: address(sender),
      to: to.map(address),
      cc: cc.map(address),
      bcc: bcc.map(address),
      replyTo: (input.reply_to ?? []).map(address),
      subject: input.subject ?? '',
      body: input.body ?? '',
      isPlaintext: input.is_plaintext ?? false,
      attachments: await composer.resolveAttachments(undefined, input.attachments ?? []),
      messageId: headerMessageId,
      date: clock.now(),
      inReplyTo: undefined,
      references: [],
      customHeaders: (input.custom_headers ?? []).map(({ name, value }) => ({ name, value })),
    };
    const { outboundId } = await submission.sendDetached({
      applicationId: principal.applicationId,
      grantId: null,
      kind: 'transactional',
      input: message,
      envelopeFrom: sender.email,
    });
    return { message_id: outboundId ?? headerMessageId, message_id_header: `<${headerMessageId}>` };
  };
}
