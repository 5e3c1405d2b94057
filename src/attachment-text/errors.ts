/**
 * @module attachment-text/errors
 * The one error of this area: an {@link AppError} (so every face maps it where it maps the rest) with the reason an
 * attachment could not be read, also given as the error's type (`attachment_<reason>`).
 */
import { AppError, type ErrorCode } from '../errors.js';
import type { AttachmentTextErrorLike, AttachmentTextErrorReason } from './contracts.js';

/** The transport-neutral code of each reason: what the caller did (a bad cursor) or what the file is. */
const CODES: Record<AttachmentTextErrorReason, ErrorCode> = {
  too_large: 'payload_too_large',
  zip_bomb: 'invalid_request',
  timeout: 'timeout',
  unreadable: 'invalid_request',
  encrypted: 'invalid_request',
  unsupported: 'invalid_request',
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
