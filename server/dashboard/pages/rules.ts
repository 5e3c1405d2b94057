/**
 * @module server/dashboard/pages/rules
 * Policies, rules, lists and rule evaluations: the three lists (each paged on its own), a form that creates a rule
 * of one condition and one action (the API takes more; the form covers the common case), a rule with the
 * evaluations that matched it in a mailbox, and a list with its items.
 */
import { html } from 'hono/html';
import { RULE_ACTIONS, RULE_FIELDS, RULE_OPERATORS } from '../../../src/schemas/admin.js';
import type { AgentList, AgentListItem, Policy, Rule, RuleEvaluation, Workspace } from '../../../src/schemas/admin.js';
import type { Grant } from '../../../src/schemas/grants.js';
import type { DashboardRequest } from '../contracts.js';
import {
  afterPost,
  csrfField,
  facts,
  field,
  guarded,
  hrefOf,
  pager,
  pageToken,
  runOne,
  runPage,
  seg,
  table,
  timeOf,
  type MorePage,
} from './kit.js';

const PER_PAGE = 25;

const rulesHref = (request: DashboardRequest) => `${request.base}/rules`;
const ruleHref = (request: DashboardRequest, id: string) => `${rulesHref(request)}/${seg(id)}`;
const listHref = (request: DashboardRequest, id: string) => `${request.base}/lists/${seg(id)}`;

/** A `<select>` of `values`, the first chosen. */
const choice = (id: string, name: string, label: string, values: readonly string[]) =>
  html`<p>
    <label for="${id}">${label}</label>
    <select id="${id}" name="${name}">
      ${values.map((value) => html`<option value="${value}">${value}</option>`)}
    </select>
  </p>`;

/** The form that creates a rule of one condition and one action, and applies it in a workspace when one is chosen. */
function ruleForm(request: DashboardRequest, workspaces: readonly Workspace[]) {
  return html`<form method="post" action="${rulesHref(request)}" class="create">
    <h2>Create a rule</h2>
    ${csrfField(request)}
    <p>
      <label for="rule-name">Name</label>
      <input id="rule-name" name="name" required maxlength="256" />
    </p>
    ${choice('rule-trigger', 'trigger', 'Trigger', ['inbound', 'outbound'])}
    ${choice('rule-field', 'field', 'Condition field', RULE_FIELDS)}
    ${choice('rule-operator', 'operator', 'Operator', RULE_OPERATORS)}
    <p>
      <label for="rule-value">Value (for in_list, list ids separated by commas; for trust.injection, 0 to 1)</label>
      <input id="rule-value" name="value" required maxlength="320" />
    </p>
    ${choice('rule-action', 'action', 'Action', RULE_ACTIONS)}
    <p>
      <label for="rule-action-value">Folder (assign_to_folder only)</label>
      <input id="rule-action-value" name="action_value" maxlength="256" />
    </p>
    <p>
      <label for="rule-priority">Priority (0 to 1000, lower runs first)</label>
      <input id="rule-priority" name="priority" type="number" min="0" max="1000" value="10" />
    </p>
    <p>
      <label for="rule-workspace">Apply it to the mailboxes of (a rule applies only where a workspace names it)</label>
      <select id="rule-workspace" name="workspace_id">
        ${workspaces.map(
          (workspace) =>
            html`<option value="${workspace.workspace_id}">
              ${workspace.default ? `${workspace.name} (the default workspace)` : workspace.name}
            </option>`,
        )}
        <option value="">no workspace yet</option>
      </select>
    </p>
    <button type="submit">Create</button>
  </form>`;
}

/** The condition's value as the API takes it: list ids for in_list, a number for trust.injection. */
function conditionValue(fieldName: string, operator: string, value: string): unknown {
  if (operator === 'in_list') return value.split(/[\s,]+/).filter(Boolean);
  if (fieldName === 'trust.injection' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return value;
}

/** What a rule does, in a few words. */
const ruleSummary = (rule: Rule) =>
  `${rule.match.operator} of ${rule.match.conditions.map((c) => `${c.field} ${c.operator} ${Array.isArray(c.value) ? c.value.join('|') : String(c.value)}`).join(', ') || '(every message)'} → ${rule.actions.map((a) => (a.value ? `${a.type} ${a.value}` : a.type)).join(', ')}`;

/** `/rules`: policies, rules and lists, and the rule form. */
const rules: MorePage = {
  path: '/rules',
  nav: { label: 'Rules', order: 60 },
  async get(request) {
    const token = (param: string) => (pageToken(request, param) ? { page_token: pageToken(request, param) } : {});
    const [policies, ruleList, lists, workspaces] = await Promise.all([
      runPage<Policy>(request, 'list_policies', { limit: PER_PAGE, ...token('policies_page') }),
      runPage<Rule>(request, 'list_rules', { limit: PER_PAGE, ...token('rules_page') }),
      runPage<AgentList>(request, 'list_lists', { limit: PER_PAGE, ...token('lists_page') }),
      runOne<{ data: Workspace[] }>(request, 'list_workspaces', {}),
    ]);
    const here = rulesHref(request);
    const ruleRows = ruleList.data.map(
      (rule) =>
        html`<tr>
          <td><a href="${ruleHref(request, rule.id)}">${rule.name}</a></td>
          <td>${rule.trigger}</td>
          <td>${rule.priority}</td>
          <td>${rule.enabled ? 'yes' : 'no'}</td>
          <td>${ruleSummary(rule)}</td>
          <td>${appliedIn(rule.id, workspaces.data)}</td>
        </tr>`,
    );
    const policyRows = policies.data.map(
      (policy) =>
        html`<tr>
          <td>${policy.name}</td>
          <td><code>${policy.id}</code></td>
          <td>${policy.oversight_mode ?? 'autonomous'}</td>
          <td>${policy.rules.length}</td>
          <td>${timeOf(policy.updated_at)}</td>
        </tr>`,
    );
    const listRows = lists.data.map(
      (list) =>
        html`<tr>
          <td><a href="${listHref(request, list.id)}">${list.name}</a></td>
          <td><code>${list.id}</code></td>
          <td>${list.type}</td>
          <td>${list.items_count}</td>
        </tr>`,
    );
    return {
      title: 'Policies, rules and lists',
      body: html`<h2>Rules</h2>
        ${table(
          'Rules',
          ['Name', 'Trigger', 'Priority', 'Enabled', 'What it does', 'Applied in'],
          ruleRows,
          'No rules yet.',
        )}
        ${pager(request, here, ruleList.next_cursor, 'rules_page')} ${ruleForm(request, workspaces.data)}
        <h2>Policies</h2>
        ${table('Policies', ['Name', 'Id', 'Oversight', 'Legacy rules', 'Updated'], policyRows, 'No policies.')}
        ${pager(request, here, policies.next_cursor, 'policies_page')}
        <h2>Lists</h2>
        ${table('Lists', ['Name', 'Id', 'Type', 'Items'], listRows, 'No lists.')}
        ${pager(request, here, lists.next_cursor, 'lists_page')}`,
    };
  },
  async post(request) {
    const fieldName = field(request, 'field') ?? '';
    const operator = field(request, 'operator') ?? '';
    const action = field(request, 'action') ?? '';
    const actionValue = field(request, 'action_value');
    const priority = Number(field(request, 'priority') ?? '10');
    const workspaceId = field(request, 'workspace_id');
    return afterPost(rulesHref(request), workspaceId ? 'Rule created and applied.' : 'Rule created.', async () => {
      // One operation: the rule is made and added to the workspace's rules in one transaction.
      await request.run('create_rule', {
        name: field(request, 'name') ?? '',
        trigger: field(request, 'trigger') ?? 'inbound',
        priority: Number.isInteger(priority) ? priority : 10,
        match: {
          operator: 'all',
          conditions: [
            { field: fieldName, operator, value: conditionValue(fieldName, operator, field(request, 'value') ?? '') },
          ],
        },
        actions: [{ type: action, ...(actionValue ? { value: actionValue } : {}) }],
        ...(workspaceId ? { workspace_ids: [workspaceId] } : {}),
      });
    });
  },
};

/** The names of the workspaces whose rules include `ruleId`; a rule no workspace names applies nowhere. */
function appliedIn(ruleId: string, workspaces: readonly Workspace[]): string {
  const names = workspaces
    .filter((workspace) => workspace.rule_ids.includes(ruleId))
    .map((workspace) => workspace.name);
  return names.join(', ') || 'nowhere yet';
}

/** An evaluation as a row: when, where, what it saw, what was applied. */
function evaluationRow(evaluation: RuleEvaluation, matched: boolean) {
  const input = evaluation.evaluation_input;
  const applied = Object.entries(evaluation.applied_actions)
    .filter(([, value]) => value !== false && value !== undefined)
    .map(([name, value]) => (Array.isArray(value) ? `${name}: ${value.join(', ')}` : name));
  return html`<tr class="${matched ? 'matched' : ''}">
    <td>${timeOf(evaluation.evaluated_at)}</td>
    <td>${evaluation.evaluation_stage}</td>
    <td>${input.from_address ?? ''}</td>
    <td>${(input.recipient_addresses ?? []).join(', ')}</td>
    <td>${applied.join('; ') || 'nothing'}</td>
    <td>${matched ? 'matched' : ''}</td>
  </tr>`;
}

/** `/rules/:rule_id`: one rule and the evaluations of a mailbox that matched it (all of them with `all=1`). */
const rule: MorePage = {
  path: '/rules/:rule_id',
  async get(request) {
    const found = await runOne<Rule>(request, 'get_rule', { rule_id: request.params.rule_id! });
    const grants = await runOne<{ data: Grant[] }>(request, 'list_grants', { limit: 100 });
    const workspaces = await runOne<{ data: Workspace[] }>(request, 'list_workspaces', {});
    const grantId = request.query.get('grant_id') ?? grants.data[0]?.id;
    const all = request.query.get('all') === '1';
    const here = ruleHref(request, found.id);
    let evaluations = html`<p class="empty">No mailbox to show evaluations of.</p>`;
    if (grantId) {
      const page = await runPage<RuleEvaluation>(request, 'list_rule_evaluations', {
        grant_id: grantId,
        limit: 100,
        ...(all ? {} : { rule_id: found.id }),
        ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
      });
      const rows = page.data.map((evaluation) =>
        evaluationRow(evaluation, evaluation.matched_rule_ids.includes(found.id)),
      );
      evaluations = html`${table(
        all ? 'Evaluations of this mailbox' : 'Evaluations that matched this rule',
        ['When', 'Stage', 'From', 'Recipients', 'Applied', ''],
        rows,
        all ? 'No evaluation in this mailbox yet.' : 'No evaluation of this mailbox matched this rule.',
      )}
      ${pager(request, here, page.next_cursor)}`;
    }
    const pick = html`<form method="get" action="${here}" class="inline">
      <label for="evaluations-grant">Mailbox</label>
      <select id="evaluations-grant" name="grant_id">
        ${grants.data.map(
          (grant) =>
            html`<option value="${grant.id}" ${grant.id === grantId ? html`selected` : html``}>${grant.email}</option>`,
        )}
      </select>
      <label class="check"
        ><input type="checkbox" name="all" value="1" ${all ? html`checked` : html``} /> every evaluation</label
      >
      <button type="submit">Show</button>
    </form>`;
    return {
      title: `Rule · ${found.name}`,
      body: html`<p><a href="${rulesHref(request)}">All rules</a></p>
        ${facts([
          ['Description', found.description],
          ['Trigger', found.trigger],
          ['Priority', found.priority],
          ['Enabled', found.enabled ? 'yes' : 'no'],
          ['What it does', ruleSummary(found)],
          ['Applied in', appliedIn(found.id, workspaces.data)],
          ['Updated', timeOf(found.updated_at)],
        ])}
        <h2>Evaluations</h2>
        ${pick} ${evaluations}`,
    };
  },
};

/** `/lists/:list_id`: a list and its items, paged. */
const list: MorePage = {
  path: '/lists/:list_id',
  async get(request) {
    const found = await runOne<AgentList>(request, 'get_list', { list_id: request.params.list_id! });
    const items = await runPage<AgentListItem>(request, 'list_list_items', {
      list_id: found.id,
      limit: 100,
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = items.data.map(
      (item) =>
        html`<tr>
          <td>${item.value}</td>
          <td>${timeOf(item.created_at)}</td>
        </tr>`,
    );
    return {
      title: `List · ${found.name}`,
      body: html`<p><a href="${hrefOf(rulesHref(request))}">Policies, rules and lists</a></p>
        ${facts([
          ['Type', found.type],
          ['Items', found.items_count],
          ['Description', found.description],
        ])}
        ${table('Items', ['Value', 'Added'], rows, 'The list is empty.')}
        ${pager(request, listHref(request, found.id), items.next_cursor)}`,
    };
  },
};

/** Rules and lists. */
export const RULE_PAGES: readonly MorePage[] = [rules, rule, list].map(guarded);
