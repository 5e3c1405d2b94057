/**
 * Issue 17 as an administrator and a sender meet it: everything configured through the official `nylas` SDK (lists,
 * rules, a policy, a workspace whose domain places new accounts), then real mail over SMTP into the real listener
 * (and, where installed, a real rspamd), and sends through the SDK. Each decision is then read back through the SDK's
 * `rules.listEvaluations`.
 */
import { MessageFields } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw, smtpClient } from '../helpers/mail.js';
import { SKIP_RSPAMD, startRspamd, type RunningRspamd } from '../helpers/rspamd.js';
import { startTestService, type TestService } from '../helpers/service.js';

const TEAM_DOMAIN = 'team.agentpost.localhost';
const OTHER_DOMAIN = 'partner.agentpost.localhost';
const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

/** A plain message as an outside mailer would hand it over. */
function plain(from: string, to: string, subject: string, body: string): string {
  return [
    `From: ${from}`,
    `To: ${to}`,
    `Subject: ${subject}`,
    'Date: Tue, 24 Nov 2026 10:00:00 +0000',
    `Message-ID: <${subject.replace(/\W+/g, '-')}@example.org>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');
}

describe.skipIf(SKIP_RSPAMD)('administration acting on real mail (SDK, SMTP, rspamd)', () => {
  let rspamd: RunningRspamd;
  let service: TestService;
  let transport: ReturnType<typeof smtpClient>;
  let agent: string;
  const agentEmail = `agent@${TEAM_DOMAIN}`;

  beforeAll(async () => {
    rspamd = await startRspamd();
    service = await startTestService({
      env: { AGENTPOST_RSPAMD_URL: rspamd.url, AGENTPOST_RATE_LIMIT_APPLICATION: '0' },
    });
    transport = smtpClient(service.smtpPort);
    const { nylas } = service;

    const blocked = await nylas.lists.create({ requestBody: { name: 'Blocked senders', type: 'domain' } });
    await nylas.lists.addItems({ listId: blocked.data.id, requestBody: { items: ['Spammy.Example ', 'bad.example'] } });
    const refuse = await nylas.rules.create({
      requestBody: {
        name: 'Refuse blocked domains',
        match: { conditions: [{ field: 'from.domain', operator: 'in_list', value: [blocked.data.id] }] },
        actions: [{ type: 'block' }],
      },
    });
    const receipts = await nylas.rules.create({
      requestBody: {
        name: 'Receipts',
        priority: 20,
        match: { conditions: [{ field: 'from.address', operator: 'contains', value: 'billing@' }] },
        actions: [{ type: 'assign_to_folder', value: 'Receipts' }, { type: 'mark_as_read' }],
      },
    });
    const noCompose = await nylas.rules.create({
      requestBody: {
        name: 'No cold mail to competitors',
        trigger: 'outbound',
        match: {
          conditions: [
            { field: 'recipient.domain', operator: 'is', value: 'competitor.example' },
            { field: 'outbound.type', operator: 'is', value: 'compose' },
          ],
        },
        actions: [{ type: 'block' }],
      },
    });
    const policy = await nylas.policies.create({
      requestBody: {
        name: 'Team policy',
        limits: { limitAttachmentAllowedTypes: ['application/pdf'], limitCountDailyEmailSent: 2 },
        spamDetection: { useHeaderAnomalyDetection: true, spamSensitivity: 1 },
      },
    });
    await nylas.workspaces.create({
      requestBody: {
        name: 'Team',
        domain: TEAM_DOMAIN,
        policyId: policy.data.id,
        ruleIds: [refuse.data.id, receipts.data.id, noCompose.data.id],
      },
    });
    // Created after the workspace: placed in it by its domain (auto_group).
    agent = await createMailbox(service, agentEmail);
  }, 60_000);
  afterAll(async () => {
    transport?.close();
    await service?.close();
    await rspamd?.close();
  });

  it('places the new account in the workspace of its domain', async () => {
    const grant = await request(service.url, 'GET', `/v3/grants/${agent}`, { key: service.apiKey });
    const team = (await service.nylas.workspaces.list()).data.find((workspace) => workspace.name === 'Team')!;
    expect(grant.body.data.workspace_id).toBe(team.workspaceId);
  });

  it('refuses at RCPT a sender on a domain list (550 5.7.1), and records it', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'news@mail.spammy.example',
      [agentEmail],
      plain('news@mail.spammy.example', agentEmail, 'Offer', 'Buy now'),
    );
    expect(reply.code).toBe(550);
    expect(reply.text).toMatch(/5\.7\.1/);
    expect(
      (await service.nylas.messages.list({ identifier: agent })).data.map((message) => message.subject),
    ).not.toContain('Offer');
    // Refusals at RCPT have no message transaction to ride in: their rows are written in small batches just after.
    const refusal = await eventually(async () =>
      (await service.nylas.rules.listEvaluations({ identifier: agent })).data.find(
        (entry) => entry.evaluationStage === 'smtp_rcpt' && entry.appliedActions?.blocked,
      ),
    );
    expect(refusal).toMatchObject({
      evaluationInput: { fromDomain: 'mail.spammy.example' },
      matchedRuleIds: [expect.any(String)],
    });
    expect(refusal.messageId).toBeUndefined();
  });

  it('files mail by a rule into a folder it creates by name, and strips an attachment the policy does not allow', async () => {
    await transport.sendMail({
      from: 'billing@shop.example',
      to: agentEmail,
      subject: 'Your receipt',
      text: 'Attached.',
      attachments: [
        { filename: 'receipt.pdf', content: Buffer.alloc(800, 1), contentType: 'application/pdf' },
        { filename: 'tool.exe', content: Buffer.alloc(600, 2), contentType: 'application/x-msdownload' },
      ],
    });
    const message = await eventually(
      async () =>
        (await service.nylas.messages.list({ identifier: agent, queryParams: { subject: 'Your receipt' } })).data[0],
    );
    const folders = (await service.nylas.folders.list({ identifier: agent })).data;
    const receipts = folders.find((folder) => folder.name === 'Receipts');
    expect(receipts).toBeDefined();
    expect(message.folders).toEqual([receipts!.id]);
    expect(message.unread).toBe(false);
    expect(message.attachments?.map((attachment) => attachment.filename)).toEqual(['receipt.pdf']);
    expect(
      (message as unknown as { removedAttachments?: { filename: string }[] }).removedAttachments?.map(
        (entry) => entry.filename,
      ),
    ).toEqual(['tool.exe']);

    const evaluation = (await service.nylas.rules.listEvaluations({ identifier: agent })).data.find(
      (entry) => entry.evaluationStage === 'inbox_processing' && entry.messageId === message.id,
    );
    expect(evaluation).toMatchObject({ appliedActions: { markedAsRead: true, folderIds: [receipts!.id] } });
  });

  it('puts GTUBE into junk by rspamd, with the verdict on the message', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'someone@example.org',
      [agentEmail],
      plain('someone@example.org', agentEmail, 'Test spam', `This is the GTUBE:\r\n${GTUBE}`),
    );
    expect(reply.code).toBe(250);
    const message = await eventually(
      async () =>
        (await service.nylas.messages.list({ identifier: agent, queryParams: { subject: 'Test spam', in: ['junk'] } }))
          .data[0],
    );
    expect(message.folders).toEqual(['junk']);
    expect((message as unknown as { spam?: { isSpam: boolean } }).spam?.isSpam).toBe(true);
    const clean = await sendRaw(
      service.smtpPort,
      'friend@example.org',
      [agentEmail],
      plain('friend@example.org', agentEmail, 'Lunch', 'Lunch on Friday?'),
    );
    expect(clean.code).toBe(250);
    const lunch = await eventually(
      async () => (await service.nylas.messages.list({ identifier: agent, queryParams: { subject: 'Lunch' } })).data[0],
    );
    expect(lunch.folders).toEqual(['inbox']);
    expect((lunch as unknown as { spam?: { isSpam: boolean } }).spam?.isSpam).toBe(false);
  });

  it('authenticates mail over SMTP: DKIM of another Agentpost domain passes, a byte-tampered copy fails', async () => {
    // A DKIM-signed message of another domain of this service: its outbound path signs it with the domain's key.
    const sender = await createMailbox(service, `sales@${OTHER_DOMAIN}`);
    const keeper = await createMailbox(service, `keeper@${OTHER_DOMAIN}`);
    const domains = await request(service.url, 'GET', '/v3/admin/domains', { key: service.apiKey });
    const domainId = (domains.body.data as { id: string; domain_address: string }[]).find(
      (domain) => domain.domain_address === OTHER_DOMAIN,
    )!.id;
    const info = await request(service.url, 'POST', `/v3/admin/domains/${domainId}/info`, {
      key: service.apiKey,
      body: { type: 'dkim' },
    });
    const record = info.body.data.attempt.options as { host: string; value: string };
    service.dns.txt.set(record.host, [[record.value]]);
    await service.nylas.messages.send({
      identifier: sender,
      requestBody: { to: [{ email: `keeper@${OTHER_DOMAIN}` }], subject: 'Signed hello', body: 'Signed body text.' },
    });
    const signed = await eventually(async () => {
      const raw = (
        await service.nylas.messages.list({ identifier: keeper, queryParams: { fields: MessageFields.RAW_MIME } })
      ).data[0]?.rawMime;
      return raw ? Buffer.from(raw, 'base64url') : undefined;
    });
    expect(signed.toString()).toMatch(/^DKIM-Signature:/);

    // The same bytes arrive over SMTP at the team's mailbox, then a copy with one byte of the body changed.
    expect((await sendRaw(service.smtpPort, `sales@${OTHER_DOMAIN}`, [agentEmail], signed)).code).toBe(250);
    const tampered = Buffer.from(signed);
    const at = tampered.indexOf('Signed body text.');
    tampered[at] = 's'.charCodeAt(0);
    expect((await sendRaw(service.smtpPort, `sales@${OTHER_DOMAIN}`, [agentEmail], tampered)).code).toBe(250);

    type Authenticated = { id: string; authenticationResults?: { dkim?: { result: string; domain?: string }[] } };
    const arrived = await eventually(async () => {
      const listed = (
        await service.nylas.messages.list({ identifier: agent, queryParams: { subject: 'Signed hello' } })
      ).data as unknown as Authenticated[];
      return listed.length === 2 ? listed : undefined;
    });
    const results = arrived.map((message) => message.authenticationResults?.dkim?.[0]?.result).sort();
    expect(results).toEqual(['fail', 'pass']);
    for (const message of arrived) {
      const raw = await request(service.url, 'GET', `/v3/grants/${agent}/messages/${message.id}?fields=raw_mime`, {
        key: service.apiKey,
      });
      const stored = Buffer.from(raw.body.data.raw_mime as string, 'base64url').toString();
      expect(stored).toMatch(new RegExp(`^Authentication-Results: ${service.config.mxHost.replace(/\./g, '\\.')};`));
      expect(stored).toMatch(
        new RegExp(
          `dkim=${message.authenticationResults!.dkim![0]!.result}\\b[^;]*header\\.i=@${OTHER_DOMAIN.replace(/\./g, '\\.')}`,
        ),
      );
    }
  });

  it('blocks an outbound send by a rule (403 naming it), and the third send of the day gets 429', async () => {
    const refused = await request(service.url, 'POST', `/v3/grants/${agent}/messages/send`, {
      key: service.apiKey,
      body: { to: [{ email: 'ceo@competitor.example' }], subject: 'Hello', body: 'Cold mail' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('No cold mail to competitors');

    // A recipient per send: example.org has no mail server here, so each one hard-bounces and is suppressed.
    for (const subject of ['First', 'Second']) {
      await service.nylas.messages.send({
        identifier: agent,
        requestBody: { to: [{ email: `friend-${subject.toLowerCase()}@example.org` }], subject, body: 'Hi' },
      });
    }
    const over = await request(service.url, 'POST', `/v3/grants/${agent}/messages/send`, {
      key: service.apiKey,
      body: { to: [{ email: 'friend@example.org' }], subject: 'Third', body: 'Hi' },
    });
    expect(over.status).toBe(429);
    expect(over.body.error.type).toBe('rate_limit_error');

    const outbound = (
      await service.nylas.rules.listEvaluations({ identifier: agent, queryParams: { limit: 50 } })
    ).data.filter((entry) => entry.evaluationStage === 'outbound_send');
    expect(outbound.filter((entry) => entry.appliedActions?.blocked)).toHaveLength(2);
    expect(outbound.filter((entry) => entry.messageId !== undefined)).toHaveLength(2);
  });
});
