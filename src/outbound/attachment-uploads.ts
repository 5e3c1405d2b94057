/**
 * @module outbound/attachment-uploads
 * Large-attachment upload sessions, as the Nylas SDK calls them: create a session for a mailbox (`POST
 * /v3/grants/{id}/attachment-uploads`), `PUT` the bytes to the pre-signed URL it answers (no API key: the URL
 * carries a one-time secret, of which only the SHA-256 is stored), complete it, then give its id as
 * `attachments[].id` in a send or draft of the same mailbox. A session lasts one hour; a file may be as large as a
 * whole message (40 MB). Expired sessions are removed, with their bytes, when the mailbox next opens one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import { putBlob, readBlob, releaseBlobs, tables, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, invalid, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import {
  MAX_UPLOAD_BYTES,
  type AttachmentUploadComplete,
  type AttachmentUploadSession,
  type CompleteAttachmentUploadInput,
  type CreateAttachmentUploadInput,
} from '../schemas/attachment-uploads.js';
import type { AttachmentUploads, StagedFile } from './contracts.js';

type UploadRow = typeof tables.attachmentUploads.$inferSelect;

/** How long a session stays usable (as in Nylas: one hour). */
export const UPLOAD_SESSION_SECONDS = 60 * 60;

/** Path of the pre-signed upload URL under the service's public URL. */
export const UPLOAD_PATH = '/uploads';

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Creates the upload-session service. */
export function createAttachmentUploads(
  { db, clock, newId, randomBytes, config }: CoreDeps,
  { grants }: { grants: Pick<GrantService, 'require'> },
): AttachmentUploads {
  const now = () => unixSeconds(clock.now());

  async function requireSession(grant: GrantRow, id: string): Promise<UploadRow> {
    const row = await db.orm.query.attachmentUploads.findFirst({
      where: and(eq(tables.attachmentUploads.id, id), eq(tables.attachmentUploads.grantId, grant.id)),
    });
    if (!row) throw notFound('Attachment upload', id);
    return row;
  }

  /** Marks a session expired (and frees its bytes) once its hour is over. */
  async function expireIfDue(row: UploadRow): Promise<UploadRow> {
    if (row.expiresAt > now() || row.status === 'expired') return row;
    await db.write(async (tx) => {
      await tx
        .update(tables.attachmentUploads)
        .set({ status: 'expired', blobHash: null })
        .where(eq(tables.attachmentUploads.id, row.id));
      if (row.blobHash) await releaseBlobs(tx, [row.blobHash]);
    });
    return { ...row, status: 'expired', blobHash: null };
  }

  return {
    /**
     * Opens a session for the mailbox and answers the pre-signed URL to upload to: on `AGENTPOST_PUBLIC_URL` when
     * set, else on the origin the caller reached (`origin`).
     */
    async create(
      principal: Principal,
      input: CreateAttachmentUploadInput,
      origin?: string,
    ): Promise<AttachmentUploadSession> {
      const grant = await grants.require(principal, input.grant_id);
      const id = newId();
      const token = randomBytes(32).toString('base64url');
      const at = now();
      const expiresAt = at + UPLOAD_SESSION_SECONDS;
      await db.write(async (tx) => {
        // Sessions of this mailbox that expired: their rows and bytes go now.
        const stale = await tx
          .delete(tables.attachmentUploads)
          .where(and(eq(tables.attachmentUploads.grantId, grant.id), lt(tables.attachmentUploads.expiresAt, at)))
          .returning({ blobHash: tables.attachmentUploads.blobHash });
        await releaseBlobs(
          tx,
          stale.flatMap((row) => (row.blobHash ? [row.blobHash] : [])),
        );
        await tx.insert(tables.attachmentUploads).values({
          id,
          applicationId: principal.applicationId,
          grantId: grant.id,
          filename: input.filename,
          contentType: input.content_type,
          expectedSize: input.size ?? 0,
          status: 'uploading',
          tokenHash: sha256(token),
          expiresAt,
          createdAt: at,
        });
      });
      return {
        attachment_id: id,
        method: 'PUT',
        url: `${config.publicUrlSet || !origin ? config.publicUrl : origin}${UPLOAD_PATH}/${encodeURIComponent(id)}?token=${token}`,
        // Nothing is required of the PUT (any Content-Type is taken). The SDK camelCases the keys of this object, so
        // a header named here would reach its users as `contentType`.
        headers: {},
        expires_at: new Date(expiresAt * 1000).toISOString(),
        max_size: MAX_UPLOAD_BYTES,
        size: input.size ?? 0,
        content_type: input.content_type,
        filename: input.filename,
        grant_id: grant.id,
      };
    },

    /**
     * Stores the bytes `PUT` to a pre-signed URL. A wrong secret or an unknown session is the same 404; a session
     * already completed or expired refuses more bytes. A second PUT before completion replaces the first.
     */
    async upload(id: string, token: string | undefined, bytes: Buffer): Promise<void> {
      const row = await db.orm.query.attachmentUploads.findFirst({ where: eq(tables.attachmentUploads.id, id) });
      const given = Buffer.from(sha256(token ?? ''), 'hex');
      if (!row || !token || !timingSafeEqual(given, Buffer.from(row.tokenHash, 'hex')))
        throw notFound('Attachment upload', id);
      const current = await expireIfDue(row);
      if (current.status !== 'uploading')
        throw new AppError(
          'invalid_request',
          `This upload session is ${current.status}; open a new one to upload again.`,
        );
      if (bytes.length > MAX_UPLOAD_BYTES)
        throw new AppError(
          'payload_too_large',
          `The file is ${bytes.length} bytes; an upload may be at most ${MAX_UPLOAD_BYTES} bytes (40 MB).`,
        );
      await db.write(async (tx) => {
        const blobHash = await putBlob(tx, bytes, now());
        await tx
          .update(tables.attachmentUploads)
          .set({ blobHash, size: bytes.length })
          .where(eq(tables.attachmentUploads.id, row.id));
        if (row.blobHash && row.blobHash !== blobHash) await releaseBlobs(tx, [row.blobHash]);
      });
    },

    /** Completes a session after its upload: checks the size announced, then makes the file usable (`ready`). */
    async complete(principal: Principal, input: CompleteAttachmentUploadInput): Promise<AttachmentUploadComplete> {
      const grant = await grants.require(principal, input.grant_id);
      const row = await expireIfDue(await requireSession(grant, input.attachment_id));
      const answer = (status: AttachmentUploadComplete['status']) => ({
        attachment_id: row.id,
        grant_id: grant.id,
        status,
      });
      if (row.status === 'ready') return answer('ready');
      if (row.status !== 'uploading')
        throw new AppError('invalid_request', `This upload session is ${row.status}; open a new one and upload again.`);
      if (!row.blobHash || row.size === null)
        throw new AppError(
          'invalid_request',
          "Nothing was uploaded yet: PUT the file to the session's url first, then complete it.",
        );
      if (row.expectedSize > 0 && row.size !== row.expectedSize) {
        await db.write(async (tx) => {
          await tx
            .update(tables.attachmentUploads)
            .set({ status: 'failed', blobHash: null })
            .where(eq(tables.attachmentUploads.id, row.id));
          await releaseBlobs(tx, [row.blobHash!]);
        });
        throw invalid(
          'size',
          `the upload is ${row.size} bytes but the session announced ${row.expectedSize}; the session failed, open a new one.`,
        );
      }
      await db.write((tx) =>
        tx.update(tables.attachmentUploads).set({ status: 'ready' }).where(eq(tables.attachmentUploads.id, row.id)),
      );
      return answer('ready');
    },

    /**
     * The staged file of a completed session of `grant`, for a send or a draft; undefined when `id` is no session
     * of this mailbox. A session not completed, failed or expired is a 400 naming `field`.
     */
    async staged(grant: GrantRow, id: string, field: string): Promise<StagedFile | undefined> {
      const found = await db.orm.query.attachmentUploads.findFirst({
        where: and(eq(tables.attachmentUploads.id, id), eq(tables.attachmentUploads.grantId, grant.id)),
      });
      if (!found) return undefined;
      const row = await expireIfDue(found);
      if (row.status !== 'ready' || !row.blobHash) {
        throw invalid(
          field,
          `upload session ${JSON.stringify(id)} is ${row.status}${row.status === 'uploading' ? ': upload the file and complete the session first' : ': open a new one'}.`,
        );
      }
      const content = await readBlob(db.orm, row.blobHash);
      if (!content) throw new AppError('internal', `The bytes of upload ${row.id} are missing from the store.`);
      return { filename: row.filename, contentType: row.contentType, content };
    },
  };
}
