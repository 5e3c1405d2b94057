/**
 * @module outbound/idempotency
 * The `Idempotency-Key` header of send requests: per application, a key names one request. The first request
 * with a key stores its answer in the same transaction as the send itself; a repeat with the same request gets
 * that answer again (nothing is sent twice, even when the repeats run concurrently: the write transactions run
 * one at a time, and the second finds the first one's key); the same key with a different request is a 409.
 */
import { createHash } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';
import { canonicalJson } from '../applications/index.js';
import type { Clock } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import type { IdempotencyClaim, IdempotencyStore, StoredAnswer } from './contracts.js';

/** Longest key accepted, as in Nylas v3. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;
/** How long a key is remembered. */
const KEY_TTL_SECONDS = 24 * 3600;

/** Creates the store. */
export function createIdempotencyStore({ clock }: { clock: Clock }): IdempotencyStore {
  return {
    /**
     * The claim of a request, or undefined without a key. A key over 256 characters is a 400 of Nylas's type
     * `api.invalid_idempotency_key`; `onReplay` is told when the answer turns out to be a stored one.
     */
    claim(
      applicationId: string,
      key: string | undefined,
      operation: string,
      input: unknown,
      onReplay?: () => void,
    ): IdempotencyClaim | undefined {
      if (key === undefined) return undefined;
      if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        throw new AppError(
          'invalid_request',
          `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters; this one has ${key.length}.`,
          { field: 'Idempotency-Key' },
          { type: 'api.invalid_idempotency_key' },
        );
      }
      const fingerprint = `${operation}:${createHash('sha256').update(canonicalJson(input)).digest('hex')}`;
      return { applicationId, key, fingerprint, ...(onReplay ? { onReplay } : {}) };
    },

    /**
     * The stored answer for the claim's key, if any (the claim's `onReplay` is told). The key used with another
     * request is a 409 of Nylas's type `api.invalid_idempotent_request`.
     */
    async find(executor: Executor, claim: IdempotencyClaim | undefined): Promise<StoredAnswer | undefined> {
      if (!claim) return undefined;
      const [row] = await executor
        .select()
        .from(tables.idempotencyKeys)
        .where(
          and(eq(tables.idempotencyKeys.applicationId, claim.applicationId), eq(tables.idempotencyKeys.key, claim.key)),
        )
        .limit(1);
      if (!row || row.expiresAt <= unixSeconds(clock.now())) return undefined;
      if (row.fingerprint !== claim.fingerprint) {
        throw new AppError(
          'conflict',
          'Idempotency-Key: this key was already used with a different request; send a new key for a new request.',
          { field: 'Idempotency-Key' },
          { type: 'api.invalid_idempotent_request' },
        );
      }
      claim.onReplay?.();
      return { status: row.status, response: row.response };
    },

    /** Stores the answer, in the transaction of the send it answers. */
    async save(tx: Tx, claim: IdempotencyClaim | undefined, answer: StoredAnswer): Promise<void> {
      if (!claim) return;
      const now = unixSeconds(clock.now());
      await tx.delete(tables.idempotencyKeys).where(lt(tables.idempotencyKeys.expiresAt, now));
      await tx
        .insert(tables.idempotencyKeys)
        .values({
          applicationId: claim.applicationId,
          key: claim.key,
          fingerprint: claim.fingerprint,
          status: answer.status,
          response: answer.response,
          expiresAt: now + KEY_TTL_SECONDS,
          createdAt: now,
        })
        .onConflictDoUpdate({
          target: [tables.idempotencyKeys.applicationId, tables.idempotencyKeys.key],
          set: {
            fingerprint: claim.fingerprint,
            status: answer.status,
            response: answer.response,
            expiresAt: now + KEY_TTL_SECONDS,
            createdAt: now,
          },
        });
    },
  };
}
