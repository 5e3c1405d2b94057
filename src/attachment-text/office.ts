/**
 * @module attachment-text/office
 * Zip containers and OLE compound files: which Office format a zip is (by its entries when neither its type nor
 * its name said), and what an OLE file is (an encrypted Office 2007+ file keeps an `EncryptionInfo` stream there;
 * anything else is a legacy binary .doc/.xls/.ppt, not read).
 */
import type { AttachmentKind } from './contracts.js';
import { AttachmentTextError } from './errors.js';
import type { ZipArchive } from './zip.js';

/** The Office kind of a zip by its entries, or undefined for another archive. */
export function zipKind(archive: ZipArchive): AttachmentKind | undefined {
  if (archive.entries.has('word/document.xml')) return 'docx';
  if (archive.entries.has('xl/workbook.xml')) return 'xlsx';
  if (archive.entries.has('ppt/presentation.xml')) return 'pptx';
  if (archive.entries.has('mimetype')) {
    const type = archive.read('mimetype')?.toString('latin1', 0, 100).trim();
    if (type === 'application/vnd.oasis.opendocument.spreadsheet') return 'ods';
  }
  return undefined;
}

/** The name of the stream of an encrypted OOXML file, as it is written in a compound file's directory (UTF-16LE). */
const ENCRYPTION_INFO = Buffer.from('EncryptionInfo', 'utf16le');

/** Throws what an OLE compound file is: `encrypted` (a password-protected DOCX/XLSX/PPTX) or `unsupported`. */
export function refuseOle(bytes: Uint8Array): never {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.indexOf(ENCRYPTION_INFO) >= 0)
    throw new AttachmentTextError('encrypted', 'The Office document is encrypted: it needs a password to be read.');
  throw new AttachmentTextError(
    'unsupported',
    'This is a legacy binary Office file (.doc, .xls or .ppt), which is not read; a DOCX, XLSX or PPTX copy can be.',
  );
}
