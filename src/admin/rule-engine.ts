/**
 * @module admin/rule-engine
 * Rules as the mail stages run them: compiled once per change, then evaluated against an input without I/O.
 * Pure: no database, no clock. The loader (./enforcement.ts) compiles what a grant's workspace and policy name.
 *
 * Semantics (the wire reference §15.3; where it is silent, what we chose):
 * - Enabled rules of the stage's trigger run in `priority` order (lower first), then oldest first.
 * - A rule matches when all (`match.operator: "all"`, the default) or any of its conditions hold; a rule without
 *   conditions matches everything.
 * - `recipient.*` fields have one value per recipient. `is`, `contains` and `in_list` hold when any recipient
 *   satisfies them; `is_not` holds when no recipient equals the value.
 * - Comparisons ignore case. `contains` is a substring test.
 * - `in_list` holds when the value is in any of the named lists. What is compared follows the list's type: an
 *   `address` list the whole address (address fields only); a `domain` list the domain or any parent domain of it
 *   (`mail.example.com` is in a list holding `example.com`); a `tld` list the last label.
 * - `trust.injection` compares the message's injection score with `greater_than` / `less_than`; `trust.dmarc` its
 *   DMARC verdict as a string. Ingest computes the trust block only for grants with such a rule: without it, the
 *   fields are absent and those conditions do not hold (`is_not` does).
 * - `message.automated` is `true` and the kind (`auto_reply`, `bounce`, `list`, …) for mail a machine wrote
 *   (src/mail/stages/automated.ts), `false` for the rest: `is true`, `is_not true`, `is bounce` all read it.
 * - Every matching rule's actions apply together. `block` is terminal: the first matching rule that blocks ends the
 *   evaluation, and the actions of later rules do not apply.
 */
import type { StoredAppliedActions, StoredRuleAction, StoredRuleCondition } from '../../storage/index.js';
import type { CompiledRule, EvaluationInput, ListSet, RuleOutcome } from './contracts.js';

export type { CompiledRule, EvaluationInput, ListSet, RuleOutcome } from './contracts.js';

/** A rule as stored, the fields evaluation needs. */
export interface RuleDefinition {
  id: string;
  priority: number;
  enabled: boolean;
  trigger: 'inbound' | 'outbound';
  matchOperator: 'all' | 'any';
  conditions: StoredRuleCondition[];
  actions: StoredRuleAction[];
  createdAt: number;
}

/** The domain of an address (after the last `@`), lower-cased; empty when there is none. */
export function domainOfAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0
    ? ''
    : address
        .slice(at + 1)
        .trim()
        .toLowerCase();
}

/** The last label of a domain. */
export function tldOfDomain(domain: string): string {
  const dot = domain.lastIndexOf('.');
  return dot < 0 ? domain : domain.slice(dot + 1);
}

/** The evaluation input of a sender and recipients (addresses in any case; domains and TLDs derived). */
export function evaluationInputOf(fields: {
  from?: string | undefined;
  recipients?: readonly string[];
  outboundType?: 'compose' | 'reply' | undefined;
}): EvaluationInput {
  const input: EvaluationInput = {};
  if (fields.from !== undefined && fields.from !== '') {
    const from = fields.from.trim().toLowerCase();
    const domain = domainOfAddress(from);
    input.from_address = from;
    input.from_domain = domain;
    input.from_tld = tldOfDomain(domain);
  }
  if (fields.recipients) {
    const addresses = [...new Set(fields.recipients.map((recipient) => recipient.trim().toLowerCase()))];
    const domains = [...new Set(addresses.map(domainOfAddress))];
    input.recipient_addresses = addresses;
    input.recipient_domains = domains;
    input.recipient_tlds = [...new Set(domains.map(tldOfDomain))];
  }
  if (fields.outboundType) input.outbound_type = fields.outboundType;
  return input;
}

/** The values of a field in an input (none when the input lacks it). */
function valuesOf(input: EvaluationInput, field: StoredRuleCondition['field']): readonly string[] {
  switch (field) {
    case 'from.address':
      return input.from_address !== undefined ? [input.from_address] : [];
    case 'from.domain':
      return input.from_domain !== undefined ? [input.from_domain] : [];
    case 'from.tld':
      return input.from_tld !== undefined ? [input.from_tld] : [];
    case 'recipient.address':
      return input.recipient_addresses ?? [];
    case 'recipient.domain':
      return input.recipient_domains ?? [];
    case 'recipient.tld':
      return input.recipient_tlds ?? [];
    case 'outbound.type':
      return input.outbound_type !== undefined ? [input.outbound_type] : [];
    case 'trust.dmarc':
      return input.trust_dmarc !== undefined ? [input.trust_dmarc] : [];
    case 'trust.injection':
      return input.trust_injection !== undefined ? [String(input.trust_injection)] : [];
    case 'message.automated':
      return input.automated !== undefined ? ['true', input.automated] : ['false'];
  }
}

/** Whether a rule's condition reads the message's `trust` block (then ingest computes it: see needsTrust). */
function isTrustCondition(condition: StoredRuleCondition): boolean {
  return condition.field === 'trust.injection' || condition.field === 'trust.dmarc';
}

/** Whether `value` (of `field`) is in a list of the given type. */
function inList(list: ListSet, field: StoredRuleCondition['field'], value: string): boolean {
  const isAddressField = field.endsWith('.address');
  switch (list.type) {
    case 'address':
      return isAddressField && list.items.has(value);
    case 'tld':
      return list.items.has(tldOfDomain(isAddressField ? domainOfAddress(value) : value));
    case 'domain': {
      let domain = isAddressField ? domainOfAddress(value) : value;
      // The domain, then each parent: mail.example.com, example.com, com.
      for (;;) {
        if (list.items.has(domain)) return true;
        const dot = domain.indexOf('.');
        if (dot < 0) return false;
        domain = domain.slice(dot + 1);
      }
    }
  }
}

/** One condition as a predicate over an input. */
function compileCondition(
  condition: StoredRuleCondition,
): (input: EvaluationInput, lists: ReadonlyMap<string, ListSet>) => boolean {
  const { field } = condition;
  if (condition.operator === 'greater_than' || condition.operator === 'less_than') {
    const threshold = Number(condition.value);
    const greater = condition.operator === 'greater_than';
    // Only trust.injection is numeric; a message without a score (nothing computed) matches neither.
    return (input) => {
      const score = field === 'trust.injection' ? input.trust_injection : undefined;
      if (score === undefined || !Number.isFinite(threshold)) return false;
      return greater ? score > threshold : score < threshold;
    };
  }
  if (condition.operator === 'in_list') {
    const listIds = Array.isArray(condition.value) ? condition.value : [String(condition.value)];
    return (input, lists) => {
      const values = valuesOf(input, field);
      for (const listId of listIds) {
        const list = lists.get(listId);
        if (!list) continue;
        for (const value of values) if (inList(list, field, value)) return true;
      }
      return false;
    };
  }
  const expected = (Array.isArray(condition.value) ? (condition.value[0] ?? '') : String(condition.value))
    .trim()
    .toLowerCase();
  switch (condition.operator) {
    case 'is':
      return (input) => valuesOf(input, field).includes(expected);
    case 'is_not':
      return (input) => !valuesOf(input, field).includes(expected);
    case 'contains':
      return (input) => valuesOf(input, field).some((value) => value.includes(expected));
  }
}

/** Compiles the enabled rules of one trigger, in evaluation order. */
export function compileRules(rules: readonly RuleDefinition[], trigger: 'inbound' | 'outbound'): CompiledRule[] {
  return rules
    .filter((rule) => rule.enabled && rule.trigger === trigger)
    .sort((a, b) => a.priority - b.priority || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((rule) => {
      const predicates = rule.conditions.map(compileCondition);
      const test =
        predicates.length === 0
          ? () => true
          : rule.matchOperator === 'any'
            ? (input: EvaluationInput, lists: ReadonlyMap<string, ListSet>) =>
                predicates.some((predicate) => predicate(input, lists))
            : (input: EvaluationInput, lists: ReadonlyMap<string, ListSet>) =>
                predicates.every((predicate) => predicate(input, lists));
      return { id: rule.id, test, actions: rule.actions, needsTrust: rule.conditions.some(isTrustCondition) };
    });
}

/** Runs compiled rules over an input; see the module comment for the semantics. */
export function evaluateRules(
  rules: readonly CompiledRule[],
  input: EvaluationInput,
  lists: ReadonlyMap<string, ListSet>,
): RuleOutcome {
  const outcome: RuleOutcome = {
    matchedRuleIds: [],
    block: false,
    markAsSpam: false,
    markAsRead: false,
    markAsStarred: false,
    archive: false,
    trash: false,
    folders: [],
  };
  for (const rule of rules) {
    if (!rule.test(input, lists)) continue;
    outcome.matchedRuleIds.push(rule.id);
    for (const action of rule.actions) {
      switch (action.type) {
        case 'block':
          outcome.block = true;
          break;
        case 'mark_as_spam':
          outcome.markAsSpam = true;
          break;
        case 'mark_as_read':
          outcome.markAsRead = true;
          break;
        case 'mark_as_starred':
          outcome.markAsStarred = true;
          break;
        case 'archive':
          outcome.archive = true;
          break;
        case 'trash':
          outcome.trash = true;
          break;
        case 'assign_to_folder':
          if (action.value && !outcome.folders.includes(action.value)) outcome.folders.push(action.value);
          break;
      }
    }
    if (outcome.block) break;
  }
  return outcome;
}

/** The wire's `applied_actions` of an outcome: only the keys that happened (folder ids resolved by the caller). */
export function appliedActionsOf(outcome: RuleOutcome, folderIds: readonly string[] = []): StoredAppliedActions {
  const applied: StoredAppliedActions = {};
  if (outcome.block) applied.blocked = true;
  if (outcome.markAsSpam) applied.marked_as_spam = true;
  if (outcome.markAsRead) applied.marked_as_read = true;
  if (outcome.markAsStarred) applied.marked_starred = true;
  if (outcome.archive) applied.archived = true;
  if (outcome.trash) applied.trashed = true;
  if (folderIds.length > 0) applied.folder_ids = [...folderIds];
  return applied;
}
