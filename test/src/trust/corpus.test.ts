import { describe, expect, it } from 'vitest';
import { TrustSchema } from '../../../src/schemas/trust.js';
import { assessTrust } from '../../../src/trust/index.js';
import { cases, inputOf } from './corpus.js';

/** A verdict object's reason, or false when not detected: how cases.json writes expectations. */
function verdictOf(value: { detected: boolean; reason?: string | undefined }): false | string {
  return value.detected ? (value.reason ?? 'detected') : false;
}

describe('the trust corpus (test/fixtures/agent/trust)', () => {
  it.each(cases)('$file ($kind)', async (item) => {
    const trust = assessTrust(await inputOf(item));
    expect(TrustSchema.parse(trust)).toEqual(trust);
    const { expect: wanted } = item;
    expect({
      spf: trust.spf,
      dkim: trust.dkim,
      dmarc: trust.dmarc,
      display_name_spoof: verdictOf(trust.display_name_spoof),
      lookalike_domain: verdictOf(trust.lookalike_domain),
      forged_thread: verdictOf(trust.forged_thread),
      link_mismatch: trust.link_mismatch.count,
    }).toEqual({
      spf: wanted.spf,
      dkim: wanted.dkim,
      dmarc: wanted.dmarc,
      display_name_spoof: wanted.display_name_spoof,
      lookalike_domain: wanted.lookalike_domain,
      forged_thread: wanted.forged_thread,
      link_mismatch: wanted.link_mismatch,
    });
    if (item.kind === 'benign') expect(trust.injection.score, JSON.stringify(trust.injection)).toBeLessThan(0.3);
    if (item.kind === 'injection') expect(trust.injection.score, JSON.stringify(trust.injection)).toBeGreaterThan(0.7);
    const codes = trust.injection.reasons.map((reason) => reason.code);
    for (const code of wanted.reasons ?? []) expect(codes).toContain(code);
    expect(trust.hidden_text_removed).toBe(item.hidden_text?.length ?? 0);
  });
});
