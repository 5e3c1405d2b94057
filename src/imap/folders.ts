/**
 * @module imap/folders
 * How a connected account's IMAP folders map to the Nylas folder model: a folder with a system role (`inbox`, `sent`,
 * `drafts`, `trash`, `junk`, `archive`) takes the role as its id, found by its special-use attribute (RFC 6154) when
 * the server has them, else by its name (imapflow's tables of localised names, then the common English names
 * below); every other selectable folder gets an id made for its path the first time it is seen (kept in
 * `imap_folders`, so it is stable). Names are the decoded paths (imapflow decodes modified UTF-7).
 */
import type { SystemFolder } from '../../storage/schema/grants.js';

/** One folder as the server lists it (the fields of imapflow's ListResponse this reads). */
export interface ListedFolder {
  path: string;
  delimiter?: string | undefined;
  parentPath?: string | undefined;
  flags: Set<string>;
  specialUse?: string | undefined;
  /** Where imapflow found `specialUse`: `extension` (the server said), `name`, `name-guess`, `user`. */
  specialUseSource?: string | undefined;
}

/** The system role of each special-use attribute. */
const ROLE_OF_USE: Record<string, SystemFolder> = {
  '\\Inbox': 'inbox',
  '\\Sent': 'sent',
  '\\Drafts': 'drafts',
  '\\Trash': 'trash',
  '\\Junk': 'junk',
  '\\Archive': 'archive',
};

/** Common names of the system folders on servers without special-use (lower case, last path segment). */
const ROLE_OF_NAME: Record<string, SystemFolder> = {
  sent: 'sent',
  'sent items': 'sent',
  'sent messages': 'sent',
  'sent mail': 'sent',
  drafts: 'drafts',
  draft: 'drafts',
  trash: 'trash',
  'deleted items': 'trash',
  'deleted messages': 'trash',
  deleted: 'trash',
  junk: 'junk',
  'junk e-mail': 'junk',
  'junk email': 'junk',
  spam: 'junk',
  'bulk mail': 'junk',
  archive: 'archive',
  archives: 'archive',
};

/**
 * Special uses of virtual collections (RFC 6154 §2): every message, or every flagged one, of the other folders
 * (Gmail's `[Gmail]/All Mail` and `[Gmail]/Starred`). Syncing them would store each message twice; `starred` and the
 * other folders already say what they hold.
 */
const VIRTUAL_USES: ReadonlySet<string> = new Set(['\\All', '\\Flagged']);

/** Listing order of the system folders (the hosted mailbox's). */
export const ROLE_ORDER: readonly SystemFolder[] = ['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive'];

/** A folder as it will be stored: its path, role (or none) and special-use attribute. */
export interface MappedFolder {
  path: string;
  delimiter: string | null;
  parentPath: string | null;
  role: SystemFolder | null;
  /** The attribute the role came from (`\\Sent`…), the server's or guessed from the name; null for none. */
  specialUse: string | null;
}

/** The last segment of a path. */
function leafOf(folder: ListedFolder): string {
  const delimiter = folder.delimiter;
  return delimiter ? (folder.path.split(delimiter).pop() ?? folder.path) : folder.path;
}

/**
 * Maps the listed folders: selectable ones only; each role goes to one folder (the server's attribute first, then
 * imapflow's name match, then ours; a top-level folder before a nested one), the others have none.
 */
export function mapFolders(listed: readonly ListedFolder[]): MappedFolder[] {
  const selectable = listed.filter(
    (folder) =>
      !folder.flags.has('\\Noselect') &&
      !folder.flags.has('\\NonExistent') &&
      !(folder.specialUse !== undefined && VIRTUAL_USES.has(folder.specialUse)),
  );
  const candidates = selectable.map((folder) => {
    let use: string | null = null;
    let rank = 9;
    if (folder.path.toUpperCase() === 'INBOX') {
      use = '\\Inbox';
      rank = 0;
    } else if (folder.specialUse && ROLE_OF_USE[folder.specialUse]) {
      use = folder.specialUse;
      rank =
        folder.specialUseSource === 'extension' || folder.specialUseSource === 'user'
          ? 1
          : folder.specialUseSource === 'name'
            ? 2
            : 3;
    } else {
      const role = ROLE_OF_NAME[leafOf(folder).toLowerCase().trim()];
      if (role) {
        use = `\\${role[0]!.toUpperCase()}${role.slice(1)}`;
        rank = 4;
      }
    }
    const depth = folder.delimiter ? folder.path.split(folder.delimiter).length - 1 : 0;
    return { folder, use, rank: rank * 10 + Math.min(depth, 9) };
  });
  const owner = new Map<SystemFolder, string>();
  for (const candidate of [...candidates].sort((a, b) => a.rank - b.rank)) {
    const role = candidate.use ? ROLE_OF_USE[candidate.use] : undefined;
    if (role && !owner.has(role)) owner.set(role, candidate.folder.path);
  }
  return candidates.map(({ folder, use }) => {
    const role = use ? ROLE_OF_USE[use] : undefined;
    const owns = role !== undefined && owner.get(role) === folder.path;
    return {
      path: folder.path,
      delimiter: folder.delimiter ?? null,
      parentPath: folder.parentPath || null,
      role: owns ? role : null,
      specialUse: owns && role !== 'inbox' ? use : null,
    };
  });
}
