/**
 * The mapping of a connected account's IMAP folders to system roles (src/imap/folders.ts), and the UID
 * sets the sync fetches (src/imap/sync.ts).
 */
import { describe, expect, it } from 'vitest';
import { mapFolders, type ListedFolder } from '../../../src/imap/folders.js';
import { uidSet } from '../../../src/imap/sync.js';

const folder = (path: string, extra: Partial<ListedFolder> = {}): ListedFolder => ({
  path,
  delimiter: '/',
  flags: new Set(),
  ...extra,
});
const roles = (listed: ListedFolder[]) =>
  Object.fromEntries(mapFolders(listed).map((entry) => [entry.path, entry.role]));

describe('IMAP folder mapping', () => {
  it('takes the server special-use attribute over a name', () => {
    const mapped = roles([
      folder('INBOX'),
      folder('Sent'),
      folder('Gesendet', { specialUse: '\\Sent', specialUseSource: 'extension' }),
      folder('Papierkorb', { specialUse: '\\Trash', specialUseSource: 'extension' }),
    ]);
    expect(mapped).toEqual({ INBOX: 'inbox', Sent: null, Gesendet: 'sent', Papierkorb: 'trash' });
  });

  it("maps Gmail's folders: [Gmail] is no folder, All Mail and Starred are views, not folders; labels are folders", () => {
    const gmail = (path: string, specialUse?: string, flags: string[] = []) =>
      folder(path, { flags: new Set(flags), ...(specialUse ? { specialUse, specialUseSource: 'extension' } : {}) });
    const mapped = roles([
      gmail('INBOX'),
      gmail('[Gmail]', undefined, ['\\Noselect', '\\HasChildren']),
      gmail('[Gmail]/All Mail', '\\All'),
      gmail('[Gmail]/Drafts', '\\Drafts'),
      gmail('[Gmail]/Important', undefined, ['\\Important']),
      gmail('[Gmail]/Sent Mail', '\\Sent'),
      gmail('[Gmail]/Spam', '\\Junk'),
      gmail('[Gmail]/Starred', '\\Flagged'),
      gmail('[Gmail]/Trash', '\\Trash'),
      gmail('Receipts'),
    ]);
    expect(mapped).toEqual({
      INBOX: 'inbox',
      '[Gmail]/Drafts': 'drafts',
      '[Gmail]/Important': null,
      '[Gmail]/Sent Mail': 'sent',
      '[Gmail]/Spam': 'junk',
      '[Gmail]/Trash': 'trash',
      Receipts: null,
    });
  });

  it('guesses the roles by common names on a server without special-use', () => {
    const mapped = roles([
      folder('INBOX'),
      folder('Sent Items'),
      folder('Deleted Items'),
      folder('Spam'),
      folder('Drafts'),
      folder('Archive'),
      folder('Projects'),
    ]);
    expect(mapped).toEqual({
      INBOX: 'inbox',
      'Sent Items': 'sent',
      'Deleted Items': 'trash',
      Spam: 'junk',
      Drafts: 'drafts',
      Archive: 'archive',
      Projects: null,
    });
  });

  it('gives each role to one folder, a top-level one before a nested one, and skips folders that cannot be selected', () => {
    const mapped = mapFolders([
      folder('INBOX'),
      folder('Work/Trash'),
      folder('Trash'),
      folder('[Gmail]', { flags: new Set(['\\Noselect']) }),
    ]);
    expect(mapped.map((entry) => [entry.path, entry.role, entry.specialUse])).toEqual([
      ['INBOX', 'inbox', null],
      ['Work/Trash', null, null],
      ['Trash', 'trash', '\\Trash'],
    ]);
  });
});

describe('UID sets', () => {
  it('packs runs of UIDs into ranges', () => {
    expect(uidSet([1, 2, 3, 5, 7, 8, 10])).toBe('1:3,5,7:8,10');
    expect(uidSet([42])).toBe('42');
    expect(uidSet([])).toBe('');
  });
});
