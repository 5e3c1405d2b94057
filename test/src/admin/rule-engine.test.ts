/**
 * The rule engine (src/admin/rule-engine.ts), pure: operators, all/any, recipient semantics, in_list by list type
 * (parent domains included), priority order, and block as the last rule that applies.
 */
import { describe, expect, it } from 'vitest';
import {
  appliedActionsOf,
  compileRules,
  evaluateRules,
  evaluationInputOf,
  type ListSet,
  type RuleDefinition,
} from '../../../src/admin/rule-engine.js';
import type { StoredRuleAction, StoredRuleCondition } from '../../../storage/index.js';

let sequence = 0;
function rule(
  conditions: StoredRuleCondition[],
  actions: StoredRuleAction[],
  fields: Partial<RuleDefinition> = {},
): RuleDefinition {
  sequence++;
  return {
    id: `rule_${sequence}`,
    priority: 10,
    enabled: true,
    trigger: 'inbound',
    matchOperator: 'all',
    conditions,
    actions,
    createdAt: sequence,
    ...fields,
  };
}

const lists = new Map<string, ListSet>([
  ['domains', { id: 'domains', type: 'domain', items: new Set(['example.com', 'spam.test']) }],
  ['tlds', { id: 'tlds', type: 'tld', items: new Set(['xyz', 'ru']) }],
  ['addresses', { id: 'addresses', type: 'address', items: new Set(['boss@corp.example']) }],
]);

/** Whether one rule of one condition matches a sender and recipients. */
function matches(
  condition: StoredRuleCondition,
  fields: { from?: string; recipients?: string[]; outboundType?: 'compose' | 'reply' },
  trigger: 'inbound' | 'outbound' = 'inbound',
): boolean {
  const compiled = compileRules([rule([condition], [{ type: 'mark_as_read' }], { trigger })], trigger);
  return evaluateRules(compiled, evaluationInputOf(fields), lists).matchedRuleIds.length === 1;
}

describe('rule engine', () => {
  it('derives the evaluation input, lower-cased, with domains and TLDs', () => {
    expect(
      evaluationInputOf({ from: ' Alice@Mail.Example.COM ', recipients: ['Bob@A.test', 'bob@a.test', 'carol@b.org'] }),
    ).toEqual({
      from_address: 'alice@mail.example.com',
      from_domain: 'mail.example.com',
      from_tld: 'com',
      recipient_addresses: ['bob@a.test', 'carol@b.org'],
      recipient_domains: ['a.test', 'b.org'],
      recipient_tlds: ['test', 'org'],
    });
    expect(evaluationInputOf({ from: '' })).toEqual({});
  });

  it.each([
    ['is', 'from.address', 'ALICE@example.com', 'alice@example.com', true],
    ['is', 'from.address', 'bob@example.com', 'alice@example.com', false],
    ['is_not', 'from.domain', 'example.com', 'alice@example.com', false],
    ['is_not', 'from.domain', 'other.com', 'alice@example.com', true],
    ['contains', 'from.address', 'LIC', 'alice@example.com', true],
    ['contains', 'from.address', 'bob', 'alice@example.com', false],
    ['is', 'from.tld', 'com', 'alice@example.com', true],
    ['is', 'from.tld', 'org', 'alice@example.com', false],
  ] as const)('%s on %s %s against %s → %s', (operator, field, value, from, expected) => {
    expect(matches({ field, operator, value }, { from })).toBe(expected);
  });

  it('holds a recipient condition when any recipient satisfies it, and is_not only when none equals the value', () => {
    const recipients = ['a@one.test', 'b@two.test'];
    expect(matches({ field: 'recipient.address', operator: 'is', value: 'b@two.test' }, { recipients })).toBe(true);
    expect(matches({ field: 'recipient.domain', operator: 'contains', value: 'one' }, { recipients })).toBe(true);
    expect(matches({ field: 'recipient.domain', operator: 'is_not', value: 'one.test' }, { recipients })).toBe(false);
    expect(matches({ field: 'recipient.domain', operator: 'is_not', value: 'three.test' }, { recipients })).toBe(true);
    expect(matches({ field: 'recipient.tld', operator: 'is', value: 'test' }, { recipients })).toBe(true);
    // A field the input lacks: nothing satisfies `is`, and `is_not` holds.
    expect(matches({ field: 'recipient.address', operator: 'is', value: 'a@one.test' }, { from: 'x@y.test' })).toBe(
      false,
    );
    expect(matches({ field: 'from.address', operator: 'is_not', value: 'x@y.test' }, { recipients })).toBe(true);
  });

  it('compares in_list by the list type: domains with their parents, TLDs by the last label, addresses whole', () => {
    const domains = (from: string) =>
      matches({ field: 'from.domain', operator: 'in_list', value: ['domains'] }, { from });
    expect(domains('a@example.com')).toBe(true);
    expect(domains('a@mail.example.com')).toBe(true);
    expect(domains('a@deep.mail.spam.test')).toBe(true);
    expect(domains('a@notexample.com')).toBe(false);
    expect(domains('a@example.com.evil.org')).toBe(false);
    // An address field against a domain list compares its domain.
    expect(
      matches({ field: 'from.address', operator: 'in_list', value: ['domains'] }, { from: 'x@sub.example.com' }),
    ).toBe(true);

    expect(matches({ field: 'from.tld', operator: 'in_list', value: ['tlds'] }, { from: 'a@shop.xyz' })).toBe(true);
    expect(matches({ field: 'from.domain', operator: 'in_list', value: ['tlds'] }, { from: 'a@mail.ru' })).toBe(true);
    expect(matches({ field: 'from.address', operator: 'in_list', value: ['tlds'] }, { from: 'a@mail.com' })).toBe(
      false,
    );

    expect(
      matches({ field: 'from.address', operator: 'in_list', value: ['addresses'] }, { from: 'Boss@Corp.Example' }),
    ).toBe(true);
    expect(
      matches({ field: 'from.address', operator: 'in_list', value: ['addresses'] }, { from: 'other@corp.example' }),
    ).toBe(false);
    // An address list never matches a domain field.
    expect(
      matches({ field: 'from.domain', operator: 'in_list', value: ['addresses'] }, { from: 'boss@corp.example' }),
    ).toBe(false);

    // Several lists: any; a list that is unknown (deleted, another application's) matches nothing.
    expect(
      matches(
        { field: 'recipient.domain', operator: 'in_list', value: ['missing', 'domains'] },
        { recipients: ['z@example.com'] },
      ),
    ).toBe(true);
    expect(
      matches(
        { field: 'recipient.domain', operator: 'in_list', value: ['missing'] },
        { recipients: ['z@example.com'] },
      ),
    ).toBe(false);
    expect(
      matches(
        { field: 'recipient.domain', operator: 'in_list', value: 'domains' },
        { recipients: ['q@a.test', 'z@spam.test'] },
      ),
    ).toBe(true);
  });

  it('combines conditions with all (default) or any; no conditions match everything', () => {
    const conditions: StoredRuleCondition[] = [
      { field: 'from.domain', operator: 'is', value: 'example.com' },
      { field: 'recipient.address', operator: 'is', value: 'me@here.test' },
    ];
    const input = evaluationInputOf({ from: 'a@example.com', recipients: ['you@here.test'] });
    expect(
      evaluateRules(compileRules([rule(conditions, [{ type: 'archive' }])], 'inbound'), input, lists).archive,
    ).toBe(false);
    expect(
      evaluateRules(
        compileRules([rule(conditions, [{ type: 'archive' }], { matchOperator: 'any' })], 'inbound'),
        input,
        lists,
      ).archive,
    ).toBe(true);
    expect(evaluateRules(compileRules([rule([], [{ type: 'archive' }])], 'inbound'), input, lists).archive).toBe(true);
  });

  it('runs enabled rules of the trigger in priority order, then oldest first, and stops at the first block', () => {
    const always: StoredRuleCondition[] = [];
    const late = rule(always, [{ type: 'assign_to_folder', value: 'Late' }], { priority: 50, createdAt: 1 });
    const blocker = rule(always, [{ type: 'block' }], { priority: 20 });
    const early = rule(always, [{ type: 'mark_as_starred' }, { type: 'assign_to_folder', value: 'Early' }], {
      priority: 5,
      createdAt: 9,
    });
    const sameFirst = rule(
      always,
      [
        { type: 'assign_to_folder', value: 'Early' },
        { type: 'assign_to_folder', value: 'Second' },
      ],
      { priority: 5, createdAt: 10 },
    );
    const disabled = rule(always, [{ type: 'trash' }], { priority: 0, enabled: false });
    const outbound = rule(always, [{ type: 'block' }], { priority: 0, trigger: 'outbound' });
    const compiled = compileRules([late, blocker, sameFirst, disabled, early, outbound], 'inbound');
    expect(compiled.map((entry) => entry.id)).toEqual([early.id, sameFirst.id, blocker.id, late.id]);

    const outcome = evaluateRules(compiled, evaluationInputOf({ from: 'a@b.test' }), lists);
    expect(outcome.matchedRuleIds).toEqual([early.id, sameFirst.id, blocker.id]);
    expect(outcome).toMatchObject({ block: true, markAsStarred: true, trash: false, folders: ['Early', 'Second'] });
    expect(appliedActionsOf(outcome, ['folder_1'])).toEqual({
      blocked: true,
      marked_starred: true,
      folder_ids: ['folder_1'],
    });

    // Without the blocker every matching rule's actions apply together.
    const open = evaluateRules(compileRules([late, early], 'inbound'), evaluationInputOf({ from: 'a@b.test' }), lists);
    expect(open).toMatchObject({ block: false, folders: ['Early', 'Late'], markAsStarred: true });
  });

  it('reads outbound.type on outbound rules', () => {
    expect(
      matches({ field: 'outbound.type', operator: 'is', value: 'reply' }, { outboundType: 'reply' }, 'outbound'),
    ).toBe(true);
    expect(
      matches({ field: 'outbound.type', operator: 'is', value: 'reply' }, { outboundType: 'compose' }, 'outbound'),
    ).toBe(false);
  });

  it('reports only the actions that happened', () => {
    const outcome = evaluateRules(
      compileRules(
        [rule([], [{ type: 'mark_as_spam' }, { type: 'mark_as_read' }, { type: 'trash' }, { type: 'archive' }])],
        'inbound',
      ),
      {},
      lists,
    );
    expect(appliedActionsOf(outcome)).toEqual({
      marked_as_spam: true,
      marked_as_read: true,
      trashed: true,
      archived: true,
    });
    expect(appliedActionsOf(evaluateRules([], {}, lists))).toEqual({});
  });
});
