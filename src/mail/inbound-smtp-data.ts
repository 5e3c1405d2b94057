/**
 * @module mail/inbound-smtp-data
 * DATA at the inbound SMTP listener (./inbound-smtp.ts): oversize data counted, not kept; a header section over the
 * limit refused; reports recorded first, then the mailboxes, and 250 only after everything committed.
 */
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { AppError } from '../errors.js';
import { headerSectionTooLarge } from './header-section.js';
import { smtpError, toSmtpError, type InboundSmtpState } from './inbound-smtp-state.js';

/** DATA: the message read with a byte cap and a deadline, then the reports and the mailboxes; 250 once all are stored. */
export function receiveData(
  smtp: InboundSmtpState,
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  reply: (err?: Error | null, message?: string) => void,
): void {
  smtp.inData++;
  let replied = false;
  let ended: number | undefined;
  const callback: typeof reply = (error, ...rest) => {
    if (!replied) smtp.inData--;
    replied = true;
    smtp.metrics.smtpReply('data', error ? ((error as Error & { responseCode?: number }).responseCode ?? 451) : 250);
    if (ended !== undefined) smtp.metrics.ingestSeconds((performance.now() - ended) / 1000);
    reply(error, ...rest);
  };
  // A reset during DATA: no reply will be sent, the message is not ours to finish.
  stream.once('error', () => {
    if (!replied) smtp.inData--;
    replied = true;
  });
  const chunks: Buffer[] = [];
  let size = 0;
  let oversize = false;
  const entry = smtp.sockets.get(session.id);
  const deadline = setTimeout(() => entry?.socket.destroy(), smtp.dataTimeoutMs);
  deadline.unref();
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (oversize) return;
    if (size > smtp.maxBytes) {
      // Count the rest, keep none of it: memory stays bounded whatever the client sends.
      oversize = true;
      chunks.length = 0;
      return;
    }
    chunks.push(chunk);
  });
  // A reset during DATA destroys the stream with an error; the message is simply not taken.
  stream.on('error', () => {
    clearTimeout(deadline);
    chunks.length = 0;
  });
  stream.on('end', () => {
    ended = performance.now();
    clearTimeout(deadline);
    if (oversize || stream.sizeExceeded) {
      return callback(smtpError(552, `5.3.4 Message too big: the limit is ${smtp.maxBytes} bytes`));
    }
    const raw = Buffer.concat(chunks, size);
    chunks.length = 0;
    if (headerSectionTooLarge(raw, smtp.maxHeaderBytes)) {
      return callback(smtpError(552, `5.3.4 Message header too large: the limit is ${smtp.maxHeaderBytes} bytes`));
    }
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const recipients = session.envelope.rcptTo.map((recipient) => recipient.address);
    const accepted = entry?.returnPaths ?? new Set<string>();
    const ruaAccepted = entry?.ruaAddresses ?? new Set<string>();
    const toReturnPaths = recipients.filter((recipient) => accepted.has(recipient.toLowerCase()));
    const toRua = recipients.filter((recipient) => ruaAccepted.has(recipient.toLowerCase()));
    const toMailboxes = recipients.filter(
      (recipient) => !accepted.has(recipient.toLowerCase()) && !ruaAccepted.has(recipient.toLowerCase()),
    );
    // Reports first (a repeat of the same bytes records nothing twice), then the mailboxes; 250 only when both
    // are stored, so a failure of either answers 4xx and the sender retries the whole message.
    const deliver = async (): Promise<string> => {
      const notes: string[] = [];
      if (toReturnPaths.length > 0 && smtp.reports) {
        const outcome = await smtp.reports.receive({ raw, rcptTo: toReturnPaths });
        notes.push(
          outcome.recorded.length > 0 ? `report recorded as ${outcome.recorded.join(',')}` : 'report accepted',
        );
      }
      if (toRua.length > 0 && smtp.dmarc) {
        const outcome = await smtp.dmarc.receive({ raw, rcptTo: toRua });
        notes.push(
          outcome.recorded.length > 0
            ? `DMARC report stored as ${outcome.recorded.join(',')}`
            : `DMARC report ignored (${(outcome.ignored[0] ?? 'nothing to store').replace(/[\r\n]+/g, ' ').slice(0, 200)})`,
        );
      }
      if (toMailboxes.length > 0) {
        const result = await smtp.inbound.deliverInbound({
          rawMime: raw,
          envelope: { mailFrom, rcptTo: toMailboxes },
          client: { address: session.remoteAddress, helo: session.hostNameAppearsAs ?? '' },
          recipientsAdmitted: true,
        });
        if (result.deliveries.length > 0)
          notes.push(`stored as ${result.deliveries.map((delivery) => delivery.messageId).join(',')}`);
      }
      return notes.length > 0 ? `2.0.0 Ok: ${notes.join('; ')}` : '2.0.0 Ok';
    };
    deliver().then(
      (text) => callback(null, text),
      (error: unknown) => {
        if (!(error instanceof AppError) || error.code === 'internal')
          smtp.logger.error('smtp delivery failed', {
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
        callback(toSmtpError(error));
      },
    );
  });
}
