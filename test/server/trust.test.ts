/**
 * The `trust` block wired (issue 35, item 5): the corpus of test/fixtures/agent/trust received over real SMTP by our
 * listener (authentication through the test's resolver), then read through the nylas SDK (the /v3 extension field),
 * the MCP client SDK over Streamable HTTP and the AI SDK tools; and an inbound rule `trust.injection greater_than
 * 0.7` that quarantines the mail with hidden instructions to a folder at ingest.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trust } from '../../src/schemas/trust.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const CORPUS = join(import.meta.dirname, '../fixtures/agent/trust');
const MAILBOX = 'ops@northwind.agentpost.localhost';
const DOMAIN = 'northwind.agentpost.localhost';

type Json = Record<string, unknown>;

/** A corpus message as a sending server would hand it over: without the Authentication-Results it was stored with. */
function corpusMail(file: string): Buffer {
  const raw = readFileSync(join(CORPUS, file), 'utf8');
  // The fixtures start with the receiving side's own Authentication-Results (a folded field): ours replaces it.
  return Buffer.from(raw.replace(/^Authentication-Results:[^\n]*\n(?:[ \t][^\n]*\n)*/, '').replace(/\r?\n/g, '\r\n'));
}

describe('the trust block, wired', () => {
  let service: TestService;
  let grantId: string;
  let quarantineRule: string;
  /** Message ids by corpus file. */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    service = await startTestService();
    // The policy first: a workspace for the domain, whose rule quarantines mail that reads as instructions to a model.
    const rule = await request(service.url, 'POST', '/v3/rules', {
      key: service.apiKey,
      body: {
        name: 'Quarantine prompt injection',
        match: { conditions: [{ field: 'trust.injection', operator: 'greater_than', value: 0.7 }] },
        actions: [{ type: 'assign_to_folder', value: 'Quarantine' }],
      },
    });
    expect(rule.status, rule.text).toBe(201);
    quarantineRule = (rule.body.data as { id: string }).id;
    const workspace = await request(service.url, 'POST', '/v3/workspaces', {
      key: service.apiKey,
      body: { name: 'Northwind', domain: DOMAIN, rule_ids: [quarantineRule] },
    });
    expect(workspace.status, workspace.text).toBe(200);
    grantId = await createMailbox(service, MAILBOX);
    // Known contacts (the address book), as the mailbox's owner would have them.
    for (const [email, given, surname] of [
      ['alice.smith@northwindtraders.com', 'Alice', 'Smith'],
      ['marco.rossi@contoso.com', 'Marco', 'Rossi'],
    ] as const)
      await service.nylas.contacts.create({
        identifier: grantId,
        requestBody: { givenName: given, surname, emails: [{ email, type: 'work' }] },
      });
    // paypa1.com publishes SPF and DMARC that our listener's client (127.0.0.1) fails.
    service.dns.txt.set('paypa1.com', [['v=spf1 ip4:185.234.72.19 -all']]);
    service.dns.txt.set('_dmarc.paypa1.com', [['v=DMARC1; p=none']]);

    // The message the benign support reply answers: this mailbox had it (it sent it), so the reply's thread is real.
    const original = [
      `From: Ops Team <${MAILBOX}>`,
      'To: support@acmecloud.io',
      'Subject: [Acme Cloud] Backups failing since Monday (#48213)',
      'Message-ID: <CAF3b8Lx+Wn1q@mail.northwindtraders.com>',
      'Date: Mon, 20 Oct 2025 08:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Our nightly backups fail since Monday.',
      '',
    ].join('\r\n');
    expect((await sendRaw(service.smtpPort, MAILBOX, [MAILBOX], original)).code).toBe(250);

    const files = [
      'benign-support-reply.eml',
      'hostile-hidden-instructions.eml',
      'hostile-known-contact-spoof.eml',
      'hostile-forged-thread.eml',
      'hostile-brand-lookalike.eml',
    ];
    for (const file of files) {
      const raw = corpusMail(file);
      const from = /^From: .*<([^>]+)>/m.exec(raw.toString())![1]!;
      const reply = await sendRaw(service.smtpPort, from, [MAILBOX], raw);
      expect(reply.code, `${file}: ${reply.text}`).toBe(250);
    }
    const subjects = new Map(
      files.map((file) => [/^Subject: (.*)$/m.exec(corpusMail(file).toString())![1]!.trim(), file]),
    );
    await eventually(async () => {
      const listed = await service.nylas.messages.list({ identifier: grantId, queryParams: { limit: 20 } });
      for (const message of listed.data) {
        const file = subjects.get(message.subject ?? '');
        if (file) ids[file] = message.id;
      }
      return Object.keys(ids).length === files.length ? true : undefined;
    }, 15_000);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  /** The trust block of a message as GET /v3 answers it. */
  async function trustOf(file: string): Promise<Trust> {
    const got = await request(service.url, 'GET', `/v3/grants/${grantId}/messages/${ids[file]}`, {
      key: service.apiKey,
    });
    expect(got.status).toBe(200);
    return (got.body.data as { trust: Trust }).trust;
  }

  it('answers each corpus verdict on GET /v3 …/messages/{id}', async () => {
    const hidden = await trustOf('hostile-hidden-instructions.eml');
    expect(hidden.injection.score).toBeGreaterThan(0.7);
    expect(hidden.injection.reasons.map((reason) => reason.code)).toEqual(
      expect.arrayContaining(['hidden_instructions', 'assistant_directive', 'forward_request', 'secrecy']),
    );
    expect(hidden.hidden_text_removed).toBeGreaterThan(200);

    const spoof = await trustOf('hostile-known-contact-spoof.eml');
    expect(spoof.display_name_spoof).toEqual({
      detected: true,
      reason: 'known_contact',
      imitates: 'alice.smith@northwindtraders.com',
    });

    const forged = await trustOf('hostile-forged-thread.eml');
    expect(forged.forged_thread).toMatchObject({ detected: true, reason: 'unknown_references' });
    expect(forged.lookalike_domain).toMatchObject({ detected: true, domain: 'cont0so.com', resembles: 'contoso.com' });

    const brand = await trustOf('hostile-brand-lookalike.eml');
    // Our own authentication stage judged it (the sender's forged "dmarc=pass" field is not read).
    expect({ spf: brand.spf, dmarc: brand.dmarc }).toEqual({ spf: 'fail', dmarc: 'fail' });
    expect(brand.display_name_spoof).toMatchObject({ detected: true, reason: 'brand' });
    expect(brand.lookalike_domain).toMatchObject({ detected: true, domain: 'paypa1.com', resembles: 'paypal.com' });
    expect(brand.link_mismatch.count).toBe(2);
    expect(brand.link_mismatch.examples[0]).toEqual({
      text: 'https://www.paypal.com/signin',
      text_domain: 'www.paypal.com',
      href_domain: 'paypa1.com',
    });

    const benign = await trustOf('benign-support-reply.eml');
    expect(benign.forged_thread).toMatchObject({ detected: false, referenced: 1, unknown: 0 });
    expect(benign.display_name_spoof.detected).toBe(false);
    expect(benign.lookalike_domain.detected).toBe(false);
    expect(benign.link_mismatch.count).toBe(0);
    expect(benign.injection.score).toBeLessThan(0.3);
  });

  it('gives the same block in lists that ask for it with select (the plain list stays the kept JSON), through the nylas SDK', async () => {
    const one = await trustOf('hostile-brand-lookalike.eml');
    const plain = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?limit=20`, {
      key: service.apiKey,
    });
    expect((plain.body.data as { trust?: Trust }[]).some((message) => message.trust !== undefined)).toBe(false);
    const listed = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/messages?limit=20&select=id,subject,trust`,
      {
        key: service.apiKey,
      },
    );
    const fromList = (listed.body.data as { id: string; trust: Trust }[]).find(
      (message) => message.id === ids['hostile-brand-lookalike.eml'],
    );
    expect(fromList?.trust).toEqual(one);
    const filtered = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/messages?from=service@paypa1.com&select=id,trust`,
      { key: service.apiKey },
    );
    expect((filtered.body.data as { trust: Trust }[])[0]?.trust).toEqual(one);
    // `select` keeps it only when named.
    const selected = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?select=subject,trust`, {
      key: service.apiKey,
    });
    expect((selected.body.data as { trust?: Trust }[]).every((message) => message.trust !== undefined)).toBe(true);
    const without = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?select=subject`, {
      key: service.apiKey,
    });
    expect((without.body.data as { trust?: Trust }[]).some((message) => message.trust !== undefined)).toBe(false);

    const sdk = await service.nylas.messages.find({
      identifier: grantId,
      messageId: ids['hostile-brand-lookalike.eml']!,
    });
    const trust = (sdk.data as unknown as { trust: Json }).trust;
    // The SDK turns the keys to camelCase; the values are the wire's.
    expect(trust).toMatchObject({ spf: 'fail', dmarc: 'fail', linkMismatch: { count: 2 } });
  });

  it('quarantines the high-injection mail to a folder at ingest, and only it', async () => {
    const folders = await service.nylas.folders.list({ identifier: grantId });
    const quarantine = folders.data.find((folder) => folder.name === 'Quarantine');
    expect(quarantine).toBeDefined();
    const inQuarantine = await service.nylas.messages.list({
      identifier: grantId,
      queryParams: { in: [quarantine!.id] },
    });
    expect(inQuarantine.data.map((message) => message.id)).toEqual([ids['hostile-hidden-instructions.eml']]);
    // The evaluation records what the rule read.
    const evaluations = await request(service.url, 'GET', `/v3/grants/${grantId}/rule-evaluations`, {
      key: service.apiKey,
    });
    expect(evaluations.status, evaluations.text).toBe(200);
    const matched = (evaluations.body.data as { evaluation_input: Json; matched_rule_ids: string[] }[]).filter((row) =>
      row.matched_rule_ids.includes(quarantineRule),
    );
    expect(matched).toHaveLength(1);
    expect(matched[0]!.evaluation_input.trust_injection).toBeGreaterThan(0.7);
  });

  it('shows warnings plainly, and nothing for clean mail, over MCP (Streamable HTTP) and the AI SDK', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${grantId}`), {
      requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
    });
    const client = new Client({ name: 'trust', version: '1.0.0' });
    await client.connect(transport);
    try {
      const text = (result: Json) =>
        (result.content as { type: string; text?: string }[]).map((item) => item.text ?? '').join('\n');
      const hostile = await client.callTool({
        name: 'get_message',
        arguments: { message_id: ids['hostile-brand-lookalike.eml'] },
      });
      expect(hostile.isError).toBeFalsy();
      expect((hostile.structuredContent as { trust: Trust }).trust.dmarc).toBe('fail');
      const warning = text(hostile);
      expect(warning).toContain('[trust warning: SPF fail; DMARC fail;');
      expect(warning).toContain('lookalike domain: paypa1.com resembles paypal.com');
      expect(warning).toContain('links showing another domain: 2');

      const clean = await client.callTool({
        name: 'get_message',
        arguments: { message_id: ids['benign-support-reply.eml'] },
      });
      expect(text(clean)).not.toContain('trust warning');

      // A list carries the warnings when its select names trust (as /v3 lists do); a plain list leaves them out.
      const plain = await client.callTool({ name: 'list_messages', arguments: { limit: 20 } });
      const plainItems = (plain.structuredContent as { data: { trust?: Json }[] }).data;
      expect(plainItems.some((item) => item.trust !== undefined)).toBe(false);
      const list = await client.callTool({
        name: 'list_messages',
        arguments: { limit: 20, select: 'id,thread_id,from,to,subject,snippet,date,unread,starred,folders,trust' },
      });
      const items = (list.structuredContent as { data: { id: string; trust?: Json }[] }).data;
      const hidden = items.find((item) => item.id === ids['hostile-hidden-instructions.eml']);
      // With select, the items are as selected: the whole block.
      expect(JSON.stringify(hidden?.trust)).toContain('hidden_instructions');
      const benign = items.find((item) => item.id === ids['benign-support-reply.eml'])?.trust as
        { injection: { score: number } } | undefined;
      expect(benign?.injection.score).toBeLessThan(0.3);
    } finally {
      await client.close();
    }

    const principal = {
      applicationId: await service.core.accounts.applications.defaultApplicationId(),
      via: 'local' as const,
    };
    const tools = createAgentpostTools({ core: service.core, principal, grantId });
    const execute = tools.get_message!.execute as unknown as (input: Json, options: Json) => Promise<unknown>;
    const result = await execute(
      { message_id: ids['hostile-known-contact-spoof.eml'] },
      { toolCallId: 'call-1', messages: [] },
    );
    expect(JSON.stringify(result)).toContain('known_contact');
  });
});
