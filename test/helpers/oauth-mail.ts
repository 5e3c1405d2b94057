/**
 * The mail servers of OAuth grants in tests: Debian's Dovecot logging in with access tokens by introspecting them at
 * the test's authorization server (`passdb { driver = oauth2 }`), and Postfix's submission authenticating through
 * Dovecot's SASL and delivering over LMTP to `example.test`, so IMAP and SMTP XOAUTH2 are both real.
 */
import type { ImapFlow } from 'imapflow';
import { startDovecot, type Dovecot } from './dovecot.js';
import { eventually } from './mail.js';
import type { OidcServer } from './oidc.js';
import { startPostfix, type Postfix } from './postfix.js';

/** The fixed ports of a test file's servers. */
export interface OAuthMailPorts {
  imap: number;
  lmtp: number;
  auth: number;
  smtp: number;
}

/** Starts Dovecot (users with passwords, and tokens introspected at `oidc`) and Postfix's submission in front of it. */
export async function startOAuthMail(
  ports: OAuthMailPorts,
  users: { user: string; password: string }[],
  oidc: OidcServer,
): Promise<{ dovecot: Dovecot; postfix: Postfix }> {
  const dovecot = await startDovecot({
    imapPort: ports.imap,
    lmtpPort: ports.lmtp,
    authPort: ports.auth,
    users,
    oauth2: { introspectionUrl: oidc.dovecotIntrospectionUrl },
  });
  const postfix = startPostfix({
    port: ports.smtp,
    domain: 'postfix.localhost',
    transports: {},
    saslAuthPort: ports.auth,
    lmtp: { port: ports.lmtp, domains: ['example.test'] },
  });
  return { dovecot, postfix };
}

/** A small message from `from` to `to` (its Message-ID made of the subject), to append to a mailbox. */
export function smallMail(from: string, to: string, subject: string): string {
  return [
    `From: ${from}`,
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, '-')}@example.test>`,
    'Date: Sun, 29 Nov 2026 12:00:00 +0000',
    '',
    'hello',
    '',
  ].join('\r\n');
}

/** Waits until a message with `subject` is in the INBOX of `client`. */
export async function arrivesIn(client: ImapFlow, subject: string, timeoutMs: number): Promise<void> {
  await eventually(async () => {
    const lock = await client.getMailboxLock('INBOX');
    try {
      const found = (await client.search({ subject }, { uid: true })) || [];
      return found.length > 0 ? true : undefined;
    } finally {
      lock.release();
    }
  }, timeoutMs);
}
