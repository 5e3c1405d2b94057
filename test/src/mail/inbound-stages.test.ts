/**
 * The pure decisions of the inbound stages (src/mail/stages): smtp_rcpt, policy limits and attachments,
 * inbox_processing, and reading the From header's address.
 */
import { describe, expect, it } from 'vitest';
import type { GrantEnforcement } from '../../../src/admin/enforcement.js';
import { compileRules, type RuleDefinition } from '../../../src/admin/rule-engine.js';
import { decideInboxProcessing } from '../../../src/mail/stages/inbox-processing.js';
import { fromHeaderAddress, senderOf } from '../../../src/mail/stages/inbound-pipeline.js';
import { decideAttachments, limitRefusal, typeAllowed } from '../../../src/mail/stages/policy-limits.js';
import { decideSmtpRcpt } from '../../../src/mail/stages/smtp-rcpt.js';
import type { StoredPolicyLimits, StoredRuleAction, StoredRuleCondition } from '../../../storage/index.js';

function enforcementOf(
  rules: { conditions: StoredRuleCondition[]; actions: StoredRuleAction[] }[],
  limits?: StoredPolicyLimits,
): GrantEnforcement {
  const definitions: RuleDefinition[] = rules.map((rule, index) => ({
    id: `r${index}`,
    priority: index,
    enabled: true,
    trigger: 'inbound',
    matchOperator: 'all',
    createdAt: 0,
    ...rule,
  }));
  return {
    workspaceId: 'w',
    policy: limits ? { id: 'p', limits, spamDetection: {}, options: {}, oversight: {} } : undefined,
    inbound: compileRules(definitions, 'inbound'),
    outbound: [],
    lists: new Map(),
  };
}

describe('smtp_rcpt', () => {
  it('skips a grant with no rules and no policy', () => {
    expect(
      decideSmtpRcpt({ enforcement: enforcementOf([]), mailFrom: 'a@b.test', recipient: 'me@here.test' }),
    ).toMatchObject({ evaluated: false, refusal: undefined });
  });
  it('refuses on a block with 550 5.7.1, naming the rule, and checks the limits known at RCPT TO', () => {
    const blocking = enforcementOf([
      { conditions: [{ field: 'from.domain', operator: 'is', value: 'b.test' }], actions: [{ type: 'block' }] },
    ]);
    expect(
      decideSmtpRcpt({ enforcement: blocking, mailFrom: 'a@B.test', recipient: 'me@here.test' }).refusal,
    ).toMatchObject({ code: 550, enhanced: '5.7.1', message: expect.stringContaining('r0') });
    expect(decideSmtpRcpt({ enforcement: blocking, mailFrom: 'a@c.test', recipient: 'me@here.test' })).toMatchObject({
      evaluated: true,
      refusal: undefined,
    });
    const limited = enforcementOf([], { limit_count_daily_message_received: 3, limit_size_total_mime: 100 });
    expect(
      decideSmtpRcpt({ enforcement: limited, mailFrom: '', recipient: 'me@here.test', usage: { receivedToday: 3 } })
        .refusal,
    ).toMatchObject({ code: 452, enhanced: '4.2.2' });
    expect(
      decideSmtpRcpt({
        enforcement: limited,
        mailFrom: '',
        recipient: 'me@here.test',
        usage: { size: 101, receivedToday: 0 },
      }).refusal,
    ).toMatchObject({ code: 552, enhanced: '5.3.4' });
    expect(
      decideSmtpRcpt({ enforcement: limited, mailFrom: '', recipient: 'me@here.test', usage: { receivedToday: 2 } })
        .refusal,
    ).toBeUndefined();
  });
});

describe('policy limits', () => {
  it('refuses by size, daily count and storage; absent and negative limits do not apply', () => {
    expect(limitRefusal({ limit_size_total_mime: 10 }, { size: 11 })?.code).toBe(552);
    expect(limitRefusal({ limit_size_total_mime: 10 }, { size: 10 })).toBeUndefined();
    expect(
      limitRefusal(
        { limit_size_total_mime: -1, limit_count_daily_message_received: -1 },
        { size: 1e9, receivedToday: 1e9 },
      ),
    ).toBeUndefined();
    expect(limitRefusal({ limit_storage_total: 1000 }, { size: 300, storedBytes: 800 })).toMatchObject({
      code: 452,
      reason: 'limit_storage_total',
    });
    expect(limitRefusal({ limit_storage_total: 1000 }, { size: 200, storedBytes: 800 })).toBeUndefined();
    expect(limitRefusal({ limit_count_daily_message_received: 0 }, { receivedToday: 0 })).toMatchObject({ code: 452 });
    expect(limitRefusal(undefined, { size: 1e9 })).toBeUndefined();
  });

  it('matches allowed types exactly, by major type, or by file extension', () => {
    expect(typeAllowed(['application/pdf'], 'Application/PDF; name=x.pdf', 'x.pdf')).toBe(true);
    expect(typeAllowed(['image/*'], 'image/png', 'a.png')).toBe(true);
    expect(typeAllowed(['image/*'], 'imagex/png', 'a.png')).toBe(false);
    expect(typeAllowed(['.csv'], 'application/octet-stream', 'Data.CSV')).toBe(true);
    expect(typeAllowed(['csv'], 'text/plain', 'data.txt')).toBe(false);
  });

  it('removes attachments by type, then size, then beyond the count, naming each', () => {
    const attachments = [
      { filename: 'a.pdf', contentType: 'application/pdf', size: 100 },
      { filename: 'b.exe', contentType: 'application/x-msdownload', size: 10 },
      { filename: 'c.pdf', contentType: 'application/pdf', size: 5000 },
      { filename: 'd.pdf', contentType: 'application/pdf', size: 200 },
      { filename: 'e.pdf', contentType: 'application/pdf', size: 300 },
    ];
    const { keep, removed } = decideAttachments(
      {
        limit_attachment_allowed_types: ['application/pdf'],
        limit_attachment_size_limit: 1000,
        limit_attachment_count_limit: 2,
      },
      attachments,
    );
    expect(keep).toEqual([true, false, false, true, false]);
    expect(removed.map((entry) => [entry.filename, entry.reason.match(/\(([a-z_]+)\)/)![1]])).toEqual([
      ['b.exe', 'limit_attachment_allowed_types'],
      ['c.pdf', 'limit_attachment_size_limit'],
      ['e.pdf', 'limit_attachment_count_limit'],
    ]);
    expect(decideAttachments({}, attachments).removed).toEqual([]);
  });
});

describe('inbox_processing', () => {
  const decide = (actions: StoredRuleAction[], spam?: boolean) =>
    decideInboxProcessing({
      enforcement: enforcementOf([{ conditions: [], actions }]),
      from: 'a@b.test',
      recipient: 'me@here.test',
      spam: spam === undefined ? undefined : { spam, score: 0, threshold: 5, reasons: [] },
    });

  it('places a copy: trash, then junk, then named folders, then archive, else the inbox', () => {
    expect(decide([]).folders).toEqual([{ system: 'inbox' }]);
    expect(decide([{ type: 'archive' }]).folders).toEqual([{ system: 'archive' }]);
    expect(decide([{ type: 'archive' }, { type: 'assign_to_folder', value: 'Receipts' }]).folders).toEqual([
      { name: 'Receipts' },
    ]);
    expect(decide([{ type: 'assign_to_folder', value: 'Receipts' }, { type: 'mark_as_spam' }]).folders).toEqual([
      { system: 'junk' },
    ]);
    expect(decide([{ type: 'assign_to_folder', value: 'Receipts' }], true).folders).toEqual([{ system: 'junk' }]);
    expect(decide([{ type: 'trash' }, { type: 'mark_as_spam' }]).folders).toEqual([{ system: 'trash' }]);
  });

  it('marks read and starred, and drops on block', () => {
    expect(decide([{ type: 'mark_as_read' }, { type: 'mark_as_starred' }])).toMatchObject({
      unread: false,
      starred: true,
      drop: false,
      evaluated: true,
    });
    expect(decide([{ type: 'block' }])).toMatchObject({ drop: true });
  });

  it('evaluates nothing for a grant with no rules and no policy, but still follows a spam verdict', () => {
    const none = enforcementOf([]);
    expect(decideInboxProcessing({ enforcement: none, from: 'a@b.test', recipient: 'me@here.test' })).toMatchObject({
      evaluated: false,
      folders: [{ system: 'inbox' }],
      unread: true,
    });
    expect(
      decideInboxProcessing({
        enforcement: none,
        from: 'a@b.test',
        recipient: 'me@here.test',
        spam: { spam: true, score: 9, threshold: 5, reasons: [] },
      }).folders,
    ).toEqual([{ system: 'junk' }]);
  });
});

describe('the sender rules see', () => {
  it.each([
    ['Alice <Alice@Example.com>', 'alice@example.com'],
    ['alice@example.com', 'alice@example.com'],
    ['"Boss <boss@corp.example>" <attacker@evil.test>', 'attacker@evil.test'],
    ['(comment <x@y.z>) real@one.test', 'real@one.test'],
    ['first@one.test, second@two.test', 'first@one.test'],
    ['undisclosed-recipients:;', ''],
  ])('From: %s → %s', (header, expected) => {
    expect(fromHeaderAddress(header)).toBe(expected);
  });

  it('prefers the From header, else MAIL FROM', () => {
    expect(
      senderOf(Buffer.from('From: Ann <ann@a.test>\r\nSubject: x\r\n\r\nFrom: not@this.test\r\n'), 'bounce@b.test'),
    ).toBe('ann@a.test');
    expect(senderOf(Buffer.from('Subject: x\r\n\r\nbody'), 'Bounce@B.test')).toBe('bounce@b.test');
  });
});
