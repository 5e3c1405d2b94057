/**
 * @module oauth/oauth-store
 * The reads and writes of hosted OAuth: the codes and tokens issued to applications (by hash), and the provider
 * tokens of OAuth grants.
 */
import { createHash } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';
import type { IssuedTokenKind } from '../../storage/schema/oauth.js';

/** An issued code or token, as stored. */
export type IssuedTokenRow = typeof tables.oauthIssuedTokens.$inferSelect;

/** The provider tokens of a grant, as stored. */
export type GrantTokensRow = typeof tables.oauthGrantTokens.$inferSelect;

/** SHA-256 (hex) of an issued token: the only form it is stored in. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Stores an issued token (given in clear; its hash is kept). */
export async function insertIssuedToken(
  executor: Executor,
  token: string,
  values: Omit<
    IssuedTokenRow,
    'tokenHash' | 'usedAt' | 'offline' | 'redirectUri' | 'codeChallenge' | 'codeChallengeMethod' | 'idTokenSealed'
  > &
    Partial<
      Pick<IssuedTokenRow, 'offline' | 'redirectUri' | 'codeChallenge' | 'codeChallengeMethod' | 'idTokenSealed'>
    >,
): Promise<void> {
  // An ID token handed on twice (a provider may sign the same claims within one second) is kept once.
  await executor
    .insert(tables.oauthIssuedTokens)
    .values({ tokenHash: tokenHash(token), ...values })
    .onConflictDoNothing();
}

/** The issued token `token` of `kind`, if there is one (used, revoked or expired ones included). */
export async function findIssuedToken(
  executor: Pick<Executor, 'select'>,
  token: string,
  kinds: readonly IssuedTokenKind[],
): Promise<IssuedTokenRow | undefined> {
  const [row] = await executor
    .select()
    .from(tables.oauthIssuedTokens)
    .where(eq(tables.oauthIssuedTokens.tokenHash, tokenHash(token)))
    .limit(1);
  return row && kinds.includes(row.kind) ? row : undefined;
}

/** Marks an issued token used (a code exchanged) or revoked; false when it already was (a second exchange). */
export async function useIssuedToken(executor: Executor, hash: string, atMs: number): Promise<boolean> {
  const rows = await executor
    .update(tables.oauthIssuedTokens)
    .set({ usedAt: atMs })
    .where(and(eq(tables.oauthIssuedTokens.tokenHash, hash), isNull(tables.oauthIssuedTokens.usedAt)))
    .returning({ hash: tables.oauthIssuedTokens.tokenHash });
  return rows.length > 0;
}

/** Revokes every token issued for a grant (its provider refused a refresh, or the grant was revoked). */
export async function revokeGrantTokens(executor: Executor, grantId: string, atMs: number): Promise<void> {
  await executor
    .update(tables.oauthIssuedTokens)
    .set({ usedAt: atMs })
    .where(and(eq(tables.oauthIssuedTokens.grantId, grantId), isNull(tables.oauthIssuedTokens.usedAt)));
}

/** The provider tokens of a grant, if it is an OAuth grant. */
export async function findGrantTokens(
  executor: Pick<Executor, 'select'>,
  grantId: string,
): Promise<GrantTokensRow | undefined> {
  const [row] = await executor
    .select()
    .from(tables.oauthGrantTokens)
    .where(eq(tables.oauthGrantTokens.grantId, grantId))
    .limit(1);
  return row;
}

/**
 * Stores a grant's provider tokens: a new row, or the row replaced, keeping its refresh token when the provider
 * gave none this time (Google gives one only at the first consent); a grant whose tokens a credential mints keeps none.
 */
export async function saveGrantTokens(
  executor: Executor,
  values: Omit<GrantTokensRow, 'createdAt'> & { createdAt: number },
): Promise<void> {
  const { grantId, createdAt: _created, refreshTokenSealed, ...rest } = values;
  await executor
    .insert(tables.oauthGrantTokens)
    .values(values)
    .onConflictDoUpdate({
      target: tables.oauthGrantTokens.grantId,
      set: { ...rest, ...(refreshTokenSealed !== null || rest.kind !== 'refresh_token' ? { refreshTokenSealed } : {}) },
    });
  void grantId;
}

/** Replaces a grant's access token after a refresh (and its refresh token, when the provider rotated it). */
export async function updateGrantAccess(
  executor: Executor,
  grantId: string,
  values: Pick<GrantTokensRow, 'accessTokenSealed' | 'accessExpiresAt' | 'updatedAt'> &
    Partial<Pick<GrantTokensRow, 'refreshTokenSealed' | 'scope'>>,
): Promise<void> {
  await executor.update(tables.oauthGrantTokens).set(values).where(eq(tables.oauthGrantTokens.grantId, grantId));
}
