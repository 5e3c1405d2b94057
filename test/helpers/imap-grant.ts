/**
 * A connected IMAP grant made straight in the database, for tests of the outgoing side until the connect flow
 * (`POST /v3/connect/custom`) and the sync exist: the `grants` row (provider `imap`), its `imap_accounts` row
 * (passwords sealed by the test's secret box), the six system folders and their `imap_folders` rows mapping them to
 * Dovecot's paths (or, `initial`, none: as the connect flow leaves it for the sync); and {@link addSyncedMessage}, a
 * message on the server with its row and `imap_messages` link, as the sync would leave it. {@link imapConnectSettings}
 * is the `settings` for connecting a Dovecot user through the connect flow itself.
 */
import { ImapFlow } from 'imapflow';
import { blobHash, tables } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import type { Core } from '../../src/index.js';
import { createMailStore } from '../../src/messages/mail-store.js';
import { composeMime, parsedOf } from '../../src/outbound/compose.js';
import type { SecretBox } from '../../src/ports/index.js';

/** Our folder ids (system roles) and Dovecot's paths for them. */
export const IMAP_PATHS: Record<string, string> = {
  inbox: 'INBOX',
  sent: 'Sent',
  drafts: 'Drafts',
  trash: 'Trash',
  junk: 'Junk',
  archive: 'Archive',
};

/** Options of {@link createImapGrant}. */
export interface ImapGrantOptions {
  applicationId: string;
  email: string;
  password: string;
  imapPort: number;
  smtpPort: number;
  /** Default: the IMAP password. */
  smtpPassword?: string;
  secrets: SecretBox;
  serverFilesSent?: boolean | null;
  /**
   * As the connect flow leaves a new grant: `sync_state = 'initial'` and no folders, for the sync to find and map
   * (default false: the six folders mapped and synced, for tests of the outgoing side alone).
   */
  initial?: boolean;
  /** Days of mail the initial sync covers (default 30). */
  syncDays?: number;
  /** Default 127.0.0.1 (a test may point it at a proxy of its own). */
  imapHost?: string;
}

/** Inserts an imap grant with its account and folders; returns its id. */
export async function createImapGrant(core: Core, options: ImapGrantOptions): Promise<string> {
  const id = core.deps.newId();
  const at = Math.floor(Date.now() / 1000);
  await core.deps.db.write(async (tx) => {
    await tx.insert(tables.grants).values({
      id,
      applicationId: options.applicationId,
      provider: 'imap',
      email: options.email,
      settings: {},
      scope: [],
      createdAt: at,
      updatedAt: at,
    });
    await tx.insert(imapAccounts).values({
      grantId: id,
      imapHost: options.imapHost ?? '127.0.0.1',
      imapPort: options.imapPort,
      imapUsername: options.email,
      imapPasswordSealed: options.secrets.seal(options.password),
      imapSecure: false,
      smtpHost: '127.0.0.1',
      smtpPort: options.smtpPort,
      smtpUsername: null,
      smtpPasswordSealed: options.smtpPassword === undefined ? null : options.secrets.seal(options.smtpPassword),
      smtpSecure: false,
      syncDays: options.syncDays ?? 30,
      serverFilesSent: options.serverFilesSent ?? null,
      syncState: options.initial ? 'initial' : 'idle',
      // Tests of the outgoing side alone play the sync's part themselves (addSyncedMessage): the real sync is held
      // off (its next attempt far ahead), so it never races them for the messages they append.
      ...(options.initial ? {} : { lastSyncAt: at, retryAt: Date.UTC(2999, 0, 1) }),
      createdAt: at * 1000,
      updatedAt: at * 1000,
    });
    if (options.initial) return;
    const roles = Object.keys(IMAP_PATHS) as ('inbox' | 'sent' | 'drafts' | 'trash' | 'junk' | 'archive')[];
    await tx.insert(tables.folders).values(
      roles.map((role, index) => ({
        id: role,
        grantId: id,
        name: IMAP_PATHS[role]!,
        systemRole: role,
        sortOrder: index,
        createdAt: at,
        updatedAt: at,
      })),
    );
    await tx.insert(imapFolders).values(
      roles.map((role) => ({
        grantId: id,
        path: IMAP_PATHS[role]!,
        folderId: role,
        specialUse: role === 'inbox' ? null : `\\${IMAP_PATHS[role]}`,
        initialDone: true,
        updatedAt: at,
      })),
    );
  });
  return id;
}

/** An IMAP client logged in as a Dovecot user (the caller logs it out). */
export async function imapClient(port: number, user: string, password: string): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user, pass: password },
    logger: false,
    disableAutoIdle: true,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** What {@link smallMessage} composes: the sender and recipients, and optionally its name, copies, Message-ID and date. */
export interface SmallMessageSpec {
  from: string;
  fromName?: string;
  to: string | string[];
  cc?: string[];
  subject: string;
  text: string;
  /** Without angle brackets; default a new id at test.example. */
  headerMessageId?: string;
  /** Default now. */
  date?: Date;
}

/** The raw MIME and parsed form of a small plain-text message. */
export async function smallMessage(core: Core, spec: SmallMessageSpec) {
  const headerMessageId = spec.headerMessageId ?? `${core.deps.newId()}@test.example`;
  const input = {
    from: spec.fromName === undefined ? { email: spec.from } : { email: spec.from, name: spec.fromName },
    to: (typeof spec.to === 'string' ? [spec.to] : spec.to).map((email) => ({ email })),
    cc: (spec.cc ?? []).map((email) => ({ email })),
    bcc: [],
    replyTo: [],
    subject: spec.subject,
    body: spec.text,
    isPlaintext: true,
    attachments: [],
    messageId: headerMessageId,
    date: spec.date ?? new Date(),
    inReplyTo: undefined,
    references: [],
    customHeaders: [],
  };
  return { headerMessageId, raw: await composeMime(input), parsed: parsedOf(input) };
}

/** Stores a message of the grant in `folderId` linked to (`path`, `uid`), without touching a server; returns its id. */
export async function addSyncedMessageRow(
  core: Core,
  spec: {
    applicationId: string;
    grantId: string;
    uid: number;
    path?: string;
    folderId?: string;
    raw?: Buffer;
    parsed?: ReturnType<typeof parsedOf>;
  },
): Promise<string> {
  const message =
    spec.raw && spec.parsed
      ? { raw: spec.raw, parsed: spec.parsed }
      : await smallMessage(core, {
          from: 'someone@example.test',
          to: 'me@example.test',
          subject: 'Stored',
          text: 'stored',
        });
  const store = createMailStore(core.deps);
  return core.deps.db.write(async (tx) => {
    const stored = await store.insert(tx, {
      applicationId: spec.applicationId,
      grantId: spec.grantId,
      parsed: message.parsed,
      raw: message.raw,
      rawHash: blobHash(message.raw),
      folders: [spec.folderId ?? 'inbox'],
      unread: true,
      date: Math.floor(Date.now() / 1000),
      envelopeFrom: null,
      envelopeTo: null,
      parseError: null,
    });
    await tx.insert(imapMessages).values({
      grantId: spec.grantId,
      path: spec.path ?? 'INBOX',
      uid: spec.uid,
      messageId: stored.row.id,
      flags: [],
    });
    return stored.row.id;
  });
}

/** A message as the sync would leave it: APPENDed to `path` on the server, stored in `folderId`, linked by UID. */
export async function addSyncedMessage(
  core: Core,
  client: ImapFlow,
  spec: {
    applicationId: string;
    grantId: string;
    from: string;
    to: string;
    subject: string;
    text: string;
    path?: string;
    folderId?: string;
  },
): Promise<{ messageId: string; uid: number; headerMessageId: string }> {
  const path = spec.path ?? 'INBOX';
  const { headerMessageId, raw, parsed } = await smallMessage(core, spec);
  const appended = await client.append(path, raw, []);
  if (!appended || appended.uid === undefined) throw new Error('the server gave no APPENDUID');
  const messageId = await addSyncedMessageRow(core, {
    applicationId: spec.applicationId,
    grantId: spec.grantId,
    uid: appended.uid,
    path,
    folderId: spec.folderId ?? 'inbox',
    raw,
    parsed,
  });
  return { messageId, uid: appended.uid, headerMessageId };
}

/** Options of {@link imapConnectSettings}. */
export interface ImapConnectOptions {
  user: string;
  password: string;
  imapPort: number;
  smtpPort: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/**
 * The `settings` of `POST /v3/connect/custom` with `provider: "imap"` for a Dovecot user on loopback (plain IMAP and
 * SMTP ports of the test's range, so `starttls` by the port rule), plus `extra` fields.
 */
export function imapConnectSettings(
  options: ImapConnectOptions,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const host = options.host ?? '127.0.0.1';
  return {
    imap_username: options.user,
    imap_password: options.password,
    imap_host: host,
    imap_port: options.imapPort,
    smtp_host: host,
    smtp_port: options.smtpPort,
    ...extra,
  };
}
