/**
 * @module mail/inbound-smtp-rcpt
 * RCPT TO at the inbound SMTP listener (./inbound-smtp.ts): a VERP return path (the report intake), the DMARC `rua`
 * address (the DMARC intake) or a hosted mailbox (the `smtp_rcpt` stage), within the limits on recipients and on
 * unknown mailboxes per session and per client.
 */
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import {
  countUnknown,
  counted,
  shuttingDown,
  smtpError,
  unknownOfClient,
  type InboundSmtpState,
} from './inbound-smtp-state.js';

/** RCPT TO: a return path, the DMARC address or a mailbox, within the session's and the client's limits. */
export function admitRecipient(
  smtp: InboundSmtpState,
  address: SMTPServerAddress,
  session: SMTPServerSession,
  reply: (err?: Error | null) => void,
): void {
  const callback = counted(smtp, 'rcpt', reply);
  if (smtp.draining) return callback(shuttingDown());
  const entry = smtp.sockets.get(session.id);
  // Past the limit every recipient is refused unchecked, known or not: answering a known one 250 would
  // still tell which mailboxes exist. 421 closes the session; a real sender retries the rest later.
  if (entry && entry.unknownRecipients >= smtp.maxUnknown) {
    return callback(
      smtpError(
        421,
        `4.7.0 Too many unknown recipients in this session (at most ${smtp.maxUnknown}), closing the connection`,
      ),
    );
  }
  if (entry && unknownOfClient(smtp, entry.client) >= smtp.maxUnknownPerClient) {
    return callback(
      smtpError(
        421,
        `4.7.0 Too many unknown recipients from your address (at most ${smtp.maxUnknownPerClient} in ${Math.round(smtp.unknownWindowMs / 60_000)} minutes), try again later`,
      ),
    );
  }
  if (session.envelope.rcptTo.length >= smtp.maxRecipients) {
    return callback(smtpError(452, `4.5.3 Too many recipients: at most ${smtp.maxRecipients} per message`));
  }
  // The envelope lets the recipient's rules and limits decide at RCPT TO (the smtp_rcpt stage).
  const sizeArgument =
    session.envelope.mailFrom && session.envelope.mailFrom.args
      ? (session.envelope.mailFrom.args as Record<string, string>).SIZE
      : undefined;
  const size = sizeArgument !== undefined && /^\d+$/.test(sizeArgument) ? Number(sizeArgument) : undefined;
  const countUnknownOnce = () => {
    if (!entry) return;
    entry.unknownRecipients++;
    countUnknown(smtp, entry.client);
  };
  const mailboxCheck = () =>
    smtp.inbound
      .checkRecipient(address.address, {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        size,
      })
      .then(
        (check) => {
          if (check.ok) return callback();
          if (check.reason === 'policy')
            return callback(smtpError(check.refusal.code, `${check.refusal.enhanced} ${check.refusal.message}`));
          if (check.reason === 'unknown') countUnknownOnce();
          callback(smtpError(550, check.reason === 'relay' ? `5.7.1 ${check.message}` : `5.1.1 ${check.message}`));
        },
        (error: unknown) => {
          smtp.logger.error('smtp recipient check failed', { error: String(error) });
          callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
        },
      );
  // `dmarc-reports@<registered domain>` is the DMARC intake's; any other domain goes to the mailbox check (relay refusal).
  if (smtp.dmarc && address.address.toLowerCase().startsWith(smtp.ruaPrefix)) {
    return void smtp.dmarc.checkAddress(address.address).then(
      (check) => {
        if (check.kind === 'none') return void mailboxCheck();
        entry?.ruaAddresses.add(address.address.toLowerCase());
        callback();
      },
      (error: unknown) => {
        smtp.logger.error('smtp dmarc address check failed', { error: String(error) });
        callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
      },
    );
  }
  // Only `bounce+…` addresses can be return paths: everything else goes straight to the mailbox check.
  if (!smtp.reports || !/^bounce\+/i.test(address.address)) return void mailboxCheck();
  smtp.reports.checkAddress(address.address).then(
    (path) => {
      if (path.kind === 'none') return void mailboxCheck();
      if (path.kind === 'accept') {
        entry?.returnPaths.add(address.address.toLowerCase());
        return callback();
      }
      // A forged or altered token counts as an unknown mailbox: guessing tokens ends the session like guessing names.
      if (path.reason === 'unknown') countUnknownOnce();
      callback(smtpError(550, path.reason === 'relay' ? `5.7.1 ${path.message}` : `5.1.1 ${path.message}`));
    },
    (error: unknown) => {
      smtp.logger.error('smtp return path check failed', { error: String(error) });
      callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
    },
  );
}
