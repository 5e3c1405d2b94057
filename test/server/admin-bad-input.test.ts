/**
 * Bad input to the administration endpoints: each case answers a 400, 404 or 409 in the Nylas error shape, and the
 * stored administration state (workspaces, policies, rules, lists, items, grant placement) is exactly as before.
 * Another application's objects are 404s, including a list named in `in_list` and a policy named by a workspace.
 */
import { asc } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationRow, recordEvaluations } from '../../src/admin/audit.js';
import { tables } from '../../storage/index.js';
import { isErrorEnvelope, request, type JsonResponse } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'bad.agentpost.localhost';
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  409: 'conflict_error',
};

type Json = Record<string, any>;

describe('administration: bad input changes nothing', () => {
  let service: TestService;
  let otherKey: string;
  let defaultWorkspaceId: string;
  let workspaceId: string;
  let policyId: string;
  let ruleId: string;
  let domainListId: string;
  let grantId: string;
  let foreign: { policy: string; rule: string; list: string; workspace: string; grant: string };

  const call = (method: string, path: string, body?: unknown, key = service.apiKey) =>
    request(service.url, method, `/v3${path}`, { key, ...(body !== undefined ? { body } : {}) });
  const ok = async (method: string, path: string, body?: unknown, key?: string): Promise<Json> => {
    const response = await call(method, path, body, key);
    expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
    return response.body.data as Json;
  };

  /** Everything administration writes, in a stable order. */
  const snapshot = async () => {
    const { orm } = service.core.deps.db;
    return JSON.stringify({
      workspaces: await orm.select().from(tables.workspaces).orderBy(asc(tables.workspaces.id)),
      policies: await orm.select().from(tables.policies).orderBy(asc(tables.policies.id)),
      rules: await orm.select().from(tables.rules).orderBy(asc(tables.rules.id)),
      lists: await orm.select().from(tables.lists).orderBy(asc(tables.lists.id)),
      items: await orm.select().from(tables.listItems).orderBy(asc(tables.listItems.id)),
      grants: await orm
        .select({ id: tables.grants.id, workspaceId: tables.grants.workspaceId })
        .from(tables.grants)
        .orderBy(asc(tables.grants.id)),
    });
  };

  /** Sends a request that must fail with `status` (message matching `message`) and leave everything as it was. */
  const refused = async (
    status: 400 | 404 | 409,
    method: string,
    path: string,
    body?: unknown,
    message?: RegExp,
    key?: string,
  ): Promise<JsonResponse> => {
    const before = await snapshot();
    const response = await call(method, path, body, key);
    expect(response.status, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`).toBe(status);
    expect(isErrorEnvelope(response.body), response.text).toBe(true);
    expect(response.body.error.type).toBe(ERROR_TYPES[status]);
    if (message) expect(response.body.error.message).toMatch(message);
    expect(await snapshot(), `${method} ${path} changed nothing`).toBe(before);
    return response;
  };

  beforeAll(async () => {
    // Many calls a second to application-level routes: no rate limit here (test/server/rate-limits.test.ts covers it).
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    await ok('POST', '/admin/domains', { name: 'Bad', domain_address: DOMAIN });
    grantId = (
      await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: `agent@${DOMAIN}` } },
      })
    ).data.id;
    defaultWorkspaceId = ((await ok('GET', '/workspaces')) as Json[]).find(
      (workspace) => workspace.default,
    )!.workspace_id;
    policyId = (await ok('POST', '/policies', { name: 'Mine', limits: { limit_inbox_retention_period: 30 } })).id;
    domainListId = (await ok('POST', '/lists', { name: 'Domains', type: 'domain' })).id;
    ruleId = (
      await ok('POST', '/rules', {
        name: 'Mine',
        match: { conditions: [{ field: 'from.domain', operator: 'in_list', value: [domainListId] }] },
        actions: [{ type: 'block' }],
      })
    ).id;
    workspaceId = (
      await ok('POST', '/workspaces', { name: 'Team', domain: 'team.example', policy_id: policyId, rule_ids: [ruleId] })
    ).workspace_id;

    const second = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    otherKey = second.apiKey;
    await ok('POST', '/admin/domains', { name: 'Other', domain_address: 'other.agentpost.localhost' }, otherKey);
    const otherGrant = await service.client(otherKey).auth.customAuthentication({
      requestBody: { provider: 'nylas', settings: { email: 'agent@other.agentpost.localhost' } },
    });
    const otherList = (await ok('POST', '/lists', { name: 'Theirs', type: 'domain' }, otherKey)).id;
    foreign = {
      policy: (await ok('POST', '/policies', { name: 'Theirs' }, otherKey)).id,
      rule: (
        await ok(
          'POST',
          '/rules',
          { name: 'Theirs', match: { conditions: [] }, actions: [{ type: 'mark_as_read' }] },
          otherKey,
        )
      ).id,
      list: otherList,
      workspace: (await ok('POST', '/workspaces', { name: 'Theirs' }, otherKey)).workspace_id,
      grant: otherGrant.data.id,
    };
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('workspaces', () => {
    it('the default workspace: only policy_id and rule_ids change; it cannot be deleted', async () => {
      for (const body of [{ name: 'Renamed' }, { auto_group: true }, { domain: 'x.example', policy_id: policyId }]) {
        await refused(
          400,
          'PATCH',
          `/workspaces/${defaultWorkspaceId}`,
          body,
          /default workspace.*only policy_id and rule_ids/,
        );
      }
      await refused(
        400,
        'DELETE',
        `/workspaces/${defaultWorkspaceId}`,
        undefined,
        /default workspace cannot be deleted/,
      );
      await refused(
        400,
        'POST',
        `/workspaces/${defaultWorkspaceId}/manual-assign`,
        { remove_grants: [grantId] },
        /default workspace/,
      );
      const changed = await ok('PATCH', `/workspaces/${defaultWorkspaceId}`, {
        policy_id: policyId,
        rule_ids: [ruleId],
      });
      expect(changed).toMatchObject({ default: true, policy_id: policyId, rule_ids: [ruleId] });
      await ok('PATCH', `/workspaces/${defaultWorkspaceId}`, { policy_id: null, rule_ids: null });
    });

    it("another application's policy or rule is a 404; unknown fields and bad domains are 400s", async () => {
      await refused(
        404,
        'POST',
        '/workspaces',
        { name: 'Stolen', policy_id: foreign.policy },
        /policy_id: Policy .* was not found/,
      );
      await refused(404, 'POST', '/workspaces', { name: 'Stolen', rule_ids: [ruleId, foreign.rule] }, /rule_ids/);
      await refused(404, 'PATCH', `/workspaces/${workspaceId}`, { name: 'Changed', policy_id: foreign.policy });
      await refused(404, 'PATCH', `/workspaces/${defaultWorkspaceId}`, { rule_ids: [foreign.rule] });
      await refused(400, 'POST', '/workspaces', { name: 'Typo', polcy_id: policyId }, /polcy_id/);
      await refused(400, 'POST', '/workspaces', { name: 'Bad domain', domain: 'not a domain' }, /domain/);
      await refused(400, 'POST', '/workspaces', { name: '' }, /name/);
    });

    it("another application's workspace and grants are 404s; more than 500 grants is a 400", async () => {
      for (const [method, path, body] of [
        ['GET', `/workspaces/${foreign.workspace}`, undefined],
        ['PATCH', `/workspaces/${foreign.workspace}`, { name: 'Mine now' }],
        ['DELETE', `/workspaces/${foreign.workspace}`, undefined],
        ['POST', `/workspaces/${foreign.workspace}/manual-assign`, { assign_grants: [grantId] }],
      ] as const) {
        await refused(404, method, path, body);
      }
      await refused(
        404,
        'POST',
        `/workspaces/${workspaceId}/manual-assign`,
        { assign_grants: [grantId, foreign.grant] },
        /Grant/,
      );
      await refused(
        404,
        'POST',
        `/workspaces/${workspaceId}/manual-assign`,
        { remove_grants: [foreign.grant] },
        /Grant/,
      );
      const many = Array.from({ length: 501 }, (_, index) => `grant-${index}`);
      await refused(400, 'POST', `/workspaces/${workspaceId}/manual-assign`, { assign_grants: many }, /assign_grants/);
      await refused(404, 'POST', '/workspaces/auto-group', { specific_domain: 'nowhere.example' }, /specific_domain/);
      expect((await call('GET', `/workspaces/${workspaceId}`, undefined, otherKey)).status).toBe(404);
    });
  });

  describe('policies', () => {
    it('negative limits are 400s, except limit_count_daily_email_sent -1 (unlimited)', async () => {
      for (const limits of [
        { limit_attachment_size_limit: -1 },
        { limit_count_daily_message_received: -5 },
        { limit_storage_total: -1 },
        { limit_count_daily_email_sent: -2 },
        { limit_inbox_retention_period: 1.5 },
      ]) {
        await refused(400, 'POST', '/policies', { name: 'Negative', limits }, new RegExp(Object.keys(limits)[0]!));
        await refused(400, 'PUT', `/policies/${policyId}`, { limits });
      }
      expect(
        (await ok('POST', '/policies', { name: 'Unlimited', limits: { limit_count_daily_email_sent: -1 } })).limits,
      ).toEqual({ limit_count_daily_email_sent: -1 });
    });

    it('spam retention longer than inbox retention, spam_sensitivity out of 0.1–5.0 and unknown fields are 400s', async () => {
      const longer = { limit_inbox_retention_period: 7, limit_spam_retention_period: 30 };
      await refused(
        400,
        'POST',
        '/policies',
        { name: 'Longer', limits: longer },
        /limit_spam_retention_period.*longer than the inbox/,
      );
      await refused(
        400,
        'PUT',
        `/policies/${policyId}`,
        { name: 'Changed', limits: longer },
        /limit_spam_retention_period/,
      );
      for (const spam_sensitivity of [0.05, 5.1, -1])
        await refused(
          400,
          'POST',
          '/policies',
          { name: 'Spam', spam_detection: { spam_sensitivity } },
          /spam_sensitivity/,
        );
      await refused(
        400,
        'POST',
        '/policies',
        { name: 'Typo', limits: { limit_attachment_sise: 5 } },
        /limit_attachment_sise/,
      );
      await refused(400, 'PUT', `/policies/${policyId}`, { spam_detection: { use_dnsbl: true } }, /use_dnsbl/);
      await refused(400, 'POST', '/policies', { limits: {} }, /name/);
    });

    it("another application's policy or rule is a 404", async () => {
      await refused(404, 'POST', '/policies', { name: 'With theirs', rules: [foreign.rule] }, /rules/);
      await refused(404, 'PUT', `/policies/${policyId}`, { rules: [foreign.rule] });
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { name: 'Mine now' }],
        ['DELETE', undefined],
      ] as const)
        await refused(404, method, `/policies/${foreign.policy}`, body);
    });

    it('deleting a policy clears it from the workspaces that name it', async () => {
      const doomed = (await ok('POST', '/policies', { name: 'Doomed' })).id;
      const holder = (await ok('POST', '/workspaces', { name: 'Holder', policy_id: doomed })).workspace_id;
      await ok('DELETE', `/policies/${doomed}`);
      const workspace = await ok('GET', `/workspaces/${holder}`);
      expect(workspace.policy_id).toBeUndefined();
      await ok('DELETE', `/workspaces/${holder}`);
    });
  });

  describe('rules', () => {
    const rule = (overrides: Json) => ({
      name: 'Bad',
      match: { conditions: [{ field: 'from.domain', operator: 'is', value: 'x.example' }] },
      actions: [{ type: 'mark_as_read' }],
      ...overrides,
    });
    const condition = (fields: Json) => ({
      match: { conditions: [{ field: 'from.domain', operator: 'is', value: 'x.example', ...fields }] },
    });

    it('unknown fields, operators, action types are 400s', async () => {
      await refused(400, 'POST', '/rules', rule({ colour: 'red' }), /colour/);
      await refused(400, 'POST', '/rules', rule(condition({ negate: true })), /negate/);
      await refused(400, 'POST', '/rules', rule({ match: { conditions: [], mode: 'all' } }), /mode/);
      await refused(
        400,
        'POST',
        '/rules',
        rule(condition({ operator: 'starts_with' })),
        /starts_with.*is not a condition operator/,
      );
      await refused(400, 'POST', '/rules', rule(condition({ field: 'subject' })), /subject.*is not a condition field/);
      await refused(
        400,
        'POST',
        '/rules',
        rule({ actions: [{ type: 'forward', value: 'a@b.example' }] }),
        /forward.*is not a rule action/,
      );
      await refused(400, 'POST', '/rules', rule({ priority: 1001 }), /priority/);
      await refused(400, 'POST', '/rules', rule({ match: { operator: 'most', conditions: [] } }), /operator/);
      await refused(400, 'POST', '/rules', rule({ actions: [] }), /actions/);
    });

    it("in_list naming a missing list or another application's list is a 404", async () => {
      await refused(
        404,
        'POST',
        '/rules',
        rule(condition({ operator: 'in_list', value: ['no-such-list'] })),
        /List "no-such-list" was not found/,
      );
      await refused(
        404,
        'POST',
        '/rules',
        rule(condition({ operator: 'in_list', value: [domainListId, foreign.list] })),
        new RegExp(foreign.list),
      );
      await refused(404, 'PUT', `/rules/${ruleId}`, condition({ operator: 'in_list', value: [foreign.list] }));
      await refused(
        400,
        'POST',
        '/rules',
        rule(condition({ operator: 'is', value: [domainListId] })),
        /only in_list takes an array/,
      );
    });

    it('outbound.type takes only is / is_not and compose / reply', async () => {
      await refused(
        400,
        'POST',
        '/rules',
        rule({ trigger: 'outbound', ...condition({ field: 'outbound.type', operator: 'contains', value: 'reply' }) }),
        /outbound.type takes only the operators is and is_not/,
      );
      await refused(
        400,
        'POST',
        '/rules',
        rule({ trigger: 'outbound', ...condition({ field: 'outbound.type', operator: 'is', value: 'forward' }) }),
        /compose or reply/,
      );
      await refused(
        400,
        'POST',
        '/rules',
        rule({
          trigger: 'outbound',
          ...condition({ field: 'outbound.type', operator: 'in_list', value: [domainListId] }),
        }),
        /is and is_not/,
      );
      const fine = await call(
        'POST',
        '/rules',
        rule({ trigger: 'outbound', ...condition({ field: 'outbound.type', operator: 'is_not', value: 'Compose' }) }),
      );
      expect(fine.status).toBe(201);
      expect(fine.body.data.match.conditions[0].value).toBe('compose');
      await ok('DELETE', `/rules/${fine.body.data.id}`);
    });

    it('assign_to_folder without a value and block with other actions are 400s, on create and on update', async () => {
      await refused(
        400,
        'POST',
        '/rules',
        rule({ actions: [{ type: 'assign_to_folder' }] }),
        /actions\[0\].value: assign_to_folder needs the folder name/,
      );
      await refused(
        400,
        'POST',
        '/rules',
        rule({ actions: [{ type: 'assign_to_folder', value: '   ' }] }),
        /assign_to_folder/,
      );
      await refused(
        400,
        'POST',
        '/rules',
        rule({ actions: [{ type: 'block' }, { type: 'mark_as_read' }] }),
        /block .* must be the only action/,
      );
      await refused(400, 'PUT', `/rules/${ruleId}`, { actions: [{ type: 'block' }, { type: 'trash' }] }, /block/);
      await refused(400, 'PUT', `/rules/${ruleId}`, { name: 'Changed', enabled: 'yes' }, /enabled/);
    });

    it("another application's rule is a 404; deleting a rule removes it from workspaces and policies", async () => {
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { name: 'Mine now' }],
        ['DELETE', undefined],
      ] as const)
        await refused(404, method, `/rules/${foreign.rule}`, body);
      const doomed = (await ok('POST', '/rules', rule({ name: 'Doomed' }))).id;
      const policy = (await ok('POST', '/policies', { name: 'Names it', rules: [doomed] })).id;
      const workspace = (await ok('POST', '/workspaces', { name: 'Names it', rule_ids: [ruleId, doomed] }))
        .workspace_id;
      await ok('DELETE', `/rules/${doomed}`);
      expect((await ok('GET', `/policies/${policy}`)).rules).toEqual([]);
      expect((await ok('GET', `/workspaces/${workspace}`)).rule_ids).toEqual([ruleId]);
      await ok('DELETE', `/workspaces/${workspace}`);
      await ok('DELETE', `/policies/${policy}`);
    });
  });

  describe('lists', () => {
    it('more than 1,000 items, or any item of the wrong type, is a 400 and adds nothing', async () => {
      await refused(
        400,
        'POST',
        `/lists/${domainListId}/items`,
        { items: Array.from({ length: 1001 }, (_, index) => `d${index}.example`) },
        /items/,
      );
      await refused(
        400,
        'DELETE',
        `/lists/${domainListId}/items`,
        { items: Array.from({ length: 1001 }, (_, index) => `d${index}.example`) },
        /items/,
      );
      await refused(
        400,
        'POST',
        `/lists/${domainListId}/items`,
        { items: ['good.example', 'not a domain'] },
        /a domain list holds .*"not a domain"/,
      );
      await refused(400, 'POST', `/lists/${domainListId}/items`, { items: ['user@example.com'] }, /domain/);
      const tlds = (await ok('POST', '/lists', { name: 'TLDs', type: 'tld' })).id;
      await refused(400, 'POST', `/lists/${tlds}/items`, { items: ['com', 'example.com'] }, /"example.com"/);
      const addresses = (await ok('POST', '/lists', { name: 'People', type: 'address' })).id;
      await refused(
        400,
        'POST',
        `/lists/${addresses}/items`,
        { items: ['a@example.com', 'example.com'] },
        /email address/,
      );
      await refused(400, 'POST', `/lists/${addresses}/items`, { items: [] }, /items/);
      // Exactly 1,000 is fine; values are lower-cased and trimmed, repeats ignored.
      const thousand = await ok('POST', `/lists/${tlds}/items`, {
        items: [...Array.from({ length: 999 }, (_, index) => `t${index}`), ' COM '],
      });
      expect(thousand.items_count).toBe(1000);
      expect((await ok('POST', `/lists/${tlds}/items`, { items: ['com', 't1'] })).items_count).toBe(1000);
      const page = await call('GET', `/lists/${tlds}/items?limit=200`);
      expect(page.body.data).toHaveLength(200);
      expect(page.body.next_cursor).toEqual(expect.any(String));
    });

    it('the type cannot change; names are 1 to 256 characters; unknown types are 400s', async () => {
      await refused(400, 'PUT', `/lists/${domainListId}`, { name: 'Changed', type: 'tld' }, /type cannot change/);
      await refused(400, 'PUT', `/lists/${domainListId}`, { name: '' }, /name/);
      await refused(400, 'POST', '/lists', { name: 'x'.repeat(257), type: 'domain' }, /name/);
      await refused(400, 'POST', '/lists', { name: 'Phones', type: 'phone' }, /type/);
      expect(
        (await ok('PUT', `/lists/${domainListId}`, { type: 'domain', description: 'same type is fine' })).description,
      ).toBe('same type is fine');
    });

    it('a list that rules name cannot be deleted (409 naming the rules)', async () => {
      const response = await refused(409, 'DELETE', `/lists/${domainListId}`, undefined, new RegExp(ruleId));
      expect(response.body.error.message).toMatch(/change or delete those rules first/);
    });

    it("another application's list is a 404 on every list endpoint", async () => {
      for (const [method, path, body] of [
        ['GET', `/lists/${foreign.list}`, undefined],
        ['PUT', `/lists/${foreign.list}`, { name: 'Mine now' }],
        ['DELETE', `/lists/${foreign.list}`, undefined],
        ['GET', `/lists/${foreign.list}/items`, undefined],
        ['POST', `/lists/${foreign.list}/items`, { items: ['a.example'] }],
        ['DELETE', `/lists/${foreign.list}/items`, { items: ['a.example'] }],
      ] as const) {
        await refused(404, method, path, body);
      }
    });
  });

  describe('rule evaluations', () => {
    it("pages newest first; another application's grant is a 404; a bad page_token is a 400", async () => {
      const { db, newId } = service.core.deps;
      const applicationId = (await db.orm.query.grants.findFirst({
        where: (grants, { eq }) => eq(grants.id, grantId),
      }))!.applicationId;
      const rows = Array.from({ length: 5 }, (_, index) =>
        evaluationRow(newId, {
          applicationId,
          grantId,
          messageId: index % 2 === 0 ? `message-${index}` : null,
          stage: index % 2 === 0 ? 'inbox_processing' : 'smtp_rcpt',
          input: { from_address: `sender${index}@x.example` },
          matchedRuleIds: index === 4 ? [ruleId] : [],
          appliedActions: index === 4 ? { marked_as_read: true, folder_ids: ['f1'] } : {},
          verdicts: index === 4 ? { size: { bytes: 10 } } : undefined,
          at: 1_700_000_000 + index,
        }),
      );
      await db.write((tx) => recordEvaluations(tx, rows));
      const seen: Json[] = [];
      let token: string | undefined;
      do {
        const page = await call(
          'GET',
          `/grants/${grantId}/rule-evaluations?limit=2${token ? `&page_token=${token}` : ''}`,
        );
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data);
        token = page.body.next_cursor;
      } while (token);
      expect(seen.map((row) => row.evaluation_input.from_address)).toEqual(
        [4, 3, 2, 1, 0].map((index) => `sender${index}@x.example`),
      );
      expect(seen[0]).toMatchObject({
        grant_id: grantId,
        message_id: 'message-4',
        evaluation_stage: 'inbox_processing',
        evaluated_at: 1_700_000_004,
        applied_actions: { marked_as_read: true, folder_ids: ['f1'] },
        matched_rule_ids: [ruleId],
        verdicts: { size: { bytes: 10 } },
        application_id: applicationId,
        organization_id: applicationId,
      });
      expect(seen[1]).not.toHaveProperty('message_id');
      expect(seen[1]!.applied_actions).toEqual({});
      // By email address too.
      expect((await call('GET', `/grants/agent@${DOMAIN}/rule-evaluations?limit=1`)).body.data[0].id).toBe(seen[0]!.id);

      await refused(404, 'GET', `/grants/${foreign.grant}/rule-evaluations`);
      await refused(404, 'GET', `/grants/${grantId}/rule-evaluations`, undefined, undefined, otherKey);
      await refused(400, 'GET', `/grants/${grantId}/rule-evaluations?page_token=garbage`, undefined, /page_token/);
      await refused(400, 'GET', `/grants/${grantId}/rule-evaluations?limit=500`, undefined, /limit/);
    });
  });
});
