/**
 * @module outbound/delivery-attempts
 * One delivery attempt for the recipients a `mail.deliver` job still owes a message: local ones through the
 * inbound path (never stored twice: a copy already received with the same Message-ID counts as delivered), remote
 * ones over SMTP to the targets of their domain (outbound/routing.ts), in order, until a server gives a verdict.
 * What each recipient's result means for the job (retry, give up) is the queue's to decide (outbound-queue.ts).
 */
import { and, eq, isNotNull } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { type CoreDeps, SmtpSendError, type SmtpClient, type SmtpTarget } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { InboundService } from '../mail/index.js';
import type { JobContext } from '../jobs/index.js';
import type { AttemptResult, DeliveryAttempts, OutboundRow, RecipientRow, Router } from './contracts.js';
import { RouteError } from './routing.js';

/** How often a long SMTP transaction pushes its job lease forward. */
const LEASE_KEEPALIVE_MS = 20_000;

/** Parts a delivery attempt uses. */
export interface DeliveryAttemptParts {
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  smtp: SmtpClient;
  router: Pick<Router, 'targetsFor'>;
}

/** Creates the two kinds of attempt: local and remote. */
export function createDeliveryAttempts(
  deps: Pick<CoreDeps, 'db'>,
  { inbound, smtp, router }: DeliveryAttemptParts,
): DeliveryAttempts {
  const { db } = deps;

  /** Whether the mailbox already holds a copy received with this Message-ID (a repeated run must not store it twice). */
  async function alreadyDelivered(grantId: string, headerMessageId: string): Promise<boolean> {
    const rows = await db.orm
      .select({ id: tables.messages.id })
      .from(tables.threadReferences)
      .innerJoin(tables.messages, eq(tables.messages.threadId, tables.threadReferences.threadId))
      .where(
        and(
          eq(tables.threadReferences.grantId, grantId),
          eq(tables.threadReferences.headerId, headerMessageId),
          eq(tables.messages.grantId, grantId),
          eq(tables.messages.headerMessageId, headerMessageId),
          isNotNull(tables.messages.envelopeTo),
        ),
      )
      .limit(1);
    return rows.length > 0;
  }

  async function deliverLocal(outbound: OutboundRow, pending: RecipientRow[], raw: Buffer): Promise<AttemptResult[]> {
    const results: AttemptResult[] = [];
    const toStore: { email: string; grantId: string }[] = [];
    for (const recipient of pending) {
      const check = await inbound.checkRecipient(recipient.email);
      if (!check.ok)
        results.push({ email: recipient.email, outcome: 'failed', code: 550, response: `5.1.1 ${check.message}` });
      else if (await alreadyDelivered(check.grant.id, outbound.headerMessageId))
        results.push({ email: recipient.email, outcome: 'delivered', code: 250, response: '2.0.0 Ok: already stored' });
      else toStore.push({ email: recipient.email, grantId: check.grant.id });
    }
    if (toStore.length === 0) return results;
    try {
      const result = await inbound.deliverInbound({
        rawMime: raw,
        envelope: { mailFrom: outbound.envelopeFrom, rcptTo: toStore.map((target) => target.email) },
      });
      const stored = new Map(result.deliveries.map((delivery) => [delivery.grantId, delivery.messageId]));
      for (const target of toStore) {
        const messageId = stored.get(target.grantId);
        const rejected = result.rejected.find((rejection) => rejection.recipient.toLowerCase() === target.email);
        // A copy a rule of the recipient dropped after acceptance was delivered, as far as the sender may know.
        const dropped = result.dropped?.some((drop) => drop.grantId === target.grantId) === true;
        results.push(
          dropped
            ? { email: target.email, outcome: 'delivered', code: 250, response: '2.0.0 Ok' }
            : messageId !== undefined
              ? { email: target.email, outcome: 'delivered', code: 250, response: `2.0.0 Ok: stored as ${messageId}` }
              : {
                  email: target.email,
                  outcome: 'failed',
                  code: 550,
                  response: /^5\.\d+\.\d+ /.test(rejected?.reason ?? '')
                    ? rejected!.reason
                    : `5.1.1 ${rejected?.reason ?? 'not delivered'}`,
                },
        );
      }
    } catch (error) {
      const permanent =
        error instanceof AppError &&
        (error.code === 'not_found' || error.code === 'payload_too_large' || error.code === 'invalid_request');
      const message = error instanceof Error ? error.message : String(error);
      for (const target of toStore) {
        results.push(
          permanent
            ? { email: target.email, outcome: 'failed', code: 550, response: `5.0.0 ${message}` }
            : { email: target.email, outcome: 'deferred', code: 451, response: `4.3.0 ${message}` },
        );
      }
    }
    return results;
  }

  /**
   * Sends to the recipients of one remote domain: each target in turn, until a server answers with a verdict.
   * `returnPathOf` gives each recipient's envelope sender. Recipients that share one (the service's own mail) go in
   * one SMTP transaction; a message with VERP return paths (./deliverability/verp.ts) is one transaction per
   * recipient, one after the other on the same pooled connection (MAIL FROM, RCPT TO, DATA each time): the price
   * of a return path that names the recipient, as with every sender that uses VERP.
   */
  async function deliverRemote(
    outbound: OutboundRow,
    domain: string,
    pending: RecipientRow[],
    raw: Buffer,
    context: JobContext,
    returnPathOf: (email: string) => string = () => outbound.envelopeFrom,
  ): Promise<AttemptResult[]> {
    const emails = pending.map((recipient) => recipient.email);
    const all = (outcome: AttemptResult['outcome'], code: number, response: string) =>
      emails.map((email) => ({ email, outcome, code, response }));
    let targets: SmtpTarget[];
    try {
      targets = await router.targetsFor(domain);
    } catch (error) {
      if (error instanceof RouteError) return all(error.permanent ? 'failed' : 'deferred', error.code, error.message);
      throw error;
    }
    // One envelope per distinct sender, in the recipients' order.
    const envelopes = new Map<string, string[]>();
    for (const email of emails) {
      const from = returnPathOf(email);
      envelopes.set(from, [...(envelopes.get(from) ?? []), email]);
    }
    const verdicts = new Map<string, AttemptResult>();
    let lastError = 'no mail server could be reached';
    const keepAlive = setInterval(() => void context.extendLease().catch(() => undefined), LEASE_KEEPALIVE_MS);
    keepAlive.unref();
    try {
      for (const target of targets) {
        let reached = true;
        for (const [from, to] of envelopes) {
          if (to.every((email) => verdicts.has(email))) continue;
          const outcome = await sendOne(target, from, to, raw);
          if (typeof outcome === 'string') {
            // No verdict from this server: the rest go to the next host; the attempt is deferred if none answers.
            lastError = outcome;
            reached = false;
            break;
          }
          for (const result of outcome) verdicts.set(result.email, result);
        }
        if (reached) break;
      }
    } finally {
      clearInterval(keepAlive);
    }
    return emails.map((email) => verdicts.get(email) ?? { email, outcome: 'deferred', code: 0, response: lastError });
  }

  /** One SMTP transaction: the verdict for each recipient, or (a string) why the server gave none. */
  async function sendOne(
    target: SmtpTarget,
    from: string,
    emails: string[],
    raw: Buffer,
  ): Promise<AttemptResult[] | string> {
    const all = (outcome: AttemptResult['outcome'], code: number, response: string) =>
      emails.map((email) => ({ email, outcome, code, response }));
    try {
      const result = await smtp.send({ ...target, envelope: { from, to: emails }, raw });
      const accepted = new Set(result.accepted.map((email) => email.toLowerCase()));
      const rejected = new Map(result.rejected.map((rejection) => [rejection.recipient.toLowerCase(), rejection]));
      return emails.map((email) => {
        if (accepted.has(email))
          return { email, outcome: 'delivered', code: 250, response: result.response.slice(0, 1000) };
        const rejection = rejected.get(email);
        const code = rejection?.code ?? 0;
        return {
          email,
          outcome: code >= 500 ? 'failed' : 'deferred',
          code,
          response: rejection?.response ?? 'not accepted by the server',
        };
      });
    } catch (error) {
      if (
        !(error instanceof SmtpSendError) ||
        error.code === undefined ||
        error.stage === 'connect' ||
        error.stage === 'auth'
      ) {
        return `${target.servername ?? target.host}:${target.port}: ${error instanceof SmtpSendError ? error.response : String(error)}`;
      }
      // The server answered: its verdict holds for this attempt.
      if (error.rejected.length > 0) {
        const rejected = new Map(error.rejected.map((rejection) => [rejection.recipient.toLowerCase(), rejection]));
        return emails.map((email) => {
          const rejection = rejected.get(email);
          const code = rejection?.code ?? error.code ?? 0;
          return {
            email,
            outcome: code >= 500 ? 'failed' : 'deferred',
            code,
            response: rejection?.response ?? error.response,
          };
        });
      }
      return all(error.code >= 500 ? 'failed' : 'deferred', error.code, error.response);
    }
  }

  return { deliverLocal, deliverRemote };
}
