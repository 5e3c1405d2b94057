/**
 * @module outbound/composition-state
 * What the parts of the composer (./composition.ts) share: the state `createComposer` makes.
 */
import type { CoreDeps } from '../ports/index.js';
import type { AttachmentUploads } from './contracts.js';

/** What the functions of the composer share, made once by `createComposer`. */
export interface ComposerState extends Pick<CoreDeps, 'db' | 'secrets'> {
  /** Completed large-attachment upload sessions a request may take by id; undefined: none. */
  uploads: Pick<AttachmentUploads, 'staged'> | undefined;
}
