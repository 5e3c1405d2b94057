/**
 * Content-addressed blobs (raw MIME, large bodies, attachment bytes), stored in chunks.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { and, asc, eq, inArray, notExists } from 'drizzle-orm';
import type { Executor, Tx } from '../orm.js';
import { attachmentUploads, attachments, blobChunks, blobs, messageRaw, messages } from '../schema/mail.js';
import { outboundMessages } from '../schema/outbound.js';
import { deliveryReports } from '../schema/deliverability.js';

/**
 * Bytes per chunk row. Small enough that one row never dominates a page cache or a libSQL server response,
 * large enough that a 40 MB message is 80 rows.
 */
export const BLOB_CHUNK_BYTES = 512 * 1024;

/** Lower-case hex SHA-256, the blob address. */
export function blobHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Lets the event loop run when the current task has held it for a while. With the embedded driver every
 * statement completes synchronously, so a transaction of many statements would otherwise run as one long
 * chain of microtasks; callers writing many rows call this between statements.
 */
let sliceStarted = performance.now();
export async function breathe(budgetMs = 10): Promise<void> {
  const now = performance.now();
  if (now - sliceStarted < budgetMs) return;
  await nextTurn();
  sliceStarted = performance.now();
}

/** A blob to store: its bytes and, when already known, its hash. */
export interface BlobInput {
  bytes: Buffer;
  hash?: string | undefined;
}

/** Small blobs per statement when several are stored at once. */
const BLOBS_PER_STATEMENT = 50;

/**
 * Stores every blob whose hash is not stored yet; returns their hashes in order. Small blobs go in
 * multi-row statements (a message with thousands of parts is a few dozen statements, not thousands).
 */
export async function putBlobs(tx: Tx, items: BlobInput[], createdAt: number): Promise<string[]> {
  const hashes = items.map((item) => item.hash ?? blobHash(item.bytes));
  const unique = new Map<string, Buffer>();
  hashes.forEach((hash, index) => unique.set(hash, items[index]!.bytes));
  const entries = [...unique.entries()];
  for (let index = 0; index < entries.length; index += BLOBS_PER_STATEMENT) {
    const batch = entries.slice(index, index + BLOBS_PER_STATEMENT);
    const inserted = await tx
      .insert(blobs)
      .values(
        batch.map(([hash, bytes]) => ({
          hash,
          size: bytes.length,
          chunkCount: Math.max(1, Math.ceil(bytes.length / BLOB_CHUNK_BYTES)),
          createdAt,
        })),
      )
      .onConflictDoNothing()
      .returning({ hash: blobs.hash });
    const fresh = new Set(inserted.map((row) => row.hash));
    const small: { hash: string; seq: number; data: Buffer }[] = [];
    for (const [hash, bytes] of batch) {
      if (!fresh.has(hash)) continue;
      if (bytes.length <= BLOB_CHUNK_BYTES) {
        small.push({ hash, seq: 0, data: bytes });
        continue;
      }
      for (let seq = 0; seq * BLOB_CHUNK_BYTES < bytes.length; seq++) {
        await tx
          .insert(blobChunks)
          .values({ hash, seq, data: bytes.subarray(seq * BLOB_CHUNK_BYTES, (seq + 1) * BLOB_CHUNK_BYTES) });
        await breathe();
      }
    }
    if (small.length > 0) await tx.insert(blobChunks).values(small);
    await breathe();
  }
  return hashes;
}

/**
 * Stores `bytes` unless a blob with the same hash exists; returns its hash. Pass `hash` when it was computed
 * elsewhere (the parse worker hashes off the event loop).
 */
export async function putBlob(tx: Tx, bytes: Buffer, createdAt: number, hash?: string): Promise<string> {
  const [stored] = await putBlobs(tx, [{ bytes, hash }], createdAt);
  return stored!;
}

/** The blob's size, or undefined when it does not exist. */
export async function blobSize(db: Executor, hash: string): Promise<number | undefined> {
  const rows = await db.select({ size: blobs.size }).from(blobs).where(eq(blobs.hash, hash)).limit(1);
  return rows[0]?.size;
}

/** The blob's chunks in order, read one at a time (a large blob is never held whole). */
export async function* readBlobChunks(db: Executor, hash: string): AsyncGenerator<Buffer> {
  const head = await db.select({ chunkCount: blobs.chunkCount }).from(blobs).where(eq(blobs.hash, hash)).limit(1);
  const count = head[0]?.chunkCount ?? 0;
  for (let seq = 0; seq < count; seq++) {
    const rows = await db
      .select({ data: blobChunks.data })
      .from(blobChunks)
      .where(and(eq(blobChunks.hash, hash), eq(blobChunks.seq, seq)))
      .limit(1);
    const data = rows[0]?.data;
    if (data === undefined) throw new Error(`blob ${hash} is missing chunk ${seq}`);
    yield Buffer.isBuffer(data) ? data : Buffer.from(data);
  }
}

/** The whole blob in memory (for bodies and raw MIME a caller asked for), or undefined when missing. */
/** The raw message kept in `message_raw` for the message with sequence number `seq` (see `messages.rawHash`). */
export async function readMessageRaw(db: Executor, seq: number): Promise<Buffer | undefined> {
  const [row] = await db.select({ data: messageRaw.data }).from(messageRaw).where(eq(messageRaw.seq, seq));
  if (!row) return undefined;
  return Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data);
}

export async function readBlob(db: Executor, hash: string): Promise<Buffer | undefined> {
  const rows = await db
    .select({ data: blobChunks.data })
    .from(blobChunks)
    .where(eq(blobChunks.hash, hash))
    .orderBy(asc(blobChunks.seq));
  if (rows.length === 0) {
    const size = await blobSize(db, hash);
    return size === 0 ? Buffer.alloc(0) : undefined;
  }
  return Buffer.concat(rows.map((row) => (Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data as Uint8Array))));
}

/**
 * Deletes the blobs among `hashes` that nothing refers to any more (after messages or attachments were
 * deleted in the same transaction). Blobs still shared with another message or a staged upload, or still owed to a recipient by the
 * outbound queue, stay.
 */
export async function releaseBlobs(tx: Tx, hashes: Iterable<string>): Promise<void> {
  const unique = [...new Set(hashes)];
  for (let index = 0; index < unique.length; index += 100) {
    const batch = unique.slice(index, index + 100);
    await tx
      .delete(blobs)
      .where(
        and(
          inArray(blobs.hash, batch),
          notExists(tx.select({ one: messages.id }).from(messages).where(eq(messages.rawHash, blobs.hash))),
          notExists(tx.select({ one: messages.id }).from(messages).where(eq(messages.bodyHash, blobs.hash))),
          notExists(tx.select({ one: attachments.id }).from(attachments).where(eq(attachments.blobHash, blobs.hash))),
          notExists(
            tx
              .select({ one: attachmentUploads.id })
              .from(attachmentUploads)
              .where(eq(attachmentUploads.blobHash, blobs.hash)),
          ),
          notExists(
            tx
              .select({ one: outboundMessages.id })
              .from(outboundMessages)
              .where(eq(outboundMessages.pendingRawHash, blobs.hash)),
          ),
          notExists(
            tx.select({ one: deliveryReports.id }).from(deliveryReports).where(eq(deliveryReports.rawHash, blobs.hash)),
          ),
        ),
      );
  }
}
