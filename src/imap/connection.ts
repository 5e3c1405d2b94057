/**
 * @module imap/connection
 * Connections to a connected account's servers: IMAP through imapflow (the only module that imports it besides the
 * sync), SMTP login checks through nodemailer. Every IMAP connection holds a slot of its server (host and port)
 * for as long as it is open, so one server never gets more than `config.imap.maxConnectionsPerServer` connections
 * from this process however many accounts live on it; connect and command waits are bounded by the timeouts of
 * `config.imap`. Certificates that fail verification are refused unless the account allows them.
 */
import { isIP } from 'node:net';
import { ImapFlow, type ImapFlowOptions } from 'imapflow';
import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import type { DnsResolver, SecretBox } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { FetchSession, FetchThreads } from './fetch-thread.js';

/** Messages of a fetch thread handed over together (or fewer, once they reach {@link FETCH_GROUP_BYTES}). */
export const FETCH_GROUP_MESSAGES = 64;
export const FETCH_GROUP_BYTES = 4 * 1024 * 1024;

/** What it takes to reach an account's servers, passwords in clear (opened from the account row just before use). */
export interface ImapEndpoint {
  host: string;
  port: number;
  /** Implicit TLS; otherwise STARTTLS when offered. */
  secure: boolean;
  username: string;
  password: string;
  allowInsecureTls: boolean;
  /** Log in with this grant's OAuth access token (XOAUTH2/OAUTHBEARER) instead of the password. */
  oauthGrantId?: string | undefined;
}

/** The SMTP side. */
export interface SmtpEndpoint {
  host: string;
  port: number;
  secure: boolean;
  username: string;
  password: string;
  allowInsecureTls: boolean;
  /** Log in with this grant's OAuth access token (XOAUTH2) instead of the password. */
  oauthGrantId?: string | undefined;
}

/**
 * The current OAuth access token of a grant (src/oauth/grant-tokens.ts, through the core hook); `force`: the server
 * refused the last one, so refresh it now. Rejects when the provider refuses to refresh (the grant is then invalid).
 */
export type AccessTokenSource = (grantId: string, options: { force: boolean }) => Promise<string>;

/** The stored account fields these need (a row of `imap_accounts`). */
export interface AccountServers {
  imapHost: string;
  imapPort: number;
  imapUsername: string;
  imapPasswordSealed: string;
  imapSecure: boolean;
  smtpHost: string;
  smtpPort: number;
  smtpUsername: string | null;
  smtpPasswordSealed: string | null;
  smtpSecure: boolean;
  allowInsecureTls: boolean;
  grantId: string;
  authMethod: 'password' | 'oauth2';
}

/** The endpoints of a stored account, passwords opened with `secrets`. */
export function endpointsOf(account: AccountServers, secrets: SecretBox): { imap: ImapEndpoint; smtp: SmtpEndpoint } {
  const imapPassword = secrets.open(account.imapPasswordSealed);
  const oauthGrantId = account.authMethod === 'oauth2' ? account.grantId : undefined;
  return {
    imap: {
      host: account.imapHost,
      port: account.imapPort,
      secure: account.imapSecure,
      username: account.imapUsername,
      password: imapPassword,
      allowInsecureTls: account.allowInsecureTls,
      oauthGrantId,
    },
    smtp: {
      host: account.smtpHost,
      port: account.smtpPort,
      secure: account.smtpSecure,
      username: account.smtpUsername ?? account.imapUsername,
      password: account.smtpPasswordSealed ? secrets.open(account.smtpPasswordSealed) : imapPassword,
      allowInsecureTls: account.allowInsecureTls,
      oauthGrantId,
    },
  };
}

/** Why a login or connection failed, in words for the API's 400 and the grant's `last_error`. */
export interface ConnectFailure {
  /** `auth`: the server refused the credentials; `tls`: the certificate failed; `network`: unreachable or timed out; `protocol`: anything else. */
  kind: 'auth' | 'tls' | 'network' | 'protocol';
  message: string;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'ENODATA',
  'ESERVFAIL',
  'EREFUSED',
  'EAI_AGAIN',
  'ECONNRESET',
  'CONNECT_TIMEOUT',
  'GREETING_TIMEOUT',
  'NoConnection',
  'ETIMEOUT',
  'ESOCKET',
  'ECONNECTION',
  'EPIPE',
]);

/** Whether an error of imapflow or nodemailer (or a connect error made of one) is a refused login. */
function isAuthFailure(error: unknown): boolean {
  if (error instanceof AppError) return failureOf(error)?.kind === 'auth';
  return describeFailure(error, '').kind === 'auth';
}

/** Classifies an error of imapflow or nodemailer (server's own words kept). */
export function describeFailure(error: unknown, server: string): ConnectFailure {
  const record = (error ?? {}) as {
    code?: string;
    message?: string;
    authenticationFailed?: boolean;
    responseText?: string;
    response?: string;
    responseCode?: number;
    serverResponseCode?: string;
  };
  const code = record.code ?? '';
  const reason = (record.responseText ?? record.response ?? record.message ?? String(error)).trim();
  if (
    record.authenticationFailed ||
    code === 'EAUTH' ||
    record.serverResponseCode === 'AUTHENTICATIONFAILED' ||
    record.responseCode === 535
  ) {
    return { kind: 'auth', message: `${server} refused the login: ${reason}` };
  }
  if (TLS_CODES.has(code) || /certificate/i.test(reason)) {
    return {
      kind: 'tls',
      message: `${server}: the TLS certificate failed verification (${reason}). If this server is yours and uses a self-signed certificate, set settings.allow_insecure_tls.`,
    };
  }
  if (NETWORK_CODES.has(code) || /timeout|timed out|ECONNREFUSED|closed/i.test(reason)) {
    return { kind: 'network', message: `${server} could not be reached: ${reason}` };
  }
  return { kind: 'protocol', message: `${server}: ${reason}` };
}

/** No slot of a server became free in time: every connection this process may open to it is in use. */
export class SlotWaitError extends Error {
  constructor(
    readonly server: string,
    readonly limit: number,
  ) {
    super(
      `all ${limit} connections this service may open to ${server} are in use (AGENTPOST_IMAP_MAX_CONNECTIONS_PER_SERVER); try again shortly`,
    );
  }
}

/** A counting semaphore per server: at most `limit` holders at once, the rest wait in order. */
export class ServerSlots {
  readonly #limit: number;
  readonly #held = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();
  constructor(limit: number) {
    this.#limit = limit;
  }
  /**
   * Waits for a slot of `server` (at most `waitMs`, when given: then it rejects with a {@link SlotWaitError} and
   * leaves the queue); call the returned function once to give it back.
   */
  async acquire(server: string, waitMs?: number): Promise<() => void> {
    const held = this.#held.get(server) ?? 0;
    if (held < this.#limit) this.#held.set(server, held + 1);
    else {
      await new Promise<void>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const waiter = () => {
          clearTimeout(timer);
          resolve();
        };
        this.#waiting.set(server, [...(this.#waiting.get(server) ?? []), waiter]);
        if (waitMs === undefined) return;
        timer = setTimeout(() => {
          const queue = (this.#waiting.get(server) ?? []).filter((entry) => entry !== waiter);
          if (queue.length > 0) this.#waiting.set(server, queue);
          else this.#waiting.delete(server);
          reject(new SlotWaitError(server, this.#limit));
        }, waitMs);
      });
    }
    return this.#releaser(server);
  }
  /** A slot of `server` if one is free now and nobody waits (call the returned function once to give it back), else undefined. */
  tryAcquire(server: string): (() => void) | undefined {
    const held = this.#held.get(server) ?? 0;
    if (held >= this.#limit || this.waiting(server) > 0) return undefined;
    this.#held.set(server, held + 1);
    return this.#releaser(server);
  }
  /** Gives a held slot of `server` back, once however often it is called. */
  #releaser(server: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.#waiting.get(server);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.#waiting.delete(server);
      // The slot passes to the next waiter as it is; otherwise it is freed.
      if (next) next();
      else this.#held.set(server, (this.#held.get(server) ?? 1) - 1);
    };
  }
  /** Slots held on `server` now. */
  held(server: string): number {
    return this.#held.get(server) ?? 0;
  }
  /** Callers waiting for a slot of `server` now (an IDLE connection gives its slot up when someone waits). */
  waiting(server: string): number {
    return this.#waiting.get(server)?.length ?? 0;
  }
}

/** An open IMAP connection and the slot it holds; `close()` logs out (or drops the socket) and frees the slot. */
export interface ImapSession {
  client: ImapFlow;
  close(): Promise<void>;
}

/** Opens IMAP connections and checks SMTP logins under the limits of `config.imap`. */
export interface Connector {
  /**
   * Connects and logs in; rejects with an AppError (`invalid_request`, the server's reason) on failure. Waits for a
   * slot of the server first: as long as it takes, or with `boundedSlotWait: true` at most the connect timeout (a
   * login check answering a request must not queue behind long syncs), then rejects as a `network` failure.
   */
  openImap(endpoint: ImapEndpoint, options?: { boundedSlotWait?: boolean }): Promise<ImapSession>;
  /**
   * A session of one of `threads` (./fetch-thread.ts) logged in to the server, holding a slot of it until closed;
   * undefined when no slot of the server or no thread is free now (a sync then fetches on its own connection).
   * Rejects like {@link openImap}.
   */
  openFetchSession(endpoint: ImapEndpoint, threads: FetchThreads): Promise<FetchSession | undefined>;
  /** Connects to the SMTP server and logs in (nodemailer `verify`); rejects like {@link openImap}. */
  checkSmtp(endpoint: SmtpEndpoint): Promise<void>;
  /**
   * Submits a message to the account's SMTP server (logged in): the server's verdict per recipient. Rejects with a
   * {@link SubmissionError} when the server gave no verdict (unreachable, login refused) or refused the whole message.
   */
  submit(endpoint: SmtpEndpoint, envelope: { from: string; to: string[] }, raw: Buffer): Promise<SubmissionResult>;
  readonly slots: ServerSlots;
}

/** What the SMTP server said to a submission. */
export interface SubmissionResult {
  /** Lower-cased. */
  accepted: string[];
  rejected: { recipient: string; code: number; response: string }[];
  /** The server's reply to the message (the 250 line). */
  response: string;
}

/** A submission the server gave no per-recipient verdict for: why, and its reply code when it answered one. */
export class SubmissionError extends Error {
  constructor(
    readonly failure: ConnectFailure,
    /** The server's reply code (a 5xx is final), or undefined when it never answered. */
    readonly code: number | undefined,
    readonly rejected: { recipient: string; code: number; response: string }[] = [],
  ) {
    super(failure.message);
  }
}

/** The per-recipient rejections nodemailer reports (`rejectedErrors`). */
function rejectionsOf(errors: unknown): { recipient: string; code: number; response: string }[] {
  if (!Array.isArray(errors)) return [];
  return errors.map((error: { recipient?: string; responseCode?: number; response?: string; message?: string }) => ({
    recipient: String(error.recipient ?? '').toLowerCase(),
    code: error.responseCode ?? 0,
    response: String(error.response ?? error.message ?? 'rejected'),
  }));
}

/** An AppError carrying a {@link ConnectFailure} (as `details`). */
export function connectError(failure: ConnectFailure): AppError {
  return new AppError('invalid_request', failure.message, { reason: failure.kind });
}

/** The failure inside an error from {@link Connector}, when it has one. */
export function failureOf(error: unknown): ConnectFailure | undefined {
  if (error instanceof AppError && error.details && typeof error.details === 'object' && 'reason' in error.details) {
    return { kind: (error.details as { reason: ConnectFailure['kind'] }).reason, message: error.message };
  }
  return undefined;
}

/**
 * Creates the connector. Given `dns` (the service's resolver: `AGENTPOST_DNS_SERVERS`), a server's host name is
 * resolved through it and the connection made to the address found, the name still checked against the TLS
 * certificate; without it, the libraries resolve names as the system does.
 */
export function createConnector(
  config: Pick<Config, 'imap'>,
  dns?: Pick<DnsResolver, 'lookup'>,
  accessToken?: AccessTokenSource,
): Connector {
  /**
   * The OAuth access token of an endpoint that logs in with one; a grant whose provider refused the refresh fails as
   * a refused login does.
   */
  const tokenOf = async (grantId: string, force: boolean): Promise<string> => {
    if (!accessToken) throw connectError({ kind: 'auth', message: 'No OAuth token source for this account.' });
    try {
      return await accessToken(grantId, { force });
    } catch (error) {
      if (error instanceof AppError && error.code !== 'unauthorized' && error.code !== 'not_found') throw error;
      throw connectError({ kind: 'auth', message: error instanceof Error ? error.message : String(error) });
    }
  };
  /** Tries `attempt` once, and again with a refreshed token when an OAuth login was refused (the token expired). */
  const withFreshToken = async <T>(oauth: boolean, attempt: (force: boolean) => Promise<T>): Promise<T> => {
    try {
      return await attempt(false);
    } catch (error) {
      if (!oauth || !isAuthFailure(error)) throw error;
      return attempt(true);
    }
  };
  const slots = new ServerSlots(config.imap.maxConnectionsPerServer);
  const { connectTimeoutMs, commandTimeoutMs } = config.imap;
  /** Where to connect for `host`, and the name TLS checks (undefined: the host itself, an address or left to the library). */
  const target = async (host: string): Promise<{ host: string; servername?: string }> => {
    if (!dns || isIP(host)) return { host };
    const [first] = await dns.lookup(host);
    if (!first) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
    return { host: first.address, servername: host };
  };
  /** A nodemailer transport to the account's SMTP server (its name resolved as above; a failed look-up rejects). */
  const smtpTransport = async (endpoint: SmtpEndpoint, force = false) => {
    const address = await target(endpoint.host);
    return nodemailer.createTransport({
      host: address.host,
      port: endpoint.port,
      secure: endpoint.secure,
      auth: endpoint.oauthGrantId
        ? { type: 'OAuth2', user: endpoint.username, accessToken: await tokenOf(endpoint.oauthGrantId, force) }
        : { user: endpoint.username, pass: endpoint.password },
      connectionTimeout: connectTimeoutMs,
      greetingTimeout: connectTimeoutMs,
      socketTimeout: commandTimeoutMs,
      tls: {
        rejectUnauthorized: !endpoint.allowInsecureTls,
        ...(address.servername ? { servername: address.servername } : {}),
      },
    });
  };
  /** imapflow's options for a connection to `endpoint` (its name resolved as above; a failed look-up rejects). */
  const imapOptions = async (endpoint: ImapEndpoint, force = false): Promise<ImapFlowOptions> => {
    const address = await target(endpoint.host);
    return {
      host: address.host,
      ...(address.servername ? { servername: address.servername } : {}),
      port: endpoint.port,
      secure: endpoint.secure,
      auth: endpoint.oauthGrantId
        ? { user: endpoint.username, accessToken: await tokenOf(endpoint.oauthGrantId, force) }
        : { user: endpoint.username, pass: endpoint.password },
      logger: false,
      // No `ID` command: it tells the server nothing it needs.
      clientInfo: { name: 'agentpost' },
      connectionTimeout: connectTimeoutMs,
      greetingTimeout: connectTimeoutMs,
      socketTimeout: commandTimeoutMs,
      tls: { rejectUnauthorized: !endpoint.allowInsecureTls },
      disableAutoIdle: true,
      // ENABLE QRESYNC when the server has it: expunges come as UIDs (VANISHED), and a SELECT can ask for what
      // changed since a folder's last pass (src/imap/sync.ts).
      qresync: true,
    };
  };
  return {
    slots,
    async openFetchSession(endpoint, threads) {
      const server = `${endpoint.host}:${endpoint.port}`;
      const release = slots.tryAcquire(server);
      if (!release) return undefined;
      const session = await withFreshToken(endpoint.oauthGrantId !== undefined, async (force) =>
        threads.open(await imapOptions(endpoint, force)),
      ).catch((error: unknown) => {
        release();
        throw error instanceof AppError ? error : connectError(describeFailure(error, `IMAP server ${server}`));
      });
      if (!session) {
        release();
        return undefined;
      }
      return {
        fetch: (path, uids, maxBytes) => session.fetch(path, uids, maxBytes),
        close: () => session.close().finally(release),
      };
    },
    async openImap(endpoint, options = {}) {
      const server = `${endpoint.host}:${endpoint.port}`;
      let release: () => void;
      try {
        release = await slots.acquire(server, options.boundedSlotWait ? connectTimeoutMs : undefined);
      } catch (error) {
        if (error instanceof SlotWaitError)
          throw connectError({ kind: 'network', message: `IMAP server ${server}: ${error.message}` });
        throw error;
      }
      let client: ImapFlow | undefined;
      try {
        client = await withFreshToken(endpoint.oauthGrantId !== undefined, async (force) => {
          const attempt = new ImapFlow(await imapOptions(endpoint, force));
          // An error event without a listener would take the process down; failures surface through the calls.
          attempt.on('error', () => undefined);
          try {
            await attempt.connect();
          } catch (error) {
            attempt.close();
            throw error;
          }
          return attempt;
        });
      } catch (error) {
        release();
        throw error instanceof AppError ? error : connectError(describeFailure(error, `IMAP server ${server}`));
      }
      client.once('close', release);
      const connected = client;
      return {
        client: connected,
        async close() {
          try {
            if (connected.usable) await connected.logout();
          } catch {
            // Dropped below.
          } finally {
            connected.close();
            release();
          }
        },
      };
    },
    async checkSmtp(endpoint) {
      const server = `${endpoint.host}:${endpoint.port}`;
      try {
        await withFreshToken(endpoint.oauthGrantId !== undefined, async (force) => {
          const transport = await smtpTransport(endpoint, force);
          try {
            await transport.verify();
          } finally {
            transport.close();
          }
        });
      } catch (error) {
        throw error instanceof AppError ? error : connectError(describeFailure(error, `SMTP server ${server}`));
      }
    },
    async submit(endpoint, envelope, raw) {
      const server = `${endpoint.host}:${endpoint.port}`;
      // One connection per submission: a connected account sends as a person does, not in bulk.
      let transport: Awaited<ReturnType<typeof smtpTransport>> | undefined;
      try {
        // A name that does not resolve ends here too: no verdict, as for a server that cannot be reached. An OAuth
        // login refused (an expired token) is tried once more with a refreshed one: the refusal comes before MAIL FROM.
        type SentInfo = { accepted?: unknown[]; rejectedErrors?: unknown; response?: string };
        const info = await withFreshToken<SentInfo>(endpoint.oauthGrantId !== undefined, async (force) => {
          transport?.close();
          transport = await smtpTransport(endpoint, force);
          return transport.sendMail({ envelope, raw });
        });
        return {
          accepted: (info.accepted ?? []).map((entry) =>
            String(
              typeof entry === 'object' && entry && 'address' in entry ? (entry as { address: string }).address : entry,
            ).toLowerCase(),
          ),
          rejected: rejectionsOf(info.rejectedErrors),
          response: String(info.response ?? '250 Ok'),
        };
      } catch (error) {
        const record = (error ?? {}) as { responseCode?: number; rejectedErrors?: unknown };
        throw new SubmissionError(
          describeFailure(error, `SMTP server ${server}`),
          record.responseCode,
          rejectionsOf(record.rejectedErrors),
        );
      } finally {
        transport?.close();
      }
    },
  };
}
