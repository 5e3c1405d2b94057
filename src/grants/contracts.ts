/**
 * @module grants/contracts
 * The grants area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type { CreateFolderInput, Folder, ListFoldersInput, UpdateFolderInput } from '../schemas/folders.js';
import type { GrantRow, Tx } from '../../storage/index.js';

/**
 * An account to connect, read and not yet tried: the providers' `AccountRequest` (src/providers/contracts.ts),
 * restated here because the providers' contracts reach the grants' users (an import would make a cycle).
 */
export interface AccountRequest {
  readonly email: string;
  login(): Promise<{ save(tx: Tx, grantId: string, options: { reconnect: boolean; atMs: number }): Promise<void> }>;
}

/** What a connection names besides the account: the grant's name, state and workspace, and the scopes granted. */
export interface ConnectInput {
  name?: string | undefined;
  state?: string | undefined;
  workspace_id?: string | undefined;
  /** The scopes the provider granted (OAuth); absent: none. */
  scope?: string[] | undefined;
  /** The connector credential minting the grant's tokens (service account, app-only); null or absent: none. */
  credential_id?: string | null | undefined;
}
import type { CreateGrantInput, Grant, ListGrantsInput, UpdateGrantInput } from '../schemas/grants.js';

/** Message counts of one folder. */
export interface FolderCounts {
  total: number;
  unread: number;
}

/** Where folder message counts come from (the mail store); a grant with no mail has none. */
export type FolderCounter = (grantId: string, folderIds: string[]) => Promise<Map<string, FolderCounts>>;

/** What createFolderService() returns (src/grants/folder-service.ts). */
export interface FolderService {
  /** A page of the grant's folders: system folders first, then the user's in creation order. */
  list(
    principal: Principal,
    input: ListFoldersInput,
  ): Promise<{
    data: Folder[];
    next_cursor?: string;
  }>;
  /** One folder. */
  find(
    principal: Principal,
    input: {
      grant_id: string;
      folder_id: string;
    },
  ): Promise<Folder>;
  /** Makes a folder; names are unique in a mailbox (409 otherwise). */
  create(principal: Principal, input: CreateFolderInput): Promise<Folder>;
  /** Renames, moves or recolours a folder. System folders keep their name and place. */
  update(principal: Principal, input: UpdateFolderInput): Promise<Folder>;
  /** Deletes a folder the user made; system folders cannot be deleted. */
  destroy(
    principal: Principal,
    input: {
      grant_id: string;
      folder_id: string;
    },
  ): Promise<void>;
}

/** What createGrantService() returns (src/grants/grant-service.ts). */
export interface GrantService {
  /** Resolves a path's grant reference (id or email) within the caller's application, or 404. */
  require: (principal: Principal, ref: string) => Promise<GrantRow>;
  /**
   * Creates a grant: an Agent Account ({@link createHosted}) or a connected account of a kind in `hooks.accounts`
   * ({@link connectAccount}).
   */
  create(
    principal: Principal,
    input: CreateGrantInput,
  ): Promise<{
    grant: Grant;
    created: boolean;
  }>;
  /**
   * Connects the account of `request` as a grant of `provider` (created, or the grant of the same address
   * re-authenticated), as `create` does for a connected kind once its settings are read: the hosted OAuth callback's
   * way in, with an account whose provider already vouched for it.
   */
  connect(
    principal: Principal,
    input: ConnectInput,
    provider: string,
    request: AccountRequest,
  ): Promise<{ grant: Grant; created: boolean }>;
  /** Lists the application's grants with offset pagination (as `GET /v3/grants` does in Nylas v3). */
  list(
    principal: Principal,
    input: ListGrantsInput,
  ): Promise<{
    data: Grant[];
    limit: number;
    offset: number;
  }>;
  /** One grant by id or email address. */
  find(principal: Principal, ref: string): Promise<Grant>;
  /**
   * Changes the display name, settings (merged), scope or workspace of a grant; `sending.status: "active"` resumes
   * a paused grant's sending (recorded in `sending_state_changes` with `requestId` as the actor). A connected
   * account's servers, credentials and sync options are not settings to merge: connecting it again changes them.
   */
  update(
    principal: Principal,
    input: UpdateGrantInput,
    context?: {
      requestId?: string | undefined;
    },
  ): Promise<Grant>;
  /**
   * Suspends a grant (the kill switch, issue 37): every send, scheduled send and agent write is refused with
   * `reason` until it is resumed. Suspending a suspended grant replaces the reason. Emits `grant.suspended`.
   */
  suspend(principal: Principal, input: { grant_id: string; reason: string }): Promise<Grant>;
  /** Resumes a suspended grant; its scheduled sends that fell due meanwhile leave now. Emits `grant.resumed`. */
  resume(principal: Principal, ref: string): Promise<Grant>;
  /** Deletes a grant and everything it owns (folders, calendars, mail; a connected account's `imap_*` rows). */
  destroy(principal: Principal, ref: string): Promise<void>;
}
