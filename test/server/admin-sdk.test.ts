/**
 * Administration through the nylas SDK: every method of its `workspaces` (7), `policies` (5), `rules` (6) and
 * `lists` (8) resources, 26 in all, against the real HTTP server, with results checked against what is stored.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { evaluationRow, recordEvaluations } from '../../src/admin/audit.js';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'admin.agentpost.localhost';

/** Every page of an SDK list call, followed through next_cursor. */
async function all<T>(iterable: AsyncIterable<{ data: T[] }>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of iterable) items.push(...page.data);
  return items;
}

describe('administration with the nylas SDK (26 methods)', () => {
  let service: TestService;
  const called = new Set<string>();
  const note = (name: string) => called.add(name);

  beforeAll(async () => {
    // Many calls a second to application-level routes: no rate limit here (test/server/rate-limits.test.ts covers it).
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    const domain = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Admin', domain_address: DOMAIN },
    });
    expect(domain.status).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
  });

  /** The workspace a grant is in, as the API returns it (the SDK's Grant type has no workspace_id). */
  const workspaceOf = async (grantId: string) =>
    (await request(service.url, 'GET', `/v3/grants/${grantId}`, { key: service.apiKey })).body.data
      .workspace_id as string;
  const newGrant = async (local: string) =>
    (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: `${local}@${DOMAIN}` } },
      })
    ).data;

  it('lists: create, find, update, list, items add/list/remove, destroy', async () => {
    const { nylas } = service;
    const created = await nylas.lists.create({
      requestBody: { name: 'Blocked domains', description: 'spam sources', type: 'domain' },
    });
    note('lists.create');
    expect(created.data).toMatchObject({
      name: 'Blocked domains',
      description: 'spam sources',
      type: 'domain',
      itemsCount: 0,
    });
    const listId = created.data.id;

    const found = await nylas.lists.find({ listId });
    note('lists.find');
    expect(found.data.id).toBe(listId);

    const updated = await nylas.lists.update({ listId, requestBody: { name: 'Blocked', description: 'renamed' } });
    note('lists.update');
    expect(updated.data).toMatchObject({ name: 'Blocked', description: 'renamed', type: 'domain' });

    const added = await nylas.lists.addItems({
      listId,
      requestBody: { items: ['  Spam.Example ', 'junk.example', 'spam.example'] },
    });
    note('lists.addItems');
    expect(added.data.itemsCount).toBe(2);
    const again = await nylas.lists.addItems({ listId, requestBody: { items: ['junk.example', 'third.example'] } });
    expect(again.data.itemsCount).toBe(3);

    const firstPage = await nylas.lists.listItems({ listId, queryParams: { limit: 2 } });
    note('lists.listItems');
    expect(firstPage.data).toHaveLength(2);
    expect(firstPage.nextCursor).toBeDefined();
    const items = await all(nylas.lists.listItems({ listId, queryParams: { limit: 2 } }));
    expect(items.map((item) => item.value).sort()).toEqual(['junk.example', 'spam.example', 'third.example']);
    expect(items.every((item) => item.listId === listId)).toBe(true);

    const removed = await nylas.lists.removeItems({
      listId,
      requestBody: { items: ['JUNK.example', 'not-there.example'] },
    });
    note('lists.removeItems');
    expect(removed.data.itemsCount).toBe(2);
    const stored = await service.core.deps.db.orm.query.lists.findFirst({
      where: (lists, { eq }) => eq(lists.id, listId),
    });
    expect(stored?.itemsCount).toBe(2);
    expect(stored?.version).toBeGreaterThanOrEqual(3);

    const other = await nylas.lists.create({ requestBody: { name: 'Addresses', type: 'address' } });
    const listed = await all(nylas.lists.list({ queryParams: { limit: 1 } }));
    note('lists.list');
    expect(listed.map((list) => list.id)).toEqual([listId, other.data.id]);

    await nylas.lists.destroy({ listId: other.data.id });
    note('lists.destroy');
    expect((await all(nylas.lists.list())).map((list) => list.id)).toEqual([listId]);
  });

  it('rules: create (defaults), find, update, list, destroy, listEvaluations', async () => {
    const { nylas } = service;
    const list = await nylas.lists.create({ requestBody: { name: 'TLDs', type: 'tld' } });
    const created = await nylas.rules.create({
      requestBody: {
        name: 'Junk TLDs to spam',
        match: { conditions: [{ field: 'from.tld', operator: 'in_list', value: [list.data.id] }] },
        actions: [{ type: 'mark_as_spam' }, { type: 'assign_to_folder', value: 'Suspicious' }],
      },
    });
    note('rules.create');
    expect(created.data).toMatchObject({
      name: 'Junk TLDs to spam',
      priority: 10,
      enabled: true,
      trigger: 'inbound',
      match: { operator: 'all', conditions: [{ field: 'from.tld', operator: 'in_list', value: [list.data.id] }] },
      actions: [{ type: 'mark_as_spam' }, { type: 'assign_to_folder', value: 'Suspicious' }],
    });
    const ruleId = created.data.id;

    expect((await nylas.rules.find({ ruleId })).data.id).toBe(ruleId);
    note('rules.find');

    const updated = await nylas.rules.update({
      ruleId,
      requestBody: { priority: 5, enabled: false, description: 'off for now' },
    });
    note('rules.update');
    expect(updated.data).toMatchObject({
      priority: 5,
      enabled: false,
      description: 'off for now',
      actions: created.data.actions,
    });

    const outbound = await nylas.rules.create({
      requestBody: {
        name: 'No replies to competitors',
        trigger: 'outbound',
        priority: 1,
        match: {
          operator: 'any',
          conditions: [
            { field: 'outbound.type', operator: 'is', value: 'reply' },
            { field: 'recipient.domain', operator: 'is', value: 'Rival.example' },
          ],
        },
        actions: [{ type: 'block' }],
      },
    });
    expect(outbound.data.match.conditions[1]).toEqual({
      field: 'recipient.domain',
      operator: 'is',
      value: 'rival.example',
    });

    const listed = await all(nylas.rules.list({ queryParams: { limit: 1 } }));
    note('rules.list');
    expect(listed.map((rule) => rule.id)).toEqual([ruleId, outbound.data.id]);

    await nylas.rules.destroy({ ruleId: outbound.data.id });
    note('rules.destroy');
    expect((await all(nylas.rules.list())).map((rule) => rule.id)).toEqual([ruleId]);

    const grant = await newGrant('audited');
    const at = Math.floor(Date.now() / 1000);
    const { db, newId } = service.core.deps;
    const applicationId = (await db.orm.query.grants.findFirst({ where: (grants, { eq }) => eq(grants.id, grant.id) }))!
      .applicationId;
    await db.write((tx) =>
      recordEvaluations(tx, [
        evaluationRow(newId, {
          applicationId,
          grantId: grant.id,
          stage: 'smtp_rcpt',
          input: {
            from_address: 'x@spam.example',
            from_domain: 'spam.example',
            from_tld: 'example',
            recipient_addresses: [`audited@${DOMAIN}`],
          },
          matchedRuleIds: [ruleId],
          appliedActions: { blocked: true },
          at: at - 10,
        }),
        evaluationRow(newId, {
          applicationId,
          grantId: grant.id,
          messageId: 'message-1',
          stage: 'inbox_processing',
          input: { from_address: 'y@ok.example' },
          matchedRuleIds: [],
          appliedActions: {},
          verdicts: { spam: { score: 0.5 } },
          at,
        }),
      ]),
    );
    const evaluations = await nylas.rules.listEvaluations({ identifier: grant.id });
    note('rules.listEvaluations');
    expect(evaluations.data.map((row) => row.evaluationStage)).toEqual(['inbox_processing', 'smtp_rcpt']);
    expect(evaluations.data[0]).toMatchObject({
      grantId: grant.id,
      messageId: 'message-1',
      appliedActions: {},
      matchedRuleIds: [],
    });
    expect(evaluations.data[1]).toMatchObject({
      appliedActions: { blocked: true },
      matchedRuleIds: [ruleId],
      evaluationInput: { fromDomain: 'spam.example' },
    });
    expect(evaluations.data[1]!.messageId).toBeUndefined();
  });

  it('policies: create (200), find, update, list, destroy', async () => {
    const { nylas } = service;
    const created = await nylas.policies.create({
      requestBody: {
        name: 'Strict',
        limits: {
          limitAttachmentSizeLimit: 1_000_000,
          limitCountDailyEmailSent: -1,
          limitInboxRetentionPeriod: 30,
          limitSpamRetentionPeriod: 7,
        },
        spamDetection: { useListDnsbl: true, spamSensitivity: 2.5 },
        options: { additionalFolders: ['Receipts'] },
      },
    });
    note('policies.create');
    expect(created.data).toMatchObject({
      name: 'Strict',
      limits: {
        limitAttachmentSizeLimit: 1_000_000,
        limitCountDailyEmailSent: -1,
        limitInboxRetentionPeriod: 30,
        limitSpamRetentionPeriod: 7,
      },
      spamDetection: { useListDnsbl: true, spamSensitivity: 2.5 },
      options: { additionalFolders: ['Receipts'] },
      rules: [],
    });
    const policyId = created.data.id;
    expect((await nylas.policies.find({ policyId })).data.name).toBe('Strict');
    note('policies.find');

    const updated = await nylas.policies.update({
      policyId,
      requestBody: { name: 'Stricter', limits: { limitCountDailyEmailSent: 100 } },
    });
    note('policies.update');
    expect(updated.data.name).toBe('Stricter');
    expect(updated.data.limits).toEqual({ limitCountDailyEmailSent: 100 });
    expect(updated.data.spamDetection).toEqual(created.data.spamDetection);

    const second = await nylas.policies.create({ requestBody: { name: 'Loose' } });
    const listed = await all(nylas.policies.list({ queryParams: { limit: 1 } }));
    note('policies.list');
    expect(listed.map((policy) => policy.id)).toEqual([policyId, second.data.id]);

    await nylas.policies.destroy({ policyId: second.data.id });
    note('policies.destroy');
    expect((await all(nylas.policies.list())).map((policy) => policy.id)).toEqual([policyId]);
  });

  it('workspaces: list, create, find, update, manualAssign, autoGroup, destroy', async () => {
    const { nylas } = service;
    const initial = await nylas.workspaces.list();
    note('workspaces.list');
    const defaults = initial.data.filter((workspace) => workspace.default);
    expect(defaults).toHaveLength(1);
    const fallback = defaults[0]!;

    const early = await newGrant('early');
    expect(await workspaceOf(early.id)).toBe(fallback.workspaceId);
    const policy = await nylas.policies.create({ requestBody: { name: 'For the team' } });
    const rule = await nylas.rules.create({
      requestBody: {
        name: 'Star the boss',
        match: { conditions: [{ field: 'from.address', operator: 'is', value: 'boss@example.com' }] },
        actions: [{ type: 'mark_as_starred' }],
      },
    });

    const created = await nylas.workspaces.create({
      requestBody: { name: 'Team', domain: DOMAIN.toUpperCase(), policyId: policy.data.id, ruleIds: [rule.data.id] },
    });
    note('workspaces.create');
    expect(created.data).toMatchObject({
      name: 'Team',
      domain: DOMAIN,
      autoGroup: true,
      default: false,
      policyId: policy.data.id,
      ruleIds: [rule.data.id],
    });
    const workspaceId = created.data.workspaceId;

    // A new account on the domain is placed here (placement order), the earlier one stays in the default.
    const later = await newGrant('later');
    expect(await workspaceOf(later.id)).toBe(workspaceId);
    expect(await workspaceOf(early.id)).toBe(fallback.workspaceId);

    expect((await nylas.workspaces.find({ workspaceId })).data.name).toBe('Team');
    note('workspaces.find');

    const updated = await nylas.workspaces.update({
      workspaceId,
      requestBody: { name: 'Team A', policyId: null, ruleIds: null },
    });
    note('workspaces.update');
    expect(updated.data).toMatchObject({ name: 'Team A', ruleIds: [] });
    expect(updated.data.policyId).toBeUndefined();

    const fallbackUpdated = await nylas.workspaces.update({
      workspaceId: fallback.workspaceId,
      requestBody: { policyId: policy.data.id },
    });
    expect(fallbackUpdated.data).toMatchObject({ default: true, policyId: policy.data.id });

    const grouped = await nylas.workspaces.autoGroup({ requestBody: { specificDomain: DOMAIN } });
    note('workspaces.autoGroup');
    expect(grouped.data.jobId).toEqual(expect.any(String));
    // early@ and audited@ (from the rules test) were still in the default workspace.
    expect(grouped.data.message).toContain('2 grant(s)');
    expect(await workspaceOf(early.id)).toBe(workspaceId);

    const assigned = await nylas.workspaces.manualAssign({ workspaceId, requestBody: { removeGrants: [early.id] } });
    note('workspaces.manualAssign');
    expect(assigned.data).toMatchObject({
      workspaceId,
      domain: DOMAIN,
      grantsAssigned: null,
      grantsRemoved: [early.id],
    });
    expect(await workspaceOf(early.id)).toBe(fallback.workspaceId);
    const back = await nylas.workspaces.manualAssign({ workspaceId, requestBody: { assignGrants: [early.id] } });
    expect(back.data.grantsAssigned).toEqual([early.id]);

    await nylas.workspaces.destroy({ workspaceId });
    note('workspaces.destroy');
    expect((await nylas.workspaces.list()).data.map((workspace) => workspace.workspaceId)).toEqual([
      fallback.workspaceId,
    ]);
    // Its grants moved to the default workspace.
    for (const grant of [early, later]) expect(await workspaceOf(grant.id)).toBe(fallback.workspaceId);

    // Every move (auto-group, each manual assignment, the delete) is a grant.updated notification with the new workspace.
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.type, 'grant.updated'), eq(tables.outboxEvents.grantId, early.id)))
      .orderBy(tables.outboxEvents.seq);
    expect(events.map((event) => (event.payload as { workspace_id?: string }).workspace_id)).toEqual([
      workspaceId,
      fallback.workspaceId,
      workspaceId,
      fallback.workspaceId,
    ]);
  });

  it('a workspace without a domain answers domain: "" (the SDK model requires the field), never omits it', async () => {
    const nylas = service.nylas;
    const created = await nylas.workspaces.create({ requestBody: { name: 'No domain', autoGroup: false } });
    const workspaceId = created.data.workspaceId;
    expect(created.data).toMatchObject({ name: 'No domain', domain: '', autoGroup: false });
    expect((await nylas.workspaces.find({ workspaceId })).data.domain).toBe('');
    const listed = await request(service.url, 'GET', '/v3/workspaces', { key: service.apiKey });
    const wire = (listed.body.data as { workspace_id: string; domain?: unknown }[]).find(
      (workspace) => workspace.workspace_id === workspaceId,
    );
    expect(wire).toHaveProperty('domain', '');
    await nylas.workspaces.destroy({ workspaceId });
  });

  it('called every one of the 26 methods', () => {
    expect(called.size).toBe(26);
  });
});

describe('administration writes reach the enforcement cache at once', () => {
  it('a rule put on the default workspace applies to the next forGrant without waiting for the cache to expire', async () => {
    const service = await startTestService();
    try {
      await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'Cache', domain_address: 'cache.agentpost.localhost' },
      });
      const grant = (
        await service.nylas.auth.customAuthentication({
          requestBody: { provider: 'nylas', settings: { email: 'agent@cache.agentpost.localhost' } },
        })
      ).data;
      const row = (await service.core.deps.db.orm.query.grants.findFirst({
        where: (grants, { eq }) => eq(grants.id, grant.id),
      }))!;
      expect((await service.core.admin.enforcement.forGrant(row)).inbound).toEqual([]);
      const list = await service.nylas.lists.create({ requestBody: { name: 'Bad senders', type: 'address' } });
      const rule = await service.nylas.rules.create({
        requestBody: {
          name: 'Block',
          match: { conditions: [{ field: 'from.address', operator: 'in_list', value: [list.data.id] }] },
          actions: [{ type: 'block' }],
        },
      });
      const fallback = (await service.nylas.workspaces.list()).data.find((workspace) => workspace.default)!;
      await service.nylas.workspaces.update({
        workspaceId: fallback.workspaceId,
        requestBody: { ruleIds: [rule.data.id] },
      });
      const loaded = await service.core.admin.enforcement.forGrant(row);
      expect(loaded.inbound.map((compiled) => compiled.id)).toEqual([rule.data.id]);
      expect(loaded.lists.get(list.data.id)?.items.size).toBe(0);
      await service.nylas.lists.addItems({ listId: list.data.id, requestBody: { items: ['Spammer@Example.com'] } });
      expect([...(await service.core.admin.enforcement.forGrant(row)).lists.get(list.data.id)!.items]).toEqual([
        'spammer@example.com',
      ]);
    } finally {
      await service.close();
    }
  });
});
