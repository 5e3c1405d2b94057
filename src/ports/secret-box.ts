/**
 * @module ports/secret-box
 * Secrets sealed at rest. The implementation is `createSecretBox` (src/secrets/secret-box.ts), opened from the
 * installation's key by `openSecretBox` (src/secrets/key-source.ts).
 */

/** Seals and opens secrets at rest. */
export interface SecretBox {
  /** Id of the key new values are sealed with. */
  readonly keyId: string;
  /** Seals a secret with the current key. */
  seal(plain: string): string;
  /** Opens a sealed value with whichever held key sealed it; throws `SecretKeyError` when none does or it was altered. */
  open(sealed: string): string;
  /** Whether `value` is a sealed value (of any key). */
  isSealed(value: string): boolean;
  /** Whether `value` was sealed with the current key (else it should be sealed again after a rotation). */
  isCurrent(sealed: string): boolean;
}
