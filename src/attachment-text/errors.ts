/**
 * @module attachment-text/errors
 * The one error of this area: an {@link AppError} (so every face maps it where it maps the rest) with the reason an
 * attachment could not be read, also given as the error's type (`attachment_<reason>`).
 */
import { AppError, type ErrorCode } from '../errors.js';
import type { AttachmentTextErrorLike, AttachmentTextErrorReason } from './contracts.js';

/**
 * The transport-neutral code of each reason: what the caller did (a bad cursor: `invalid_request`, 400) or what the
 * file is (`unprocessable`, 422: the request was sound, the attachment cannot be read; a deadline overrun is the
 * file's doing too, built to be slow or damaged, not an upstream's, so not a 5xx).
 */
const CODES: Record<AttachmentTextErrorReason, ErrorCode> = {
  too_large: 'unprocessable',
  zip_bomb: 'unprocessable',
  timeout: 'unprocessable',
  unreadable: 'unprocessable',
  encrypted: 'unprocessable',
  unsupported: 'unprocessable',
  invalid_cursor: 'invalid_request',
};

/** An attachment that could not be read, and why. `message` is written for the agent that asked. */
export class AttachmentTextError extends AppError implements AttachmentTextErrorLike {
  constructor(
    readonly reason: AttachmentTextErrorReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super(CODES[reason], message, { reason }, { ...options, type: `attachment_${reason}` });
  }
}

/** Whether a value is an {@link AttachmentTextError}. */
export function isAttachmentTextError(error: unknown): error is AttachmentTextError {
  return error instanceof AttachmentTextError;
}
