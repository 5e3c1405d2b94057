/**
 * @module admin/contracts
 * The admin area's declared interface: its services as the operations see them (workspaces, policies, rules, lists,
 * rule evaluations), what applies to a grant (its workspace's policy, rules and lists) as the mail stages read it, the
 * policy upkeep, and the rule types they share.
 */
import type { Principal } from '../access.js';
import type {
  AgentList,
  AgentListItem,
  AutoGroupInput,
  CreateListInput,
  CreatePolicyInput,
  CreateRuleInput,
  CreateWorkspaceInput,
  ListItemsChangeInput,
  ListRuleEvaluationsInput,
  ManualAssignInput,
  ManualAssignResult,
  PageInput,
  Policy,
  Rule,
  RuleEvaluation,
  UpdateListInput,
  UpdatePolicyInput,
  UpdateRuleInput,
  UpdateWorkspaceInput,
  Workspace,
} from '../schemas/admin.js';
import type {
  tables,
  StoredEvaluationInput,
  StoredPolicyLimits,
  StoredPolicyOptions,
  StoredPolicyOversight,
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
  /** Oversight mode and guard settings of the policy's grants (src/oversight). */
  oversight: StoredPolicyOversight;
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
  /**
   * One pass over every policy with upkeep to do, as of the clock's now. Stops early when `signal` is aborted. Without
   * an application: the policies of production applications (the worker); with one: that test-mode application's.
   */
  run(signal?: AbortSignal, applicationId?: string): Promise<UpkeepResult>;
}

/** What createWorkspaceService() returns (src/admin/workspace-service.ts): an application's workspaces (`/v3/workspaces`). */
export interface WorkspaceService {
  /** Every workspace of the application, the default first, then oldest first. */
  list(principal: Principal): Promise<{ data: Workspace[] }>;
  /** One workspace. */
  find(principal: Principal, workspaceId: string): Promise<Workspace>;
  /** Creates a (non-default) workspace; `auto_group` defaults to true when a domain is given. */
  create(principal: Principal, input: CreateWorkspaceInput): Promise<Workspace>;
  /** Changes a workspace (PATCH: only the fields given; null clears policy_id or rule_ids). */
  update(principal: Principal, input: UpdateWorkspaceInput): Promise<Workspace>;
  /** Deletes a workspace; its grants move to the default workspace. The default workspace cannot be deleted. */
  destroy(principal: Principal, workspaceId: string): Promise<void>;
  /**
   * Places the grants still in the default workspace (or in none) by the placement order: a workspace with
   * `auto_group` whose domain is the grant's. Filters: created at or after `after_created_at`, valid grants
   * only unless `invalid_also`, and only the workspace of `specific_domain` when given.
   */
  autoGroup(principal: Principal, input: AutoGroupInput): Promise<{ job_id: string; message: string }>;
  /**
   * Moves grants into the workspace (`assign_grants`) and out of it to the default workspace (`remove_grants`).
   * A grant that is not this application's is a 404 and nothing moves; removing a grant that is not in the
   * workspace leaves it where it is (it is not listed in `grants_removed`).
   */
  manualAssign(principal: Principal, input: ManualAssignInput): Promise<ManualAssignResult>;
}

/** What createPolicyService() returns (src/admin/policy-service.ts): an application's policies (`/v3/policies`). */
export interface PolicyService {
  /** The application's policies, oldest first, cursor-paginated. */
  list(principal: Principal, input: PageInput): Promise<{ data: Policy[]; next_cursor?: string }>;
  /** One policy. */
  find(principal: Principal, policyId: string): Promise<Policy>;
  /** Creates a policy. */
  create(principal: Principal, input: CreatePolicyInput): Promise<Policy>;
  /** Changes a policy: each object given replaces the stored one whole. */
  update(principal: Principal, input: UpdatePolicyInput): Promise<Policy>;
  /** Deletes a policy and clears it from the workspaces that name it. */
  destroy(principal: Principal, policyId: string): Promise<void>;
}

/** What createRuleService() returns (src/admin/rule-service.ts): an application's rules (`/v3/rules`). */
export interface RuleService {
  /** The application's rules, oldest first, cursor-paginated. */
  list(principal: Principal, input: PageInput): Promise<{ data: Rule[]; next_cursor?: string }>;
  /** One rule. */
  find(principal: Principal, ruleId: string): Promise<Rule>;
  /** Creates a rule (priority 10, enabled, inbound and match all unless given). */
  create(principal: Principal, input: CreateRuleInput): Promise<Rule>;
  /** Changes a rule: fields given replace the stored ones (`match` and `actions` whole); the result is checked whole. */
  update(principal: Principal, input: UpdateRuleInput): Promise<Rule>;
  /** Deletes a rule and removes its id from the workspaces and policies that name it. */
  destroy(principal: Principal, ruleId: string): Promise<void>;
}

/** What createListService() returns (src/admin/list-service.ts): an application's lists and their items (`/v3/lists`). */
export interface ListService {
  /** The application's lists, oldest first, cursor-paginated. */
  list(principal: Principal, input: PageInput): Promise<{ data: AgentList[]; next_cursor?: string }>;
  /** One list. */
  find(principal: Principal, listId: string): Promise<AgentList>;
  /** Creates an empty list. */
  create(principal: Principal, input: CreateListInput): Promise<AgentList>;
  /** Renames or re-describes a list; its type cannot change. */
  update(principal: Principal, input: UpdateListInput): Promise<AgentList>;
  /** Deletes a list and its items; a 409 naming the rules when rules still name it. */
  destroy(principal: Principal, listId: string): Promise<void>;
  /** A page of a list's items, oldest first. */
  listItems(
    principal: Principal,
    input: PageInput & { list_id: string },
  ): Promise<{ data: AgentListItem[]; next_cursor?: string }>;
  /** Adds items (values already there are ignored); all of them fit the list's type, or nothing is added. */
  addItems(principal: Principal, input: ListItemsChangeInput): Promise<AgentList>;
  /** Removes items (values not in the list are ignored). */
  removeItems(principal: Principal, input: ListItemsChangeInput): Promise<AgentList>;
}

/** What createEvaluationService() returns (src/admin/evaluation-service.ts): `GET /v3/grants/{id}/rule-evaluations`. */
export interface EvaluationService {
  /** A grant's evaluations, newest first, cursor-paginated. Another application's grant is a 404. */
  list(
    principal: Principal,
    input: ListRuleEvaluationsInput,
  ): Promise<{ data: RuleEvaluation[]; next_cursor?: string }>;
}
