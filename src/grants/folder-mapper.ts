/**
 * @module grants/folder-mapper
 * A folder as the API shows it: the row, its special-use attributes, its message counts and its number of children.
 */
import type { SYSTEM_FOLDERS, tables } from '../../storage/index.js';
import type { Folder } from '../schemas/folders.js';
import type { FolderCounts } from './contracts.js';

/** A stored folder row. */
export type FolderRow = typeof tables.folders.$inferSelect;

/** IMAP special-use attribute of each system folder (RFC 6154). */
const FOLDER_ATTRIBUTES: Record<(typeof SYSTEM_FOLDERS)[number], string> = {
  inbox: '\\Inbox',
  sent: '\\Sent',
  drafts: '\\Drafts',
  trash: '\\Trash',
  junk: '\\Junk',
  archive: '\\Archive',
};

/** The special-use attributes of a folder row. */
export function folderAttributes(systemRole: string | null): string[] {
  return systemRole && systemRole in FOLDER_ATTRIBUTES
    ? [FOLDER_ATTRIBUTES[systemRole as keyof typeof FOLDER_ATTRIBUTES]]
    : [];
}

/** Maps a folder row and its counts to the wire form. */
export function toFolder(row: FolderRow, counts: FolderCounts | undefined, childCount: number): Folder {
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'folder',
    name: row.name,
    system_folder: row.systemRole !== null,
    attributes: folderAttributes(row.systemRole),
    ...(row.parentId !== null ? { parent_id: row.parentId } : {}),
    ...(row.textColor !== null ? { text_color: row.textColor } : {}),
    ...(row.backgroundColor !== null ? { background_color: row.backgroundColor } : {}),
    total_count: counts?.total ?? 0,
    unread_count: counts?.unread ?? 0,
    child_count: childCount,
  };
}
