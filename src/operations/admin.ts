/**
 * Administration of Agent Accounts (reference §15): workspaces, policies, rules, lists and their items, and the
 * rule-evaluation audit, as the nylas SDK's `workspaces`, `policies`, `rules` and `lists` resources call them.
 * Application configuration, so HTTP only: not agent tools (they would also crowd the agents' tool budget).
 */
import {
  AgentListItemSchema,
  AgentListSchema,
  AutoGroupInputSchema,
  AutoGroupResultSchema,
  CreateListInputSchema,
  CreatePolicyInputSchema,
  CreateRuleInputSchema,
  CreateWorkspaceInputSchema,
  ListItemsChangeInputSchema,
  ListItemsInputSchema,
  ListListsInputSchema,
  ListPoliciesInputSchema,
  ListRefInputSchema,
  ListRuleEvaluationsInputSchema,
  ListRulesInputSchema,
  ListWorkspacesInputSchema,
  ManualAssignInputSchema,
  ManualAssignResultSchema,
  PolicyRefInputSchema,
  PolicySchema,
  RuleEvaluationSchema,
  RuleRefInputSchema,
  RuleSchema,
  UpdateListInputSchema,
  UpdatePolicyInputSchema,
  UpdateRuleInputSchema,
  UpdateWorkspaceInputSchema,
  WorkspaceListSchema,
  WorkspaceRefInputSchema,
  WorkspaceSchema,
} from '../schemas/admin.js';
import { DeletedSchema, pageOf } from '../schemas/common.js';
import { defineOperation } from './define-operation.js';

const PAGED = '(limit up to 200, then page_token = next_cursor)';

// ─── Workspaces ────────────────────────────────────────────────────────────────────────────────────────────────

export const listWorkspaces = defineOperation({
  name: 'list_workspaces',
  title: 'List workspaces',
  description: 'Lists every workspace of this application, the default one first (not paginated).',
  input: ListWorkspacesInputSchema,
  output: WorkspaceListSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/workspaces', envelope: 'list' },
  tool: false,
  run: (core, _input, { principal }) => core.admin.workspaces.list(principal),
});

export const createWorkspace = defineOperation({
  name: 'create_workspace',
  title: 'Create a workspace',
  description:
    'Creates a workspace: a group of grants under one policy and some rules. With a domain, auto_group defaults to true and new Agent Accounts on that domain are placed here. ' +
    "policy_id and rule_ids must be this application's (else 404).",
  input: CreateWorkspaceInputSchema,
  output: WorkspaceSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/workspaces' },
  tool: false,
  run: (core, input, { principal }) => core.admin.workspaces.create(principal, input),
});

export const autoGroupWorkspaces = defineOperation({
  name: 'auto_group_workspaces',
  title: 'Group grants into workspaces by domain',
  description:
    'Moves the grants still in the default workspace into the auto_group workspace of their email domain, as new accounts are placed. ' +
    'Filters: after_created_at, invalid_also (default false: valid grants only), specific_domain. Runs before it answers.',
  input: AutoGroupInputSchema,
  output: AutoGroupResultSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/workspaces/auto-group' },
  tool: false,
  run: (core, input, { principal }) => core.admin.workspaces.autoGroup(principal, input),
});

export const getWorkspace = defineOperation({
  name: 'get_workspace',
  title: 'Get a workspace',
  description: 'Returns one workspace with its policy_id and rule_ids.',
  input: WorkspaceRefInputSchema,
  output: WorkspaceSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/workspaces/:workspace_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.workspaces.find(principal, input.workspace_id),
});

export const updateWorkspace = defineOperation({
  name: 'update_workspace',
  title: 'Update a workspace',
  description:
    'Changes the fields given; policy_id or rule_ids null clears them. On the default workspace only policy_id and rule_ids can change (other fields are a 400). ' +
    "A policy or rule that is not this application's is a 404 and nothing changes.",
  input: UpdateWorkspaceInputSchema,
  output: WorkspaceSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/workspaces/:workspace_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.workspaces.update(principal, input),
});

export const deleteWorkspace = defineOperation({
  name: 'delete_workspace',
  title: 'Delete a workspace',
  description:
    'Deletes a workspace; its grants move to the default workspace. The default workspace cannot be deleted (400).',
  input: WorkspaceRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/workspaces/:workspace_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.admin.workspaces.destroy(principal, input.workspace_id);
    return {};
  },
});

export const manualAssignWorkspace = defineOperation({
  name: 'manual_assign_workspace',
  title: 'Move grants into or out of a workspace',
  description:
    'assign_grants move into this workspace; remove_grants move out of it to the default workspace (at most 500 each). ' +
    'A grant of another application is a 404 and nothing moves.',
  input: ManualAssignInputSchema,
  output: ManualAssignResultSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/workspaces/:workspace_id/manual-assign' },
  tool: false,
  run: (core, input, { principal }) => core.admin.workspaces.manualAssign(principal, input),
});

// ─── Policies ──────────────────────────────────────────────────────────────────────────────────────────────────

export const listPolicies = defineOperation({
  name: 'list_policies',
  title: 'List policies',
  description: `Lists the policies of this application, oldest first ${PAGED}.`,
  input: ListPoliciesInputSchema,
  output: pageOf(PolicySchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/policies', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.admin.policies.list(principal, input),
});

export const createPolicy = defineOperation({
  name: 'create_policy',
  title: 'Create a policy',
  description:
    'Creates a policy of limits (sizes in bytes, counts per UTC day, retention in days; none negative except limit_count_daily_email_sent -1 = unlimited; ' +
    'spam retention not longer than inbox retention), spam_detection (spam_sensitivity 0.1 to 5.0) and options. Apply it by naming it in a workspace.',
  input: CreatePolicyInputSchema,
  output: PolicySchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/policies' },
  tool: false,
  run: (core, input, { principal }) => core.admin.policies.create(principal, input),
});

export const getPolicy = defineOperation({
  name: 'get_policy',
  title: 'Get a policy',
  description: 'Returns one policy.',
  input: PolicyRefInputSchema,
  output: PolicySchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/policies/:policy_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.policies.find(principal, input.policy_id),
});

export const updatePolicy = defineOperation({
  name: 'update_policy',
  title: 'Update a policy',
  description:
    'Changes a policy: each of limits, spam_detection, options and rules given replaces the stored one whole; the others stay.',
  input: UpdatePolicyInputSchema,
  output: PolicySchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/policies/:policy_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.policies.update(principal, input),
});

export const deletePolicy = defineOperation({
  name: 'delete_policy',
  title: 'Delete a policy',
  description: 'Deletes a policy; the workspaces that named it are left without a policy.',
  input: PolicyRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/policies/:policy_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.admin.policies.destroy(principal, input.policy_id);
    return {};
  },
});

// ─── Rules ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const listRules = defineOperation({
  name: 'list_rules',
  title: 'List rules',
  description: `Lists the rules of this application, oldest first ${PAGED}.`,
  input: ListRulesInputSchema,
  output: pageOf(RuleSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/rules', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.admin.rules.list(principal, input),
});

export const createRule = defineOperation({
  name: 'create_rule',
  title: 'Create a rule',
  description:
    'Creates a rule: match (all or any) of conditions over from.*, recipient.* and outbound.type with is, is_not, contains or in_list (list ids of this application), ' +
    'and actions (block alone; assign_to_folder with the folder name as value). Defaults: priority 10, enabled, trigger inbound. Apply it by naming it in a workspace, or at once with workspace_ids (extension).',
  input: CreateRuleInputSchema,
  output: RuleSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/rules', status: 201 },
  tool: false,
  run: (core, input, { principal }) => core.admin.rules.create(principal, input),
});

export const getRule = defineOperation({
  name: 'get_rule',
  title: 'Get a rule',
  description: 'Returns one rule.',
  input: RuleRefInputSchema,
  output: RuleSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/rules/:rule_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.rules.find(principal, input.rule_id),
});

export const updateRule = defineOperation({
  name: 'update_rule',
  title: 'Update a rule',
  description:
    'Changes a rule: fields given replace the stored ones (match and actions whole); the result is checked like a new rule.',
  input: UpdateRuleInputSchema,
  output: RuleSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/rules/:rule_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.rules.update(principal, input),
});

export const deleteRule = defineOperation({
  name: 'delete_rule',
  title: 'Delete a rule',
  description: 'Deletes a rule and removes it from the workspaces and policies that name it.',
  input: RuleRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/rules/:rule_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.admin.rules.destroy(principal, input.rule_id);
    return {};
  },
});

export const listRuleEvaluations = defineOperation({
  name: 'list_rule_evaluations',
  title: 'List rule evaluations',
  description: `Lists the rule and policy evaluations of a grant's mail (smtp_rcpt, inbox_processing, outbound_send), newest first ${PAGED}; rule_id (extension) keeps those that matched that rule.`,
  input: ListRuleEvaluationsInputSchema,
  output: pageOf(RuleEvaluationSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/rule-evaluations', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.admin.ruleEvaluations.list(principal, input),
});

// ─── Lists ─────────────────────────────────────────────────────────────────────────────────────────────────────

export const listLists = defineOperation({
  name: 'list_lists',
  title: 'List lists',
  description: `Lists the domain, tld and address lists of this application, oldest first ${PAGED}.`,
  input: ListListsInputSchema,
  output: pageOf(AgentListSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/lists', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.list(principal, input),
});

export const createList = defineOperation({
  name: 'create_list',
  title: 'Create a list',
  description:
    'Creates an empty list of one type (domain, tld or address; it cannot change later). Rules name it in in_list conditions.',
  input: CreateListInputSchema,
  output: AgentListSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/lists', status: 201 },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.create(principal, input),
});

export const getList = defineOperation({
  name: 'get_list',
  title: 'Get a list',
  description: 'Returns one list with its items_count.',
  input: ListRefInputSchema,
  output: AgentListSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/lists/:list_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.find(principal, input.list_id),
});

export const updateList = defineOperation({
  name: 'update_list',
  title: 'Update a list',
  description: "Changes a list's name or description; its type cannot change.",
  input: UpdateListInputSchema,
  output: AgentListSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/lists/:list_id' },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.update(principal, input),
});

export const deleteList = defineOperation({
  name: 'delete_list',
  title: 'Delete a list',
  description:
    'Deletes a list and its items. A list that rules name is a 409 naming those rules: change or delete them first.',
  input: ListRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/lists/:list_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.admin.lists.destroy(principal, input.list_id);
    return {};
  },
});

export const listListItems = defineOperation({
  name: 'list_list_items',
  title: 'List the items of a list',
  description: `Lists a list's items, oldest first ${PAGED}.`,
  input: ListItemsInputSchema,
  output: pageOf(AgentListItemSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/lists/:list_id/items', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.listItems(principal, input),
});

export const addListItems = defineOperation({
  name: 'add_list_items',
  title: 'Add items to a list',
  description:
    "Adds up to 1,000 items, lower-cased and trimmed; values already there are ignored. Every item must fit the list's type (domain name, one-label tld, email address), else 400 and nothing is added.",
  input: ListItemsChangeInputSchema,
  output: AgentListSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/lists/:list_id/items' },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.addItems(principal, input),
});

export const removeListItems = defineOperation({
  name: 'remove_list_items',
  title: 'Remove items from a list',
  description: 'Removes up to 1,000 items (JSON body on DELETE); values not in the list are ignored.',
  input: ListItemsChangeInputSchema,
  output: AgentListSchema,
  hints: { readOnly: false, destructive: true, idempotent: true },
  http: { method: 'DELETE', path: '/lists/:list_id/items', body: true },
  tool: false,
  run: (core, input, { principal }) => core.admin.lists.removeItems(principal, input),
});
