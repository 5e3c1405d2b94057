/**
 * @module secrets
 * The front door of src/secrets/: what other areas, the operations and the faces use of it.
 */
export {
  checkSecretKey,
  openSecretBox,
  resolveSecretKey,
  secretKeyFileOf,
  type ResolvedSecretKey,
  type SecretKeyOrigin,
} from './key-source.js';
export { createSecretBox, MIN_SECRET_LENGTH, openStored, SecretKeyError } from './secret-box.js';
export { sealStoredSecrets } from './stored-secrets.js';
