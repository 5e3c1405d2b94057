/**
 * @module oauth/grant-tokens
 * The provider tokens of OAuth grants, kept fresh for the grant's mail (IMAP and SMTP with XOAUTH2): the access token
 * is minted again (./app-tokens.ts: with the refresh token, or the grant's service account or app credential) a minute
 * before it expires, or at once when a server refused it; a refusal of the provider (`invalid_grant`: revoked,
 * expired; the credential deleted) turns the grant `invalid` with one `grant.expired`, and connecting the account
 * again (the hosted flow) makes it `valid`. One refresh at a time per grant in a process.
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { toGrant } from '../grants/index.js';
import type { ConnectorProvider } from '../schemas/connectors.js';
import type { GrantAccessToken, GrantTokens } from './contracts.js';
import { findGrantTokens, revokeGrantTokens, updateGrantAccess } from './oauth-store.js';
import type { OAuthState } from './oauth-state.js';
import { mintGrantToken } from './app-tokens.js';
import { ProviderRefusal } from './provider-client.js';

/** How long before its expiry an access token is refreshed. */
const REFRESH_MARGIN_MS = 60_000;

/** Creates the grant token keeper. */
export function createGrantTokens(state: OAuthState): GrantTokens {
  const refreshing = new Map<string, Promise<GrantAccessToken>>();

  async function grantOf(grantId: string) {
    const [grant] = await state.db.orm.select().from(tables.grants).where(eq(tables.grants.id, grantId)).limit(1);
    if (!grant) throw new AppError('not_found', `No grant ${grantId}.`);
    return grant;
  }

  /**
   * The provider refused to mint a token (the refresh token revoked, the service account or app refused, its
   * credential deleted): the grant is invalid until the account is connected again.
   */
  async function expire(grantId: string, reason: string): Promise<never> {
    await state.db.write(async (tx) => {
      const [grant] = await tx.select().from(tables.grants).where(eq(tables.grants.id, grantId));
      if (!grant || grant.grantStatus === 'invalid') return;
      const at = Math.floor(state.clock.now().getTime() / 1000);
      const [updated] = await tx
        .update(tables.grants)
        .set({ grantStatus: 'invalid', updatedAt: at })
        .where(eq(tables.grants.id, grantId))
        .returning();
      await revokeGrantTokens(tx, grantId, state.clock.now().getTime());
      await state.record(tx, {
        applicationId: grant.applicationId,
        grantId,
        type: 'grant.expired',
        objectId: grantId,
        object: toGrant(updated ?? grant),
        createdAt: at,
      });
    });
    state.logger.warn('oauth: the provider refused a new access token; the grant is invalid until re-authenticated', {
      grant_id: grantId,
      error: reason,
    });
    throw new AppError(
      'unauthorized',
      `The grant's provider refused a new access token (${reason}); connect the account again.`,
    );
  }

  async function refresh(grantId: string): Promise<GrantAccessToken> {
    const grant = await grantOf(grantId);
    const row = await findGrantTokens(state.db.orm, grantId);
    if (!row) throw new AppError('not_found', `Grant ${grantId} has no OAuth tokens.`);
    let tokens;
    try {
      tokens = await mintGrantToken(state, grant, row);
    } catch (error) {
      // A refusal of the token endpoint (4xx with an OAuth error) is final; a network failure or 5xx is not.
      if (error instanceof ProviderRefusal && !error.oauthError.startsWith('http_5')) {
        return expire(grantId, error.oauthError);
      }
      throw error;
    }
    const atMs = state.clock.now().getTime();
    const expiresAt = atMs + tokens.expiresIn * 1000;
    await state.db.write((tx) =>
      updateGrantAccess(tx, grantId, {
        accessTokenSealed: state.secrets.seal(tokens.accessToken),
        accessExpiresAt: expiresAt,
        updatedAt: atMs,
        ...(tokens.refreshToken ? { refreshTokenSealed: state.secrets.seal(tokens.refreshToken) } : {}),
        ...(tokens.scope ? { scope: tokens.scope } : {}),
      }),
    );
    return { email: grant.email, accessToken: tokens.accessToken, expiresAt };
  }

  return {
    async accessToken(grantId, options = {}) {
      const pending = refreshing.get(grantId);
      if (pending) return pending;
      if (!options.force) {
        const row = await findGrantTokens(state.db.orm, grantId);
        if (row && row.accessExpiresAt - REFRESH_MARGIN_MS > state.clock.now().getTime()) {
          const grant = await grantOf(grantId);
          if (grant.grantStatus === 'invalid') {
            throw new AppError('unauthorized', `Grant ${grantId} is invalid; connect the account again.`);
          }
          return {
            email: grant.email,
            accessToken: state.secrets.open(row.accessTokenSealed),
            expiresAt: row.accessExpiresAt,
          };
        }
      }
      const started = refresh(grantId).finally(() => refreshing.delete(grantId));
      refreshing.set(grantId, started);
      return started;
    },

    async revokeAtProvider(grantId) {
      const row = await findGrantTokens(state.db.orm, grantId);
      // Tokens minted with a credential have no refresh token to revoke: deleting the credential ends them.
      if (!row || row.kind !== 'refresh_token') return false;
      const grant = await grantOf(grantId);
      const principal: Principal = { applicationId: grant.applicationId, via: 'local' };
      const client = await state.connectors.client(principal, row.provider as ConnectorProvider);
      const token = state.secrets.open(row.refreshTokenSealed ?? row.accessTokenSealed);
      return state.provider.revoke(client, token);
    },
  };
}
