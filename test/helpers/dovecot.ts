/**
 * Debian's Dovecot as a real IMAP server on loopback, for tests: its own configuration, run and mail directories
 * in a temp dir (so it never meets another instance), test users in a passwd-file (plain passwords), Maildir
 * storage owned by the `mail` user, IMAP on a port the test gives, and optionally:
 * - IMAP over TLS (implicit, a self-signed certificate made here) on a second port;
 * - LMTP on a port (Postfix delivers to Dovecot users through it);
 * - its auth service on a port (Postfix's SMTP AUTH asks Dovecot: `smtpd_sasl_type = dovecot`);
 * - the special-use folders (RFC 6154: Drafts, Sent, Trash, Junk, Archive), or none at all (`specialUse: false`,
 *   a server without the attributes).
 * Needs root (the master runs as root and drops to `mail`) and the `dovecot-imapd` package; tests skip with a clear
 * message when it is missing ({@link dovecotMissing}). Ports are fixed ones of the test's range: Dovecot cannot pick
 * one and say which.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './service.js';

/** Why Dovecot cannot run here, or undefined when it can. */
export function dovecotMissing(): string | undefined {
  if (!existsSync('/usr/sbin/dovecot'))
    return 'dovecot is not installed (apt-get install dovecot-imapd; .ci/run installs it)';
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'dovecot tests need root (the master starts as root and drops to the mail user)';
  try {
    execFileSync('id', ['dovenull'], { stdio: 'ignore' });
  } catch {
    return 'the dovenull user does not exist (the dovecot-core package creates it)';
  }
  return undefined;
}

/** A test user: `user` is the login name (an address), `password` in plain text. */
export interface DovecotUser {
  user: string;
  password: string;
}

/** Options of {@link startDovecot}. */
export interface DovecotOptions {
  /** IMAP (plain text, STARTTLS offered only with `tlsPort`) on 127.0.0.1. */
  imapPort: number;
  /** Implicit TLS IMAP on 127.0.0.1, with a self-signed certificate for `localhost`. */
  tlsPort?: number;
  /** LMTP on 127.0.0.1, for Postfix's delivery to these users. */
  lmtpPort?: number;
  /** The auth service on 127.0.0.1, for Postfix's SMTP AUTH (`smtpd_sasl_path = inet:127.0.0.1:<port>`). */
  authPort?: number;
  users: DovecotUser[];
  /** Whether folders carry special-use attributes (default true); false is a server without them (names only). */
  specialUse?: boolean;
  /**
   * Also log in with OAuth 2.0 (`XOAUTH2`, `OAUTHBEARER`): a second passdb (`driver = oauth2`) posts each token to
   * this introspection endpoint (RFC 7662, `introspection_mode = post`; the client's id and secret in the URL's
   * userinfo) and takes the login name from `usernameAttribute` of the answer (default `sub`).
   */
  oauth2?: { introspectionUrl: string; usernameAttribute?: string };
  /** Extra lines of dovecot.conf (e.g. `imap_capability = ...` to hide an extension). */
  extra?: string[];
}

/** A running instance. */
export interface Dovecot {
  imapPort: number;
  tlsPort: number | undefined;
  lmtpPort: number | undefined;
  authPort: number | undefined;
  /** Where the users' Maildirs are: `<mailDirectory>/<domain>/<local part>`. */
  mailDirectory: string;
  /** Gives files written straight into the Maildirs to the mail user (Dovecot's processes run as it). */
  chownMail(): void;
  /** The instance's log so far. */
  log(): string;
  /** Runs `doveadm -c <conf> <args>` and returns its output (e.g. `['mailbox', 'list', '-u', user]`). */
  doveadm(...args: string[]): string;
  /**
   * Changes a user's password in the passwd-file. Dovecot looks at the file again at most once a second (on a
   * login), so this resolves once a second has passed: every login after it meets the new password.
   */
  setPassword(user: string, password: string): Promise<void>;
  stop(): Promise<void>;
}

/** The folders and their special use, when the server has them (RFC 6154 names as Dovecot's example config has them). */
const SPECIAL_FOLDERS: [string, string][] = [
  ['Drafts', '\\Drafts'],
  ['Sent', '\\Sent'],
  ['Trash', '\\Trash'],
  ['Junk', '\\Junk'],
  ['Archive', '\\Archive'],
];

/** Waits until something listens on `port` of loopback. */
async function listening(port: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Writes the configuration and starts Dovecot in the foreground (`dovecot -F -c <conf>`). Call `stop()` in afterAll. */
/**
 * Starts Dovecot; a port that another process holds for a moment (an outgoing connection's ephemeral port can land
 * on a fixed test port) is tried again a few times before the start fails.
 */
export async function startDovecot(options: DovecotOptions): Promise<Dovecot> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDovecotOnce(options);
    } catch (error) {
      if (attempt >= 4 || !/Address already in use/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_500 * attempt));
    }
  }
}

async function startDovecotOnce(options: DovecotOptions): Promise<Dovecot> {
  const dir = tempDir('agentpost-dovecot-');
  chmodSync(dir.path, 0o755);
  const mailUid = Number(execFileSync('id', ['-u', 'mail']).toString().trim());
  const mailGid = Number(execFileSync('id', ['-g', 'mail']).toString().trim());
  const run = join(dir.path, 'run');
  const mail = join(dir.path, 'mail');
  const state = join(dir.path, 'state');
  for (const path of [run, mail, state]) mkdirSync(path, { recursive: true });
  chownSync(mail, mailUid, mailGid);
  const users = join(dir.path, 'users');
  const passwords = new Map(options.users.map((entry) => [entry.user, entry.password]));
  const writeUsers = () =>
    writeFileSync(users, [...passwords].map(([user, password]) => `${user}:{PLAIN}${password}::::::\n`).join(''));
  writeUsers();
  chmodSync(users, 0o644);
  let usersStamp = Math.floor(statSync(users).mtimeMs / 1000);
  const logFile = join(dir.path, 'dovecot.log');
  const conf = join(dir.path, 'dovecot.conf');
  const specialUse = options.specialUse ?? true;

  const lines = [
    `base_dir = ${run}`,
    `state_dir = ${state}`,
    `log_path = ${logFile}`,
    `info_log_path = ${logFile}`,
    `instance_name = agentpost-${options.imapPort}`,
    `protocols = imap${options.lmtpPort ? ' lmtp' : ''}`,
    'listen = 127.0.0.1',
    'disable_plaintext_auth = no',
    `auth_mechanisms = plain login${options.oauth2 ? ' xoauth2 oauthbearer' : ''}`,
    'default_internal_user = dovecot',
    'default_login_user = dovenull',
    `first_valid_uid = ${mailUid}`,
    `mail_location = maildir:${mail}/%d/%n`,
    'mail_plugins =',
    'passdb {',
    '  driver = passwd-file',
    `  args = scheme=PLAIN username_format=%u ${users}`,
    '}',
    ...(options.oauth2
      ? [
          'passdb {',
          '  driver = oauth2',
          '  mechanisms = xoauth2 oauthbearer',
          `  args = ${join(dir.path, 'oauth2.conf')}`,
          '}',
        ]
      : []),
    'userdb {',
    '  driver = static',
    `  args = uid=${mailUid} gid=${mailGid} home=${mail}/%d/%n`,
    '}',
    'namespace inbox {',
    '  inbox = yes',
    '  separator = /',
    ...SPECIAL_FOLDERS.flatMap(([name, use]) => [
      `  mailbox ${name} {`,
      '    auto = subscribe',
      ...(specialUse ? [`    special_use = ${use}`] : []),
      '  }',
    ]),
    '}',
    'service imap-login {',
    `  inet_listener imap {\n    address = 127.0.0.1\n    port = ${options.imapPort}\n  }`,
    `  inet_listener imaps {\n    address = 127.0.0.1\n    port = ${options.tlsPort ?? 0}\n    ssl = yes\n  }`,
    '}',
    'service imap {',
    '  process_limit = 256',
    '}',
    // Postfix's SMTP AUTH asks Dovecot; LMTP delivers to these users.
    'service auth {',
    ...(options.authPort
      ? [`  inet_listener auth-inet {\n    address = 127.0.0.1\n    port = ${options.authPort}\n  }`]
      : []),
    '}',
    ...(options.lmtpPort
      ? [
          'service lmtp {',
          `  inet_listener lmtp {\n    address = 127.0.0.1\n    port = ${options.lmtpPort}\n  }`,
          '}',
          'lmtp_save_to_detail_mailbox = no',
        ]
      : []),
    // The users log in with their full address; LMTP recipients are the same addresses.
    'auth_username_format = %Lu',
    ...(options.extra ?? []),
  ];
  if (options.tlsPort) {
    const key = join(dir.path, 'key.pem');
    const cert = join(dir.path, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    lines.push('ssl = yes', `ssl_cert = <${cert}`, `ssl_key = <${key}`);
  } else {
    lines.push('ssl = no');
  }
  if (options.oauth2) {
    writeFileSync(
      join(dir.path, 'oauth2.conf'),
      [
        `introspection_url = ${options.oauth2.introspectionUrl}`,
        'introspection_mode = post',
        `username_attribute = ${options.oauth2.usernameAttribute ?? 'sub'}`,
        'active_attribute = active',
        'active_value = true',
        'tokeninfo_url =',
        '',
      ].join('\n'),
    );
  }
  writeFileSync(conf, `${lines.join('\n')}\n`);

  const child: ChildProcess = spawn('/usr/sbin/dovecot', ['-F', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const readLog = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const deadline = Date.now() + 10_000;
  const ports = [options.imapPort, options.tlsPort, options.lmtpPort, options.authPort].filter(
    (port): port is number => port !== undefined,
  );
  for (const port of ports) {
    if (!(await listening(port, deadline)) || child.exitCode !== null) {
      child.kill('SIGKILL');
      dir.remove();
      throw new Error(`dovecot did not start (port ${port}): ${output}\n${readLog()}`);
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    imapPort: options.imapPort,
    tlsPort: options.tlsPort,
    lmtpPort: options.lmtpPort,
    authPort: options.authPort,
    mailDirectory: mail,
    chownMail: () => execFileSync('chown', ['-R', `${mailUid}:${mailGid}`, mail]),
    log: readLog,
    doveadm: (...args: string[]) =>
      execFileSync('doveadm', ['-c', conf, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString(),
    async setPassword(user: string, password: string) {
      passwords.set(user, password);
      writeUsers();
      // Dovecot reloads the file when its mtime (whole seconds) or size changed: make the mtime move on.
      usersStamp = Math.max(usersStamp + 1, Math.ceil(Date.now() / 1000));
      utimesSync(users, usersStamp, usersStamp);
      // Its check runs at most once per second of its clock: a login in the second of the last one would miss it.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    },
    stop() {
      stopped ??= (async () => {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
        dir.remove();
      })();
      return stopped;
    },
  };
}
