/**
 * The outbound stage's pure decision: the order of refusals (rule, quota, size), limits that are absent or -1,
 * the quota left, attachment verdicts, and the recipients a rule refuses on their own.
 */
import { describe, expect, it } from 'vitest';
import { compileRules, type RuleDefinition } from '../../../src/admin/rule-engine.js';
import type { SendCandidate, SendPolicy } from '../../../src/outbound/contracts.js';
import { decideSend, nextUtcMidnight, refusedRecipients, utcDayOf } from '../../../src/outbound/send-policy.js';

const rule = (id: string, conditions: RuleDefinition['conditions'], priority = 10): RuleDefinition => ({
  id,
  priority,
  enabled: true,
  trigger: 'outbound',
  matchOperator: 'all',
  conditions,
  actions: [{ type: 'block' }],
  createdAt: 1,
});
const candidate = (fields: Partial<SendCandidate> = {}): SendCandidate => ({
  from: 'agent@ours.example',
  recipients: ['a@x.example'],
  reply: false,
  sizeBytes: 1000,
  attachments: [],
  ...fields,
});
const policy = (fields: Partial<SendPolicy> = {}): SendPolicy => ({
  rules: [],
  lists: new Map(),
  limits: undefined,
  ...fields,
});

describe('decideSend', () => {
  it('lets a send through when nothing applies, with open verdicts', () => {
    const decision = decideSend(policy(), candidate(), 0);
    expect(decision.refusal).toBeUndefined();
    expect(decision.verdicts).toMatchObject({
      size: { bytes: 1000, limit: null, ok: true },
      quota: { sent_today: 0, limit: null, left_today: null, ok: true },
    });
    expect(decision.input).toMatchObject({
      from_domain: 'ours.example',
      recipient_domains: ['x.example'],
      outbound_type: 'compose',
    });
  });

  it.each([
    [
      'rule before quota and size',
      { rules: [rule('r1', [{ field: 'recipient.domain', operator: 'is', value: 'x.example' }])] },
      5,
      'rule',
    ],
    ['quota before size', {}, 5, 'quota'],
    ['size last', {}, 4, 'size'],
    ['nothing under the limits', {}, 1, undefined],
  ] as const)('refuses in order: %s', (_name, fields, sentToday, kind) => {
    const limits = { limit_count_daily_email_sent: 5, limit_size_total_mime: kind === undefined ? 5000 : 500 };
    const decision = decideSend(
      policy({ ...fields, rules: compileRules('rules' in fields ? fields.rules : [], 'outbound'), limits }),
      candidate(),
      sentToday,
    );
    expect(decision.refusal?.kind).toBe(kind);
  });

  it('treats -1 and absent limits as none, and leaves the quota out when scheduling', () => {
    const limits = { limit_count_daily_email_sent: -1, limit_size_total_mime: -1 };
    expect(decideSend(policy({ limits }), candidate({ sizeBytes: 10 ** 9 }), 10 ** 6).refusal).toBeUndefined();
    const quota = { limit_count_daily_email_sent: 0 };
    expect(decideSend(policy({ limits: quota }), candidate(), 0).refusal?.kind).toBe('quota');
    expect(decideSend(policy({ limits: quota }), candidate(), undefined).refusal).toBeUndefined();
    expect(decideSend(policy({ limits: { limit_count_daily_email_sent: 3 } }), candidate(), 1).verdicts.quota).toEqual({
      sent_today: 1,
      limit: 3,
      left_today: 2,
      ok: true,
    });
  });

  it('tells replies from new messages', () => {
    const rules = compileRules(
      [rule('replies', [{ field: 'outbound.type', operator: 'is', value: 'reply' }])],
      'outbound',
    );
    expect(decideSend(policy({ rules }), candidate({ reply: true }), 0).refusal).toEqual({
      kind: 'rule',
      ruleId: 'replies',
    });
    expect(decideSend(policy({ rules }), candidate({ reply: false }), 0).refusal).toBeUndefined();
  });

  it('reports attachments outside the limits without refusing the send', () => {
    const limits = {
      limit_attachment_count_limit: 2,
      limit_attachment_size_limit: 100,
      limit_attachment_allowed_types: ['image/*', 'application/pdf'],
    };
    const files = [
      { filename: 'a.png', contentType: 'image/png', size: 50 },
      { filename: 'b.exe', contentType: 'application/x-msdownload', size: 50 },
      { filename: 'c.pdf', contentType: 'application/pdf', size: 50 },
      { filename: 'big.png', contentType: 'image/png', size: 500 },
    ];
    const decision = decideSend(policy({ limits }), candidate({ attachments: files }), 0);
    expect(decision.refusal).toBeUndefined();
    expect(decision.verdicts.attachments.outside_limits.map((entry) => entry.filename)).toEqual([
      'b.exe',
      'c.pdf',
      'big.png',
    ]);
    expect(decision.verdicts.attachments).toMatchObject({
      count: 4,
      total_bytes: 650,
      count_limit: 2,
      size_limit: 100,
    });
  });

  it('names the recipients a rule refuses on their own', () => {
    const rules = compileRules(
      [rule('competitors', [{ field: 'recipient.domain', operator: 'is', value: 'rival.example' }])],
      'outbound',
    );
    const refused = refusedRecipients(
      policy({ rules }),
      candidate({ recipients: ['ok@x.example', 'Boss@Rival.example'] }),
    );
    expect([...refused]).toEqual([['boss@rival.example', 'competitors']]);
  });
});

describe('UTC days', () => {
  it('counts days since the epoch and resets at the next UTC midnight', () => {
    expect(utcDayOf(new Date('1970-01-02T00:00:00Z'))).toBe(1);
    expect(utcDayOf(new Date('2026-03-30T23:59:59Z'))).toBe(utcDayOf(new Date('2026-03-30T00:00:00Z')));
    expect(nextUtcMidnight(new Date('2026-03-30T22:00:00Z')).toISOString()).toBe('2026-03-31T00:00:00.000Z');
  });
});
