/**
 * Debian's Postfix as a real recipient MTA on loopback, for tests: its own configuration, queue and data
 * directories in a temp dir (so it never meets another instance), its smtpd on a port given by the test,
 * `mydestination` a test domain whose unknown users it ACCEPTS and then bounces (no recipient maps), and a
 * transport map that sends mail for chosen domains to a given `host:port` (our listener) instead of DNS.
 * Optionally it is a connected account's submission server: SMTP AUTH checked by Dovecot's auth service
 * (`smtpd_sasl_type = dovecot`) and mail for chosen domains delivered to Dovecot's users over LMTP.
 * Needs root (master runs as root and drops to `mail_owner = postfix`) and the `postfix` package; tests skip
 * with a clear message when it is missing ({@link postfixMissing}).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './service.js';

/** Why Postfix cannot run here, or undefined when it can. */
export function postfixMissing(): string | undefined {
  if (!existsSync('/usr/sbin/postfix'))
    return 'postfix is not installed (apt-get install postfix; .ci/run installs it)';
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'postfix tests need root (master starts as root and drops to the postfix user)';
  try {
    execFileSync('id', ['postfix'], { stdio: 'ignore' });
  } catch {
    return 'the postfix user does not exist (the postfix package creates it)';
  }
  return undefined;
}

/** Options of {@link startPostfix}. */
export interface PostfixOptions {
  /** Port of its smtpd on 127.0.0.1 (a fixed port of the test's range: Postfix cannot pick one and say which). */
  port: number;
  /** The domain it is the final destination for (local delivery: an unknown user there bounces). */
  domain: string;
  /** Domains whose mail goes to `host:port` (e.g. our listener), not through DNS. */
  transports: Record<string, { host: string; port: number }>;
  /** SMTP AUTH through Dovecot's auth service on this loopback port (`smtpd_sasl_path = inet:127.0.0.1:<port>`). */
  saslAuthPort?: number;
  /** Domains relayed to Dovecot over LMTP on this loopback port (every user of them accepted; Dovecot's LMTP decides). */
  lmtp?: { port: number; domains: string[] };
}

/** A running instance. */
export interface Postfix {
  port: number;
  /** The configuration directory (for `postfix -c`). */
  configDirectory: string;
  /** The instance's log so far (maillog_file). */
  log(): string;
  /** Asks the queue manager to try deferred mail now. */
  flush(): void;
  stop(): void;
}

/** The services this instance runs: none chrooted (its queue directory has no chroot files), smtpd on loopback only. */
function masterCf(port: number, lmtp: boolean): string {
  return [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    'pickup    unix  n - n 60   1 pickup',
    'cleanup   unix  n - n -    0 cleanup',
    'qmgr      unix  n - n 300  1 qmgr',
    'rewrite   unix  - - n -    - trivial-rewrite',
    'bounce    unix  - - n -    0 bounce',
    'defer     unix  - - n -    0 bounce',
    'trace     unix  - - n -    0 bounce',
    'verify    unix  - - n -    1 verify',
    'flush     unix  n - n 1000? 0 flush',
    'proxymap  unix  - - n -    - proxymap',
    'smtp      unix  - - n -    - smtp',
    'relay     unix  - - n -    - smtp',
    'showq     unix  n - n -    - showq',
    'error     unix  - - n -    - error',
    'retry     unix  - - n -    - error',
    'discard   unix  - - n -    - discard',
    'local     unix  - n n -    - local',
    'anvil     unix  - - n -    1 anvil',
    'scache    unix  - - n -    1 scache',
    'postlog   unix-dgram n - n - 1 postlogd',
    ...(lmtp ? ['lmtp      unix  - - n -    - lmtp'] : []),
    '',
  ].join('\n');
}

/** Writes the configuration and starts the instance (`postfix -c <dir> start`). Call `stop()` in afterAll. */
export function startPostfix(options: PostfixOptions): Postfix {
  const dir = tempDir('agentpost-postfix-');
  // The postfix user must reach its directories inside the (root-only) temp dir.
  chmodSync(dir.path, 0o755);
  const config = join(dir.path, 'conf');
  const queue = join(dir.path, 'queue');
  const data = join(dir.path, 'data');
  for (const path of [config, queue, data]) mkdirSync(path, { recursive: true });
  chownSync(
    data,
    Number(execFileSync('id', ['-u', 'postfix']).toString().trim()),
    Number(execFileSync('id', ['-g', 'postfix']).toString().trim()),
  );
  const maillog = join(dir.path, 'maillog');
  const transport = join(config, 'transport');
  writeFileSync(
    transport,
    [
      ...Object.entries(options.transports).map(
        ([domain, target]) => `${domain} smtp:[${target.host}]:${target.port}\n`,
      ),
      ...(options.lmtp?.domains ?? []).map((domain) => `${domain} lmtp:inet:127.0.0.1:${options.lmtp!.port}\n`),
    ].join(''),
  );
  writeFileSync(
    join(config, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${queue}`,
      `data_directory = ${data}`,
      'mail_owner = postfix',
      `myhostname = mx.${options.domain}`,
      `mydomain = ${options.domain}`,
      `myorigin = ${options.domain}`,
      `mydestination = ${options.domain}`,
      'inet_interfaces = loopback-only',
      'inet_protocols = ipv4',
      // Accept any user of mydestination, then bounce the unknown ones: the DSN this test is about.
      'local_recipient_maps =',
      'smtpd_reject_unlisted_recipient = no',
      'mynetworks = 127.0.0.0/8',
      'alias_maps =',
      'alias_database =',
      `transport_maps = texthash:${transport}`,
      // No DNS here: mail for other domains stays queued (only the transport map's domains are reachable).
      'smtp_dns_support_level = disabled',
      'smtp_tls_security_level = none',
      // Its own log file (no syslog in a container).
      `maillog_file_prefixes = ${dir.path}`,
      `maillog_file = ${maillog}`,
      // Retry deferred mail soon (our listener may come up after it).
      'queue_run_delay = 1s',
      'minimal_backoff_time = 1s',
      'maximal_backoff_time = 2s',
      ...(options.saslAuthPort
        ? [
            'smtpd_sasl_auth_enable = yes',
            'smtpd_sasl_type = dovecot',
            `smtpd_sasl_path = inet:127.0.0.1:${options.saslAuthPort}`,
            'smtpd_tls_auth_only = no',
            'smtpd_relay_restrictions = permit_sasl_authenticated, permit_mynetworks, reject_unauth_destination',
          ]
        : []),
      // Dovecot's LMTP says which users exist; Postfix takes every address of these domains.
      ...(options.lmtp
        ? [
            `relay_domains = ${options.lmtp.domains.join(', ')}`,
            'relay_recipient_maps =',
            'lmtp_tls_security_level = none',
          ]
        : []),
      '',
    ].join('\n'),
  );
  writeFileSync(join(config, 'master.cf'), masterCf(options.port, options.lmtp !== undefined));
  const run = (...args: string[]) =>
    execFileSync('postfix', ['-c', config, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    run('start');
  } catch (error) {
    const log = existsSync(maillog) ? readFileSync(maillog, 'utf8') : '';
    dir.remove();
    throw new Error(`postfix did not start: ${(error as Error).message}\n${log}`);
  }
  let stopped = false;
  return {
    port: options.port,
    configDirectory: config,
    log: () => (existsSync(maillog) ? readFileSync(maillog, 'utf8') : ''),
    flush: () => {
      execFileSync('postqueue', ['-c', config, '-f'], { stdio: 'ignore' });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('stop');
      } catch {
        try {
          run('abort');
        } catch {
          // Already gone.
        }
      }
      dir.remove();
    },
  };
}
