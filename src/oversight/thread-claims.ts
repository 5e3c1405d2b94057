/**
 * @module oversight/thread-claims
 * Thread claims (issue 40, item 4, docs/mail-out.md): an agent claims a thread for a lease (`ttl_seconds`, 10 s to an
 * hour, 300 by default), renews it by claiming again with its token, and ends it by releasing it or by replying with
 * the token. While it runs, the `thread_claim` guard of the send gate refuses a send into the thread without the
 * token (409 naming the holder and until when), and so do the drafts; thread reads show the claim, never its token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OperationContext, Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import type { GrantRow } from '../../storage/index.js';
import { AppError } from '../errors.js';
import {
  CLAIM_TTL,
  type ClaimThreadInput,
  type ReleaseThreadInput,
  type ThreadClaim,
  type ThreadClaimSummary,
} from '../schemas/thread-claims.js';
import type { SendGuard } from './contracts.js';
import { claimOf, deleteClaim, liveClaims, putClaim, threadExists, type ClaimRow } from './thread-claims-store.js';

/** Thread claims: the lease, what reads show, what the send path asks. */
export interface ThreadClaims {
  claim(principal: Principal, context: Pick<OperationContext, 'client'>, input: ClaimThreadInput): Promise<ThreadClaim>;
  release(principal: Principal, input: ReleaseThreadInput): Promise<{ thread_id: string; released: boolean }>;
  /** The running claims of some threads of a grant, by thread id, as reads show them. */
  summaries(grantId: string, threadIds: string[]): Promise<Map<string, ThreadClaimSummary>>;
  /**
   * Throws the 409 naming the claim when the thread is claimed and `token` is not its token (nor, given `keyId`, the
   * claim made by that key: a draft by the holder's own key needs no token).
   */
  assertFree(grantId: string, threadId: string, token: string | undefined, keyId?: string): Promise<void>;
  /** A reply sent into the thread with the claim's token: the claim ends. */
  settle(grantId: string, threadId: string, token: string | undefined): Promise<void>;
}

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function summaryOf(row: ClaimRow): ThreadClaimSummary {
  return {
    claimed_by: {
      api_key_id: row.keyId,
      name: row.keyName,
      ...(row.session !== null ? { session: row.session } : {}),
    },
    expires_at: Math.ceil(row.expiresAt / 1000),
  };
}

/** The 409 of a claimed thread, naming its holder and until when. */
export function claimedError(row: ClaimRow): AppError {
  const holder = `${row.keyId ? `key "${row.keyName}" (${row.keyId})` : row.keyName}${row.session ? `, MCP session ${row.session}` : ''}`;
  const until = new Date(row.expiresAt).toISOString();
  return new AppError(
    'conflict',
    `Thread ${row.threadId} is claimed by ${holder} until ${until}. Only the claim's holder (passing its claim_token) sends or drafts into it; leave it, or claim it once the claim lapses or is released.`,
    { thread_id: row.threadId, claim: summaryOf(row) },
    { type: 'thread_claimed' },
  );
}

/** Parts of the claims. */
export interface ThreadClaimParts {
  requireGrant: (principal: Principal, ref: string) => Promise<GrantRow>;
}

/** Creates the thread claims. */
export function createThreadClaims(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'randomBytes'>,
  parts: ThreadClaimParts,
): ThreadClaims {
  const { db, clock } = deps;

  async function assertFree(grantId: string, threadId: string, token: string | undefined, keyId?: string) {
    const [row] = await liveClaims(db, grantId, [threadId], clock.now().getTime());
    if (!row || (keyId !== undefined && row.keyId === keyId)) return;
    if (token === undefined || !sameHash(hashOf(token), row.tokenHash)) throw claimedError(row);
  }

  return {
    async claim(principal, context, input) {
      const grant = await parts.requireGrant(principal, input.grant_id);
      if (!(await threadExists(db, grant.id, input.thread_id)))
        throw new AppError('not_found', `Thread ${input.thread_id} was not found in this mailbox.`);
      const ttl = input.ttl_seconds ?? CLAIM_TTL.default;
      return db.write(async (tx) => {
        const now = clock.now().getTime();
        const held = await claimOf(tx, grant.id, input.thread_id);
        const renewing =
          held !== undefined && input.claim_token !== undefined && sameHash(hashOf(input.claim_token), held.tokenHash);
        if (held && held.expiresAt > now && !renewing) throw claimedError(held);
        const token = renewing ? input.claim_token! : `clm_${deps.randomBytes(24).toString('base64url')}`;
        const row: ClaimRow = renewing
          ? { ...held, expiresAt: now + ttl * 1000 }
          : {
              grantId: grant.id,
              threadId: input.thread_id,
              applicationId: grant.applicationId,
              tokenHash: hashOf(token),
              keyId: principal.key?.id ?? null,
              keyName: principal.key?.name ?? 'application',
              session: context.client?.session ?? null,
              expiresAt: now + ttl * 1000,
              createdAt: now,
            };
        await putClaim(tx, row);
        return { grant_id: grant.id, thread_id: input.thread_id, claim_token: token, ...summaryOf(row) };
      });
    },
    async release(principal, input) {
      const grant = await parts.requireGrant(principal, input.grant_id);
      const hash = hashOf(input.claim_token);
      return db.write(async (tx) => {
        const held = await claimOf(tx, grant.id, input.thread_id);
        if (!held) return { thread_id: input.thread_id, released: false };
        const live = held.expiresAt > clock.now().getTime();
        if (!sameHash(hash, held.tokenHash)) {
          if (live) throw claimedError(held);
          return { thread_id: input.thread_id, released: false };
        }
        await deleteClaim(tx, grant.id, input.thread_id, hash);
        return { thread_id: input.thread_id, released: live };
      });
    },
    async summaries(grantId, threadIds) {
      const rows = await liveClaims(db, grantId, threadIds, clock.now().getTime());
      return new Map(rows.map((row) => [row.threadId, summaryOf(row)]));
    },
    assertFree,
    async settle(grantId, threadId, token) {
      if (token === undefined) return;
      try {
        await db.write((tx) => deleteClaim(tx, grantId, threadId, hashOf(token)));
      } catch {
        // The reply left; its claim lapses at its time.
      }
    },
  };
}

/**
 * The `thread_claim` guard: a send into a claimed thread without the claim's token is refused (409). A scheduled send
 * leaving was checked when it was scheduled.
 */
export function claimGuard(claims: Pick<ThreadClaims, 'assertFree'>): SendGuard {
  return {
    name: 'thread_claim',
    async check(attempt) {
      if (!attempt.threadId || attempt.kind === 'scheduled') return undefined;
      try {
        await claims.assertFree(attempt.grant.id, attempt.threadId, attempt.intent.claimToken);
        return undefined;
      } catch (error) {
        if (error instanceof AppError) return { outcome: 'refuse', error };
        throw error;
      }
    },
  };
}
