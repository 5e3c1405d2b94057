/**
 * @module submission/submission-service
 * What SMTP submission does besides speaking SMTP: the app password's check (an API key scoped to exactly one grant,
 * with `mail.send`, and the grant's address as the user name), and a submitted message handed to the one send
 * operation of every face (`send_message`) with the face `smtp`. The listener (./submission-smtp.ts) calls these.
 */
import type { OperationContext, Principal } from '../access.js';
import { AppError } from '../errors.js';
import { readRawHeaders, type ParseResult } from '../mime/index.js';
import type { SendMessageInput, SendMessageResult } from '../schemas/send.js';
import { notYourAddress, sendInputOf, type SubmissionEnvelope, type SubmittedSender } from './submission-message.js';

/** Who authenticated: the key's principal and the one grant it sends as. */
export interface SubmissionIdentity extends SubmittedSender {
  principal: Principal;
}

/** What the submission service needs of the core, and the send operation (the faces' one way to send). */
export interface SubmissionDeps {
  authenticateApiKey(key: string): Promise<Principal>;
  /** The grant's address (a 404 when the principal cannot reach it). */
  grantAddress(principal: Principal, grantId: string): Promise<string>;
  parse(raw: Buffer): Promise<ParseResult>;
  /** A new request id (one per submitted message, as per HTTP request). */
  requestId(): string;
  /**
   * The id of the grant's message with a Message-ID, if any: a mail client's reply names the message it answers in
   * In-Reply-To, and the send then joins that thread as an API reply does (`reply_to_message_id`).
   */
  answered?(principal: Principal, grantId: string, headerMessageId: string): Promise<string | undefined>;
  /** Runs `send_message` (validation, the outbound path) for this context; answers its result (a SendMessageResult). */
  send(input: SendMessageInput, context: OperationContext): Promise<unknown>;
}

/** What {@link createSubmissionService} returns. */
export interface SubmissionService {
  /**
   * Checks an app password: the user name must be the grant's address, the password an API key scoped to exactly
   * that one grant, with `mail.send`. Any other answer is a 401 (`unauthorized`) that says what is wrong.
   */
  authenticate(username: string, password: string): Promise<SubmissionIdentity>;
  /** The envelope sender must be the grant's address (550 5.7.1 otherwise). */
  checkMailFrom(identity: SubmissionIdentity, address: string): void;
  /**
   * Sends a submitted message through `send_message`: resolves once the outbound path accepted it (stored in Sent,
   * queued, local recipients delivered), with the sent message's id.
   */
  submit(
    identity: SubmissionIdentity,
    envelope: SubmissionEnvelope,
    raw: Buffer,
    client: { address: string | undefined },
  ): Promise<{ messageId: string; requestId: string }>;
}

const refused = (message: string) => new AppError('unauthorized', message);

/** Makes the submission service. */
export function createSubmissionService(deps: SubmissionDeps): SubmissionService {
  return {
    async authenticate(username, password) {
      const principal = await deps.authenticateApiKey(password).catch(() => {
        throw refused('Authentication failed: the password must be an API key (an app password) of the grant');
      });
      const grants = principal.grantIds ? [...principal.grantIds] : [];
      if (grants.length !== 1)
        throw refused(
          'Authentication failed: an app password is an API key scoped to exactly one grant (scope.grant_ids), with mail.send',
        );
      if (principal.permissions && !principal.permissions.has('mail.send'))
        throw refused('Authentication failed: this key lacks the mail.send permission');
      const grantId = grants[0]!;
      const email = await deps.grantAddress(principal, grantId).catch(() => {
        throw refused('Authentication failed: the grant of this key does not exist any more');
      });
      if (username.trim().toLowerCase() !== email.toLowerCase())
        throw refused(`Authentication failed: the user name must be the address of the key's grant`);
      return { principal, grantId, email };
    },

    checkMailFrom(identity, address) {
      if (address.toLowerCase() !== identity.email.toLowerCase())
        throw notYourAddress(`MAIL FROM must be ${identity.email}, the address of the grant this app password is for`);
    },

    async submit(identity, envelope, raw, client) {
      const parsed = await deps.parse(raw);
      if (!parsed.ok) throw new AppError('unprocessable', `The message does not parse: ${parsed.error}`.slice(0, 300));
      const input = sendInputOf(parsed.value, readRawHeaders(raw), raw, envelope, identity);
      const inReplyTo = parsed.value.inReplyTo;
      const answered = inReplyTo ? await deps.answered?.(identity.principal, identity.grantId, inReplyTo) : undefined;
      if (answered !== undefined) input.reply_to_message_id = answered;
      const requestId = deps.requestId();
      const result = (await deps.send(input, {
        principal: identity.principal,
        face: 'smtp',
        requestId,
        address: client.address,
      })) as SendMessageResult;
      return { messageId: 'id' in result.data ? String(result.data.id) : '', requestId };
    },
  };
}
