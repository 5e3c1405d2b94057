/**
 * @module attachment-text/zip
 * A bounded reader of zip containers (DOCX, XLSX, PPTX, ODS). The central directory is read and every entry checked
 * against {@link ZIP_LIMITS} before anything is inflated: entry count, each entry's and the total declared size,
 * and the compression ratio. Entries are then inflated one at a time, only those asked for, by Node's zlib with
 * `maxOutputLength` set to the declared size: an entry that lies about its size is refused while it inflates, not
 * after. Zip64 sizes and offsets are read; encrypted entries answer `encrypted`, methods other than stored and
 * deflate `unsupported`. Linear in the directory's size.
 */
import { promisify } from 'node:util';
import { inflateRaw, inflateRawSync } from 'node:zlib';
import { AttachmentTextError } from './errors.js';
import { ZIP_LIMITS } from './limits.js';

/** Bounds of a zip container (the defaults, {@link ZIP_LIMITS}, are the attachments'; the DMARC reader has its own). */
export interface ZipLimits {
  /** Entries in the central directory. */
  maxEntries: number;
  /** Declared inflated size of one entry, and of all of them. */
  maxEntryBytes: number;
  maxTotalBytes: number;
  /** Inflated-to-compressed size of an entry, checked for entries over `ratioCheckedAbove` bytes inflated. */
  maxRatio: number;
  ratioCheckedAbove: number;
}

const inflateRawAsync = promisify(inflateRaw) as (
  buffer: Buffer,
  options: { maxOutputLength: number },
) => Promise<Buffer>;

/** One entry of the central directory. */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  encrypted: boolean;
}

/** An opened zip: its entries by name (in directory order), and a bounded reader of their bytes. */
export interface ZipArchive {
  entries: Map<string, ZipEntry>;
  /** The inflated bytes of `name`, or undefined when there is no such entry (inflated on this thread). */
  read(name: string): Buffer | undefined;
  /** As {@link ZipArchive.read}, inflated in libuv's thread pool (for a caller on the event loop). */
  readAsync(name: string): Promise<Buffer | undefined>;
}

const EOCD = 0x06054b50;
const EOCD64_LOCATOR = 0x07064b50;
const EOCD64 = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const MAX_EOCD_SEARCH = 22 + 65_535;

const unreadable = (message: string) => new AttachmentTextError('unreadable', `The zip container ${message}.`);
const bomb = (message: string) =>
  new AttachmentTextError('zip_bomb', `The zip container was refused before inflating: ${message}.`);

/** A 64-bit little-endian size; beyond 2^53 is no size we would read anyway. */
function u64(bytes: Buffer, at: number): number {
  return Number(bytes.readBigUInt64LE(at));
}

function findEndRecord(bytes: Buffer): number {
  const stop = Math.max(0, bytes.length - MAX_EOCD_SEARCH);
  for (let at = bytes.length - 22; at >= stop; at--) if (bytes.readUInt32LE(at) === EOCD) return at;
  throw unreadable('has no end of central directory (it is cut short or not a zip)');
}

/** Opens `bytes` as a zip, checking the directory against the limits. Throws an AttachmentTextError. */
export function openZip(bytes: Buffer, limits: ZipLimits = ZIP_LIMITS): ZipArchive {
  if (bytes.length < 22) throw unreadable('is too short');
  const end = findEndRecord(bytes);
  let count = bytes.readUInt16LE(end + 10);
  let directorySize = bytes.readUInt32LE(end + 12);
  let directoryOffset = bytes.readUInt32LE(end + 16);
  if (end >= 20 && bytes.readUInt32LE(end - 20) === EOCD64_LOCATOR) {
    const at = u64(bytes, end - 12);
    if (at + 56 > bytes.length || bytes.readUInt32LE(at) !== EOCD64) throw unreadable('has a damaged zip64 record');
    count = u64(bytes, at + 32);
    directorySize = u64(bytes, at + 40);
    directoryOffset = u64(bytes, at + 48);
  }
  if (count > limits.maxEntries) throw bomb(`${count} entries (limit ${limits.maxEntries})`);
  if (directoryOffset + directorySize > bytes.length) throw unreadable('has its directory beyond its end');

  const entries = new Map<string, ZipEntry>();
  let total = 0;
  let at = directoryOffset;
  for (let index = 0; index < count; index++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL) throw unreadable('has a damaged directory');
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    let compressedSize = bytes.readUInt32LE(at + 20);
    let size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    let localHeaderOffset = bytes.readUInt32LE(at + 42);
    const nameEnd = at + 46 + nameLength;
    const extraEnd = nameEnd + extraLength;
    if (extraEnd + commentLength > bytes.length) throw unreadable('has a damaged directory');
    const name = bytes.toString(flags & 0x800 ? 'utf8' : 'latin1', at + 46, nameEnd);
    // Zip64 extended information: the fields that are 0xFFFFFFFF in the record, in this order.
    for (let extra = nameEnd; extra + 4 <= extraEnd;) {
      const id = bytes.readUInt16LE(extra);
      const length = bytes.readUInt16LE(extra + 2);
      if (id === 0x0001) {
        let field = extra + 4;
        const next = () => {
          if (field + 8 > extra + 4 + length) throw unreadable('has a damaged zip64 field');
          const value = u64(bytes, field);
          field += 8;
          return value;
        };
        if (size === 0xffffffff) size = next();
        if (compressedSize === 0xffffffff) compressedSize = next();
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = next();
      }
      extra += 4 + length;
    }
    at = extraEnd + commentLength;

    if (size > limits.maxEntryBytes)
      throw bomb(
        `the entry ${JSON.stringify(name.slice(0, 100))} inflates to ${size} bytes (limit ${limits.maxEntryBytes})`,
      );
    total += size;
    if (total > limits.maxTotalBytes) throw bomb(`its entries inflate to more than ${limits.maxTotalBytes} bytes`);
    if (size > limits.ratioCheckedAbove && size > compressedSize * limits.maxRatio)
      throw bomb(
        `the entry ${JSON.stringify(name.slice(0, 100))} inflates ${Math.round(size / Math.max(1, compressedSize))} times (limit ${limits.maxRatio})`,
      );
    if (localHeaderOffset + 30 > bytes.length) throw unreadable('names an entry beyond its end');
    entries.set(name, { name, method, compressedSize, size, localHeaderOffset, encrypted: (flags & 1) === 1 });
  }

  /** The entry's stored bytes, checked; undefined when there is no such entry. */
  function stored(name: string): { entry: ZipEntry; data: Buffer } | undefined {
    const entry = entries.get(name);
    if (!entry) return undefined;
    if (entry.encrypted)
      throw new AttachmentTextError(
        'encrypted',
        `The zip entry ${JSON.stringify(name)} is encrypted (it needs a password).`,
      );
    const local = entry.localHeaderOffset;
    if (bytes.readUInt32LE(local) !== LOCAL) throw unreadable(`has a damaged entry ${JSON.stringify(name)}`);
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + entry.compressedSize);
    if (data.length < entry.compressedSize) throw unreadable(`has the entry ${JSON.stringify(name)} cut short`);
    if (entry.method === 0 && entry.compressedSize !== entry.size)
      throw unreadable(`has a damaged entry ${JSON.stringify(name)}`);
    if (entry.method !== 0 && entry.method !== 8)
      throw new AttachmentTextError(
        'unsupported',
        `The zip entry ${JSON.stringify(name)} uses compression method ${entry.method}; only stored and deflate are read.`,
      );
    return { entry, data };
  }

  /** The inflation's error as the reader says it. */
  const inflateError = (error: unknown, entry: ZipEntry) =>
    error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
      ? bomb(`the entry ${JSON.stringify(entry.name)} inflates beyond its declared ${entry.size} bytes`)
      : unreadable(`has an entry that does not inflate (${JSON.stringify(entry.name)})`);

  function checked(inflated: Buffer, entry: ZipEntry): Buffer {
    if (inflated.length > entry.size)
      throw bomb(`the entry ${JSON.stringify(entry.name)} inflates beyond its declared ${entry.size} bytes`);
    return inflated;
  }

  return {
    entries,
    read(name) {
      const found = stored(name);
      if (!found) return undefined;
      if (found.entry.method === 0) return found.data;
      try {
        // One byte over the declared size is how an entry that lies about it shows: refused, never inflated further.
        return checked(inflateRawSync(found.data, { maxOutputLength: found.entry.size + 1 }), found.entry);
      } catch (error) {
        throw error instanceof AttachmentTextError ? error : inflateError(error, found.entry);
      }
    },
    async readAsync(name) {
      const found = stored(name);
      if (!found) return undefined;
      if (found.entry.method === 0) return found.data;
      let inflated: Buffer;
      try {
        inflated = await inflateRawAsync(found.data, { maxOutputLength: found.entry.size + 1 });
      } catch (error) {
        throw inflateError(error, found.entry);
      }
      return checked(inflated, found.entry);
    },
  };
}
