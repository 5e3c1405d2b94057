/**
 * @module admin/contracts
 * The admin area's declared interface: what applies to a grant (its workspace's policy, rules and lists) as the mail
 * stages read it, the policy upkeep, and the rule types they share.
 */
import type {
  tables,
  StoredEvaluationInput,
  StoredPolicyLimits,
  StoredPolicyOptions,
  StoredRuleAction,
  StoredSpamDetection,
} from '../../storage/index.js';

/** A list's items, ready for look-ups. */
export interface ListSet {
  id: string;
  type: 'domain' | 'tld' | 'address';
  items: ReadonlySet<string>;
}

/** What an evaluation looks at: the wire's `evaluation_input`, lower-cased. */
export type EvaluationInput = StoredEvaluationInput;

/** The combined actions of the matching rules. */
export interface RuleOutcome {
  matchedRuleIds: string[];
  block: boolean;
  markAsSpam: boolean;
  markAsRead: boolean;
  markAsStarred: boolean;
  archive: boolean;
  trash: boolean;
  /** Folder names of `assign_to_folder`, in rule order, without repeats. */
  folders: string[];
}

/** A rule-evaluation row. */
export type EvaluationRow = typeof tables.ruleEvaluations.$inferInsert;

/** A rule ready to evaluate. */
export interface CompiledRule {
  id: string;
  test(input: EvaluationInput, lists: ReadonlyMap<string, ListSet>): boolean;
  actions: StoredRuleAction[];
  /** Whether a condition reads the message's trust block (`trust.injection`, `trust.dmarc`). */
  needsTrust?: boolean;
}

/** The policy of a grant, as the stages read it. */
export interface EffectivePolicy {
  id: string;
  limits: StoredPolicyLimits;
  spamDetection: StoredSpamDetection;
  options: StoredPolicyOptions;
}

/** Everything that applies to the grants of one workspace. */
export interface GrantEnforcement {
  /** Absent when the application has no workspace at all (then nothing applies). */
  workspaceId: string | undefined;
  policy: EffectivePolicy | undefined;
  /** Enabled inbound rules, in evaluation order. */
  inbound: CompiledRule[];
  /** Enabled outbound rules, in evaluation order. */
  outbound: CompiledRule[];
  /** The lists the rules name, by id (only this application's). */
  lists: ReadonlyMap<string, ListSet>;
}

/** The grant fields enforcement looks at. */
export interface EnforcedGrant {
  applicationId: string;
  workspaceId: string | null;
}

/** What createEnforcement() returns (src/admin/enforcement.ts): the cached loader of what applies to a grant. */
export interface Enforcement {
  /** What applies to a grant (cached; see enforcement.ts). Rejects when the database cannot be read. */
  forGrant(grant: EnforcedGrant): Promise<GrantEnforcement>;
  /** Forgets cached entries (after a write to workspaces, policies, rules or lists). */
  invalidate(): void;
}

/** What one policy upkeep run did. */
export interface UpkeepResult {
  inboxDeleted: number;
  junkDeleted: number;
  foldersCreated: number;
}

/** What createPolicyUpkeep() returns (src/admin/policy-upkeep.ts). */
export interface PolicyUpkeep {
  /** One pass over every policy with upkeep to do, as of the clock's now. Stops early when `signal` is aborted. */
  run(signal?: AbortSignal): Promise<UpkeepResult>;
}
