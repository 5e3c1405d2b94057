/**
 * OpenAPI truth: the document served at /v3/openapi.json describes what the running server answers. For every
 * operation of the registry, one valid call is made against the real service and its response body is validated,
 * with ajv (JSON Schema draft 2020-12, strict), against the document's schema for that path, method and status;
 * the JSON request body sent is validated against the document's request schema too. Error answers (401 without a
 * key, 4xx for an unknown id) are validated against the error schema. The hand-written routes (attachment bytes, the
 * ICS feed, health, metrics) are checked for their documented status and media type, and every route registered on
 * the Hono app must appear in the document.
 *
 * A new operation fails this test until it gets a call in CALLS (or, with a reason, in SKIPPED).
 */
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type AnyOperation } from '../../src/index.js';
import { tables } from '../../storage/index.js';
import { createApp } from '../../server/index.js';
import { request, type JsonResponse } from '../helpers/http.js';
import { aggregateXml, reportEmail } from '../helpers/dmarc.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { addSyncedMessageRow, createImapGrant } from '../helpers/imap-grant.js';
import { startFakeModelServer, type FakeModelServer } from '../helpers/openai-compatible.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

// ajv-formats is CommonJS: its default export is the function under ESM, or `{ default }` through some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

const DOMAIN = 'openapi.agentpost.localhost';
const EMAIL = `agent@${DOMAIN}`;
const PEER = `peer@${DOMAIN}`;
const METRICS_TOKEN = 'openapi-live-metrics-token';
const HOUR = 3600;

type Json = Record<string, any>;

/** The keys of an OpenAPI path item that are operations. */
const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace']);

/** One call of an operation: the values of its path parameters, and its query, JSON body or multipart form. */
interface Call {
  params: Record<string, string>;
  query?: Record<string, string>;
  body?: Json;
  form?: FormData;
  /** The key to call with (default: the default application's). */
  key?: string;
}

/** The objects the calls need, created on first use. */
interface Fixtures {
  grant(): Promise<string>;
  message(): Promise<Json>;
  attachment(): Promise<Json>;
  scheduled(): Promise<string>;
  draft(): Promise<string>;
  folder(): Promise<string>;
  domain(): Promise<string>;
  webhook(): Promise<string>;
  /** The provider of a kept connector (microsoft), and the id of a credential of it. */
  connector(): Promise<string>;
  credential(): Promise<string>;
  calendar(): Promise<string>;
  event(): Promise<string>;
  invitation(): Promise<string>;
  contact(): Promise<string>;
  /** A connected (imap) grant (Smart Compose runs only there), and a message stored in it. */
  connected(): Promise<string>;
  connectedMessage(): Promise<string>;
  /** Creates a fresh object through the API (for deletions) and returns `data`. */
  create(path: string, body: Json): Promise<Json>;
  /** A fresh send held for approval (a gated_all grant, asked with a second key): its approval id. */
  approval(): Promise<string>;
  /** A send of a monitored grant listed for review: its review id. */
  review(): Promise<string>;
  /** The API key of a test-mode application (its test clock answers; the default application's does not). */
  testKey(): Promise<string>;
}

/** The operations this test cannot call, each with why. Keep it short. */
const SKIPPED: Record<string, string> = {};

const event = (start: number) => ({ title: 'Planning', when: { start_time: start, end_time: start + HOUR } });
const future = () => Math.floor(Date.now() / 1000) + 7 * 24 * HOUR;
/** A fresh tentative hold of the grant (its own address), one slot a week ahead. */
const newHold = async (f: Fixtures) => {
  const start = future();
  return f.create('/v3/calendars/holds', {
    grant_id: await f.grant(),
    participants: [{ email: EMAIL }],
    slots: [{ start_time: start, end_time: start + HOUR }],
  });
};

/** A fresh message sent by the grant to an outside address. */
const newSend = async (f: Fixtures, subject: string) =>
  f.create(`/v3/grants/${await f.grant()}/messages/send`, {
    to: [{ email: 'someone@example.com' }],
    subject,
    body: 'x',
  });

/** A valid call of each operation, by name. */
const CALLS: Record<string, (f: Fixtures) => Promise<Call>> = {
  get_application: async () => ({ params: {} }),
  // Without callback_uris: the list given would replace the redirect URIs other calls made.
  update_application: async () => ({
    params: {},
    body: {
      branding: { description: 'Described', website_url: 'https://app.example.com' },
      hosted_authentication: { title: 'Sign in', spacing: 4 },
      idp_settings: { origins: 'https://app.example.com' },
      domain: 'auth.example.com',
      additional_settings: { rotate_refresh_token: true },
    },
  }),
  list_redirect_uris: async (f) => {
    await f.create('/v3/applications/redirect-uris', { url: 'https://app.example.com/listed', platform: 'web' });
    return { params: {} };
  },
  create_redirect_uri: async () => ({ params: {}, body: { url: 'https://app.example.com/callback', platform: 'web' } }),
  get_redirect_uri: async (f) => ({
    params: {
      redirect_uri_id: (
        await f.create('/v3/applications/redirect-uris', { url: 'https://app.example.com/found', platform: 'web' })
      ).id,
    },
  }),
  update_redirect_uri: async (f) => ({
    params: {
      redirect_uri_id: (
        await f.create('/v3/applications/redirect-uris', { url: 'https://app.example.com/old', platform: 'web' })
      ).id,
    },
    body: { url: 'https://app.example.com/new' },
  }),
  delete_redirect_uri: async (f) => ({
    params: {
      redirect_uri_id: (
        await f.create('/v3/applications/redirect-uris', { url: 'https://app.example.com/doomed', platform: 'web' })
      ).id,
    },
  }),
  send_transactional_message: async (f) => {
    await f.grant();
    return {
      params: { domain_name: DOMAIN },
      body: { from: [{ email: `noreply@${DOMAIN}` }], to: [{ email: PEER }], subject: 'Receipt', body: 'Thanks' },
    };
  },
  clean_messages: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { message_id: [(await f.message()).id] },
  }),
  list_import_events: async (f) => {
    await f.event();
    return {
      params: { grant_id: await f.grant() },
      query: {
        calendar_id: 'primary',
        start: String(future() - 30 * 24 * HOUR),
        end: String(future() + 30 * 24 * HOUR),
      },
    };
  },
  list_contact_groups: async (f) => ({ params: { grant_id: await f.grant() } }),
  create_attachment_upload: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { filename: 'report.pdf', content_type: 'application/pdf', size: 5 },
  }),
  complete_attachment_upload: async (f) => {
    const grant = await f.grant();
    const session = await f.create(`/v3/grants/${grant}/attachment-uploads`, {
      filename: 'notes.txt',
      content_type: 'text/plain',
      size: 5,
    });
    const put = await fetch(session.url, { method: 'PUT', body: 'hello' });
    expect(put.status).toBe(200);
    return { params: { grant_id: grant, attachment_id: session.attachment_id } };
  },

  create_agent_account: async () => ({
    params: {},
    body: { provider: 'nylas', settings: { email: `created@${DOMAIN}` } },
  }),
  list_grants: async () => ({ params: {}, query: { limit: '5' } }),
  get_grant: async (f) => ({ params: { grant_id: await f.grant() } }),
  update_grant: async (f) => ({ params: { grant_id: await f.grant() }, body: { name: 'Agent' } }),
  // A grant of their own: the shared one must stay writable for the calls after them.
  suspend_grant: async (f) => {
    const created = await f.create('/v3/connect/custom', { provider: 'nylas', settings: { email: `halt@${DOMAIN}` } });
    return { params: { grant_id: created.id }, body: { reason: 'checked by the live OpenAPI test' } };
  },
  resume_grant: async (f) => {
    const created = await f.create('/v3/connect/custom', { provider: 'nylas', settings: { email: `halt@${DOMAIN}` } });
    return { params: { grant_id: created.id } };
  },
  delete_grant: async (f) => {
    const created = await f.create('/v3/connect/custom', { provider: 'nylas', settings: { email: `gone@${DOMAIN}` } });
    return { params: { grant_id: created.id } };
  },

  list_folders: async (f) => ({ params: { grant_id: await f.grant() } }),
  create_folder: async (f) => ({ params: { grant_id: await f.grant() }, body: { name: 'Projects' } }),
  get_folder: async (f) => ({ params: { grant_id: await f.grant(), folder_id: await f.folder() } }),
  update_folder: async (f) => ({
    params: { grant_id: await f.grant(), folder_id: await f.folder() },
    body: { name: 'Renamed' },
  }),
  delete_folder: async (f) => {
    const grant = await f.grant();
    const created = await f.create(`/v3/grants/${grant}/folders`, { name: 'Doomed' });
    return { params: { grant_id: grant, folder_id: created.id } };
  },

  list_messages: async (f) => {
    await f.message();
    return { params: { grant_id: await f.grant() }, query: { limit: '10' } };
  },
  compose_message: async (f) => ({
    params: { grant_id: await f.connected() },
    body: { prompt: 'Tell the team the launch moves to May' },
  }),
  compose_message_reply: async (f) => ({
    params: { grant_id: await f.connected(), message_id: await f.connectedMessage() },
    body: { prompt: 'Accept politely' },
  }),
  get_message: async (f) => ({ params: { grant_id: await f.grant(), message_id: (await f.message()).id } }),
  // A mail the mailbox sends itself reaches its inbox: the wait answers it.
  wait_for_message: async (f) => {
    const grant = await f.grant();
    await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: EMAIL }],
      subject: 'Your code is 482913',
      body: '<p>Verification code: 482913. <a href="https://app.example.com/verify?t=1">Verify</a></p>',
    });
    return {
      params: { grant_id: grant },
      query: { subject: 'your code', received_after: String(Math.floor(Date.now() / 1000) - 60), timeout: '30' },
    };
  },
  update_message: async (f) => ({
    params: { grant_id: await f.grant(), message_id: (await f.message()).id },
    body: { starred: true, unread: false },
  }),
  delete_message: async (f) => {
    const grant = await f.grant();
    const sent = await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'someone@example.com' }],
      subject: 'Doomed',
      body: 'x',
    });
    return { params: { grant_id: grant, message_id: sent.id } };
  },
  get_message_engagement: async (f) => {
    const grant = await f.grant();
    const sent = await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'someone@example.com' }],
      subject: 'Tracked',
      body: '<p><a href="https://example.com/">x</a></p>',
      tracking_options: { opens: true, links: true, label: 'live' },
    });
    return { params: { grant_id: grant, message_id: sent.id } };
  },
  get_attachment_metadata: async (f) => {
    const attachment = await f.attachment();
    return {
      params: { grant_id: await f.grant(), attachment_id: attachment.id },
      query: { message_id: (await f.message()).id },
    };
  },
  get_attachment: async (f) => {
    const attachment = await f.attachment();
    return {
      params: { grant_id: await f.grant(), attachment_id: attachment.id },
      query: { message_id: (await f.message()).id },
    };
  },
  read_attachment: async (f) => {
    const attachment = await f.attachment();
    return {
      params: { grant_id: await f.grant(), attachment_id: attachment.id },
      query: { message_id: (await f.message()).id, max_tokens: '50' },
    };
  },
  send_message: async (f) => {
    // Multipart, as the nylas SDK sends large attachments: the JSON in `message`, one file part.
    const form = new FormData();
    form.set(
      'message',
      JSON.stringify({ to: [{ email: 'reader@example.com' }], subject: 'Multipart', body: 'See the file.' }),
    );
    form.set('file0', new Blob(['hello, file'], { type: 'text/plain' }), 'hello.txt');
    return { params: { grant_id: await f.grant() }, form };
  },
  list_scheduled_messages: async (f) => {
    await f.scheduled();
    return { params: { grant_id: await f.grant() } };
  },
  get_scheduled_message: async (f) => ({ params: { grant_id: await f.grant(), schedule_id: await f.scheduled() } }),
  stop_scheduled_message: async (f) => {
    const grant = await f.grant();
    const scheduled = await request(await baseUrl(), 'POST', `/v3/grants/${grant}/messages/send`, {
      key: apiKey(),
      body: { to: [{ email: 'later@example.com' }], subject: 'Later', body: 'x', send_at: future() },
    });
    return { params: { grant_id: grant, schedule_id: scheduled.body.schedule_id } };
  },

  list_drafts: async (f) => {
    await f.draft();
    return { params: { grant_id: await f.grant() } };
  },
  create_draft: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { subject: 'Draft', body: 'Hello', to: [{ email: 'reader@example.com' }] },
  }),
  get_draft: async (f) => ({ params: { grant_id: await f.grant(), draft_id: await f.draft() } }),
  update_draft: async (f) => ({
    params: { grant_id: await f.grant(), draft_id: await f.draft() },
    body: { subject: 'Draft, revised' },
  }),
  delete_draft: async (f) => {
    const grant = await f.grant();
    const created = await f.create(`/v3/grants/${grant}/drafts`, { subject: 'Doomed draft', body: 'x' });
    return { params: { grant_id: grant, draft_id: created.id } };
  },
  send_draft: async (f) => {
    const grant = await f.grant();
    const created = await f.create(`/v3/grants/${grant}/drafts`, {
      subject: 'Sent draft',
      body: 'x',
      to: [{ email: 'reader@example.com' }],
    });
    return { params: { grant_id: grant, draft_id: created.id } };
  },

  list_threads: async (f) => {
    await f.message();
    return { params: { grant_id: await f.grant() } };
  },
  get_thread: async (f) => ({ params: { grant_id: await f.grant(), thread_id: (await f.message()).thread_id } }),
  update_thread: async (f) => ({
    params: { grant_id: await f.grant(), thread_id: (await f.message()).thread_id },
    body: { starred: true },
  }),
  create_follow_up: async (f) => ({
    params: { grant_id: await f.grant(), message_id: (await newSend(f, 'Followed up')).id },
    body: { after_seconds: 3600, body: 'Any news?' },
  }),
  list_follow_ups: async (f) => {
    const grant = await f.grant();
    await f.create(`/v3/grants/${grant}/messages/${(await newSend(f, 'Listed follow-up')).id}/follow-up`, {
      after_seconds: 3600,
      body: 'Any news?',
    });
    return { params: { grant_id: grant }, query: { status: 'pending' } };
  },
  get_follow_up: async (f) => {
    const grant = await f.grant();
    const made = await f.create(`/v3/grants/${grant}/messages/${(await newSend(f, 'Read follow-up')).id}/follow-up`, {
      after_seconds: 3600,
      body: 'Any news?',
    });
    return { params: { grant_id: grant, follow_up_id: made.id } };
  },
  cancel_follow_up: async (f) => {
    const grant = await f.grant();
    const made = await f.create(
      `/v3/grants/${grant}/messages/${(await newSend(f, 'Cancelled follow-up')).id}/follow-up`,
      {
        after_seconds: 3600,
        body: 'Any news?',
      },
    );
    return { params: { grant_id: grant, follow_up_id: made.id } };
  },
  get_test_clock: async (f) => ({ params: {}, key: await f.testKey() }),
  advance_test_clock: async (f) => ({ params: {}, body: { seconds: 60 }, key: await f.testKey() }),
  claim_thread: async (f) => {
    const grant = await f.grant();
    const sent = await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'someone@example.com' }],
      subject: 'Claimed thread',
      body: 'x',
    });
    return { params: { grant_id: grant, thread_id: sent.thread_id }, body: { ttl_seconds: 60 } };
  },
  release_thread: async (f) => {
    const grant = await f.grant();
    const sent = await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'someone@example.com' }],
      subject: 'Released thread',
      body: 'x',
    });
    const claim = await f.create(`/v3/grants/${grant}/threads/${sent.thread_id as string}/claim`, {});
    return { params: { grant_id: grant, thread_id: sent.thread_id }, body: { claim_token: claim.claim_token } };
  },
  delete_thread: async (f) => {
    const grant = await f.grant();
    const sent = await f.create(`/v3/grants/${grant}/messages/send`, {
      to: [{ email: 'someone@example.com' }],
      subject: 'Doomed thread',
      body: 'x',
    });
    return { params: { grant_id: grant, thread_id: sent.thread_id } };
  },

  list_domains: async (f) => {
    await f.domain();
    return { params: {} };
  },
  create_domain: async () => ({ params: {}, body: { name: 'Created', domain_address: 'created.agentpost.localhost' } }),
  get_domain: async (f) => ({ params: { domain_id: await f.domain() } }),
  update_domain: async (f) => ({ params: { domain_id: await f.domain() }, body: { name: 'OpenAPI domain' } }),
  delete_domain: async (f) => {
    const created = await f.create('/v3/admin/domains', {
      name: 'Doomed',
      domain_address: 'doomed.agentpost.localhost',
    });
    return { params: { domain_id: created.id } };
  },
  get_domain_verification_info: async (f) => ({ params: { domain_id: await f.domain() }, body: { type: 'mx' } }),
  verify_domain: async (f) => ({ params: { domain_id: await f.domain() }, body: { type: 'mx' } }),
  list_domain_dmarc_reports: async (f) => {
    // One report received as the SMTP listener hands it over, so the list's items are checked against the schema.
    const xml = aggregateXml({
      domain: DOMAIN,
      reportId: 'openapi-1',
      records: [{ ip: '192.0.2.1', count: 2, dkim: 'fail' }],
    });
    const outcome = await service.core.deliverability.dmarcReports.receive({
      raw: reportEmail({
        to: `dmarc-reports@${DOMAIN}`,
        file: Buffer.from(xml),
        filename: 'r.xml',
        contentType: 'text/xml',
      }),
      rcptTo: [`dmarc-reports@${DOMAIN}`],
    });
    expect(outcome.recorded).toHaveLength(1);
    return { params: { domain_id: await f.domain() } };
  },

  list_domain_sending_days: async (f) => ({ params: { domain_id: await f.domain() }, query: { days: '7' } }),
  list_delivery_reports: async () => ({ params: {}, query: { kind: 'bounce' } }),

  create_webhook: async () => ({
    params: {},
    body: { trigger_types: ['message.created'], webhook_url: receiver.url, description: 'created' },
  }),
  list_webhooks: async (f) => {
    await f.webhook();
    return { params: {} };
  },
  get_webhook_ip_addresses: async () => ({ params: {} }),
  get_webhook: async (f) => ({ params: { webhook_id: await f.webhook() } }),
  update_webhook: async (f) => ({ params: { webhook_id: await f.webhook() }, body: { description: 'updated' } }),
  rotate_webhook_secret: async (f) => ({ params: { webhook_id: await f.webhook() } }),
  list_webhook_deliveries: async (f) => ({ params: { webhook_id: await f.webhook() } }),
  retry_webhook_delivery: async (f) => {
    // A notification waiting for its next attempt, as a failed attempt leaves it (retrying it makes it due now).
    const webhookId = await f.webhook();
    const { id } = await service.core.jobs.queue.enqueue({
      kind: 'webhook.deliver',
      payload: {
        webhook_id: webhookId,
        notification: {
          id: 'retried-notification',
          type: 'message.created',
          application_id: 'x',
          grant_id: null,
          time: 1,
          object: {},
        },
      },
      runAt: new Date(Date.now() + HOUR * 1000),
      orderKey: `${webhookId} `,
    });
    return { params: { webhook_id: webhookId, delivery_id: id } };
  },
  delete_webhook: async (f) => {
    const created = await f.create('/v3/webhooks', { trigger_types: ['event.created'], webhook_url: receiver.url });
    return { params: { webhook_id: created.id } };
  },

  create_api_key: async () => ({
    params: {},
    body: { name: 'live', permissions: ['mail.read'], expires_at: Math.floor(Date.now() / 1000) + 3600 },
  }),
  list_api_keys: async (f) => {
    await f.create('/v3/api-keys', { name: 'listed' });
    return { params: {} };
  },
  get_current_api_key: async () => ({ params: {} }),
  get_api_key: async (f) => ({ params: { api_key_id: (await f.create('/v3/api-keys', { name: 'one' })).id } }),
  delete_api_key: async (f) => ({ params: { api_key_id: (await f.create('/v3/api-keys', { name: 'gone' })).id } }),
  list_access_log: async () => ({ params: {} }),
  get_overview: async () => ({ params: {}, query: { time_zone: 'Europe/Paris' } }),
  list_approvals: async (f) => {
    await f.approval();
    return { params: {}, query: { status: 'pending' } };
  },
  get_approval: async (f) => ({ params: { approval_id: await f.approval() } }),
  approve_approval: async (f) => ({ params: { approval_id: await f.approval() }, body: { reason: 'Looks right' } }),
  reject_approval: async (f) => ({ params: { approval_id: await f.approval() }, body: { reason: 'Not this one' } }),
  list_send_reviews: async (f) => {
    await f.review();
    return { params: {} };
  },
  mark_send_review: async (f) => ({ params: { review_id: await f.review() }, body: { status: 'ok', note: 'Fine' } }),
  // An access token for a grant, issued by the token endpoint's client_credentials grant.
  get_token_info: async (f) => {
    const grantId = await f.grant();
    const details = await request(service.url, 'GET', '/v3/applications', { key: service.apiKey });
    const applicationId = (details.body as Json).data.application_id as string;
    const answer = await fetch(`${service.url}/v3/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.apiKey}` },
      body: JSON.stringify({ client_id: applicationId, grant_type: 'client_credentials', grant_id: grantId }),
    });
    return { params: {}, query: { access_token: ((await answer.json()) as Json).access_token as string } };
  },
  detect_provider: async () => ({ params: {}, query: { email: 'someone@gmail.com' } }),

  create_connector: async () => ({
    params: {},
    body: { provider: 'google', name: 'Google', settings: { client_id: 'id', client_secret: 'secret' } },
  }),
  list_connectors: async (f) => {
    await f.connector();
    return { params: {} };
  },
  get_connector: async (f) => ({ params: { provider: await f.connector() } }),
  update_connector: async (f) => ({ params: { provider: await f.connector() }, body: { scope: ['openid'] } }),
  update_connector_put: async (f) => ({ params: { provider: await f.connector() }, body: { name: 'Put' } }),
  delete_connector: async (f) => {
    await f.create('/v3/connectors', { provider: 'zoom', settings: { client_id: 'id', client_secret: 'secret' } });
    return { params: { provider: 'zoom' } };
  },
  create_connector_credential: async (f) => ({
    params: { provider: await f.connector() },
    body: { name: 'Created', credential_type: 'connector', credential_data: { client_id: 'other' } },
  }),
  list_connector_credentials: async (f) => {
    await f.credential();
    return { params: { provider: await f.connector() } };
  },
  get_connector_credential: async (f) => ({
    params: { provider: await f.connector(), credential_id: await f.credential() },
  }),
  update_connector_credential: async (f) => ({
    params: { provider: await f.connector(), credential_id: await f.credential() },
    body: { name: 'Updated' },
  }),
  delete_connector_credential: async (f) => {
    const provider = await f.connector();
    const created = await f.create(`/v3/connectors/${provider}/creds`, {
      name: 'Deleted',
      credential_type: 'connector',
      credential_data: { client_id: 'gone' },
    });
    return { params: { provider, credential_id: created.id } };
  },

  list_suppressions: async (f) => {
    await f.create('/v3/suppressions', { email: 'listed@example.com' });
    return { params: {}, query: { email: 'listed@example.com' } };
  },
  add_suppression: async () => ({ params: {}, body: { email: 'added@example.com' } }),
  remove_suppression: async (f) => {
    await f.create('/v3/suppressions', { email: 'removed@example.com' });
    return { params: { email: 'removed@example.com' } };
  },

  find_availability: async () => {
    const start = future();
    return {
      params: {},
      body: { start_time: start, end_time: start + 8 * HOUR, duration_minutes: 30, participants: [{ email: EMAIL }] },
    };
  },
  get_free_busy: async (f) => {
    const start = future();
    return {
      params: { grant_id: await f.grant() },
      body: { start_time: start, end_time: start + 8 * HOUR, emails: [EMAIL] },
    };
  },
  create_hold: async (f) => {
    const start = future();
    return {
      params: {},
      body: {
        grant_id: await f.grant(),
        participants: [{ email: EMAIL }],
        slots: [{ start_time: start, end_time: start + HOUR }],
        ttl_seconds: 600,
      },
    };
  },
  get_hold: async (f) => ({ params: { hold_id: (await newHold(f)).hold_id as string } }),
  confirm_hold: async (f) => {
    const hold = await newHold(f);
    const [slot] = hold.slots as { start_time: number; end_time: number }[];
    return { params: { hold_id: hold.hold_id as string }, body: { ...slot, title: 'Held' } };
  },
  release_hold: async (f) => ({ params: { hold_id: (await newHold(f)).hold_id as string } }),
  list_calendars: async (f) => {
    await f.calendar();
    return { params: { grant_id: await f.grant() } };
  },
  create_calendar: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { name: 'Created', timezone: 'Europe/Paris' },
  }),
  get_calendar: async (f) => ({ params: { grant_id: await f.grant(), calendar_id: await f.calendar() } }),
  update_calendar: async (f) => ({
    params: { grant_id: await f.grant(), calendar_id: await f.calendar() },
    body: { description: 'Updated' },
  }),
  delete_calendar: async (f) => {
    const grant = await f.grant();
    const created = await f.create(`/v3/grants/${grant}/calendars`, { name: 'Doomed' });
    return { params: { grant_id: grant, calendar_id: created.id } };
  },
  list_events: async (f) => {
    await f.event();
    return { params: { grant_id: await f.grant() }, query: { calendar_id: await f.calendar() } };
  },
  create_event: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { calendar_id: await f.calendar(), notify_participants: false, ...event(future()) },
  }),
  get_event: async (f) => ({
    params: { grant_id: await f.grant(), event_id: await f.event() },
    query: { calendar_id: await f.calendar() },
  }),
  update_event: async (f) => ({
    params: { grant_id: await f.grant(), event_id: await f.event() },
    body: { calendar_id: await f.calendar(), title: 'Renamed', notify_participants: false },
  }),
  delete_event: async (f) => {
    const grant = await f.grant();
    const calendar = await f.calendar();
    const created = await f.create(`/v3/grants/${grant}/events`, {
      calendar_id: calendar,
      notify_participants: false,
      ...event(future()),
    });
    return {
      params: { grant_id: grant, event_id: created.id },
      query: { calendar_id: calendar, notify_participants: 'false' },
    };
  },
  send_rsvp: async (f) => ({
    params: { grant_id: await f.grant(), event_id: await f.invitation() },
    body: { calendar_id: 'primary', status: 'yes' },
  }),

  list_contacts: async (f) => {
    await f.contact();
    return { params: { grant_id: await f.grant() } };
  },
  create_contact: async (f) => ({
    params: { grant_id: await f.grant() },
    body: { given_name: 'Ada', emails: [{ email: 'ada@example.com', type: 'work' }] },
  }),
  get_contact: async (f) => ({ params: { grant_id: await f.grant(), contact_id: await f.contact() } }),
  update_contact: async (f) => ({
    params: { grant_id: await f.grant(), contact_id: await f.contact() },
    body: { surname: 'Lovelace' },
  }),
  delete_contact: async (f) => {
    const grant = await f.grant();
    const created = await f.create(`/v3/grants/${grant}/contacts`, { given_name: 'Doomed' });
    return { params: { grant_id: grant, contact_id: created.id } };
  },

  list_workspaces: async () => ({ params: {} }),
  create_workspace: async () => ({
    params: {},
    body: { name: 'Created', domain: 'created.example', auto_group: false },
  }),
  auto_group_workspaces: async () => ({ params: {}, body: { invalid_also: false } }),
  get_workspace: async (f) => ({
    params: { workspace_id: (await f.create('/v3/workspaces', { name: 'Found' })).workspace_id },
  }),
  update_workspace: async (f) => ({
    params: { workspace_id: (await f.create('/v3/workspaces', { name: 'Old' })).workspace_id },
    body: { name: 'New', policy_id: null },
  }),
  delete_workspace: async (f) => ({
    params: { workspace_id: (await f.create('/v3/workspaces', { name: 'Doomed' })).workspace_id },
  }),
  manual_assign_workspace: async (f) => ({
    params: { workspace_id: (await f.create('/v3/workspaces', { name: 'Assigned' })).workspace_id },
    body: { assign_grants: [await f.grant()] },
  }),
  list_policies: async (f) => {
    await f.create('/v3/policies', { name: 'Listed' });
    return { params: {}, query: { limit: '5' } };
  },
  create_policy: async () => ({
    params: {},
    body: {
      name: 'Created',
      limits: { limit_count_daily_email_sent: -1, limit_inbox_retention_period: 30, limit_spam_retention_period: 7 },
      spam_detection: { spam_sensitivity: 1.5 },
      options: { additional_folders: ['Receipts'] },
    },
  }),
  get_policy: async (f) => ({ params: { policy_id: (await f.create('/v3/policies', { name: 'Found' })).id } }),
  update_policy: async (f) => ({
    params: { policy_id: (await f.create('/v3/policies', { name: 'Old' })).id },
    body: { name: 'New', limits: { limit_size_total_mime: 1000000 } },
  }),
  delete_policy: async (f) => ({ params: { policy_id: (await f.create('/v3/policies', { name: 'Doomed' })).id } }),
  list_rules: async (f) => {
    await f.create('/v3/rules', { name: 'Listed', match: { conditions: [] }, actions: [{ type: 'mark_as_read' }] });
    return { params: {}, query: { limit: '5' } };
  },
  create_rule: async () => ({
    params: {},
    body: {
      name: 'Created',
      match: { operator: 'any', conditions: [{ field: 'from.domain', operator: 'is', value: 'example.com' }] },
      actions: [{ type: 'assign_to_folder', value: 'Example' }],
    },
  }),
  get_rule: async (f) => ({
    params: {
      rule_id: (
        await f.create('/v3/rules', { name: 'Found', match: { conditions: [] }, actions: [{ type: 'archive' }] })
      ).id,
    },
  }),
  update_rule: async (f) => ({
    params: {
      rule_id: (await f.create('/v3/rules', { name: 'Old', match: { conditions: [] }, actions: [{ type: 'archive' }] }))
        .id,
    },
    body: { priority: 3, enabled: false },
  }),
  delete_rule: async (f) => ({
    params: {
      rule_id: (
        await f.create('/v3/rules', { name: 'Doomed', match: { conditions: [] }, actions: [{ type: 'trash' }] })
      ).id,
    },
  }),
  list_rule_evaluations: async (f) => ({
    params: { grant_id: await f.grant() },
    query: {
      limit: '5',
      rule_id: (
        await f.create('/v3/rules', { name: 'Audited', match: { conditions: [] }, actions: [{ type: 'archive' }] })
      ).id,
    },
  }),
  list_lists: async (f) => {
    await f.create('/v3/lists', { name: 'Listed', type: 'tld' });
    return { params: {}, query: { limit: '5' } };
  },
  create_list: async () => ({ params: {}, body: { name: 'Created', description: 'partners', type: 'domain' } }),
  get_list: async (f) => ({
    params: { list_id: (await f.create('/v3/lists', { name: 'Found', type: 'address' })).id },
  }),
  update_list: async (f) => ({
    params: { list_id: (await f.create('/v3/lists', { name: 'Old', type: 'address' })).id },
    body: { name: 'New', description: 'renamed' },
  }),
  delete_list: async (f) => ({
    params: { list_id: (await f.create('/v3/lists', { name: 'Doomed', type: 'tld' })).id },
  }),
  list_list_items: async (f) => {
    const list = await f.create('/v3/lists', { name: 'With items', type: 'domain' });
    await f.create(`/v3/lists/${list.id}/items`, { items: ['a.example', 'b.example'] });
    return { params: { list_id: list.id }, query: { limit: '1' } };
  },
  add_list_items: async (f) => ({
    params: { list_id: (await f.create('/v3/lists', { name: 'Added to', type: 'domain' })).id },
    body: { items: ['Example.COM '] },
  }),
  remove_list_items: async (f) => {
    const list = await f.create('/v3/lists', { name: 'Removed from', type: 'tld' });
    await f.create(`/v3/lists/${list.id}/items`, { items: ['com', 'net'] });
    return { params: { list_id: list.id }, body: { items: ['net'] } };
  },
};

let service: TestService;
let sink: SmtpSink;
let receiver: WebhookReceiver;
const baseUrl = async () => service.url;
const apiKey = () => service.apiKey;

/** `:param` → `{param}` under /v3, as the document names paths. */
const documentPath = (path: string) => `/v3${path.replace(/:([a-z_]+)/g, '{$1}')}`;
/** A JSON pointer's escaping of one segment. */
const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
const COMPONENTS = 'urn:agentpost:openapi-components';

describe('the OpenAPI document against the live server', () => {
  let document: Json;
  let ajv: Ajv2020;
  let made: Fixtures;
  const validators = new Map<string, ValidateFunction>();

  /** The validator of a schema found at a JSON pointer of the document (its component `$ref`s resolved). */
  function validatorAt(...segments: string[]): ValidateFunction {
    const key = segments.join('/');
    let validate = validators.get(key);
    if (!validate) {
      let schema: unknown = document;
      for (const segment of segments) {
        schema = (schema as Json | undefined)?.[segment];
        if (schema === undefined) throw new Error(`the document has nothing at ${segments.map(pointer).join('/')}`);
      }
      validate = ajv.compile(schema as Json);
      validators.set(key, validate);
    }
    return validate;
  }

  function expectValid(validate: ValidateFunction, value: unknown, what: string) {
    const valid = validate(value);
    expect(
      valid,
      `${what}: ${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(value).slice(0, 2000)}`,
    ).toBe(true);
  }

  let model: FakeModelServer;

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    model = await startFakeModelServer();
    service = await startTestService({
      env: {
        AGENTPOST_AI_PROVIDER: 'openai-compatible',
        AGENTPOST_AI_MODEL: 'loopback',
        AGENTPOST_AI_BASE_URL: model.baseUrl,
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_METRICS_TOKEN: METRICS_TOKEN,
        AGENTPOST_RATE_LIMIT_FAILED_AUTH: '0',
      },
    });
    await createMailbox(service, EMAIL);
    await createMailbox(service, PEER);
    const served = await request(service.url, 'GET', '/v3/openapi.json');
    expect(served.status).toBe(200);
    // Component `$ref`s point into one schema of their own, so each response schema compiles alone.
    document = JSON.parse(
      JSON.stringify(served.body).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`),
    ) as Json;
    ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: COMPONENTS, $defs: document.components.schemas });
    made = fixtures();
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
    await receiver?.close();
    await model?.close();
  });

  function fixtures(): Fixtures {
    const memo = new Map<string, Promise<unknown>>();
    const once = <T>(name: string, make: () => Promise<T>): Promise<T> => {
      if (!memo.has(name)) memo.set(name, make());
      return memo.get(name) as Promise<T>;
    };
    const create = async (path: string, body: Json): Promise<Json> => {
      const response = await request(service.url, 'POST', path, { key: service.apiKey, body });
      if (response.status >= 300) throw new Error(`POST ${path}: ${response.status} ${response.text}`);
      return response.body.data;
    };
    const f: Fixtures = {
      create,
      testKey: () =>
        once('testKey', async () => {
          const made = await service.core.accounts.applications.createApplication({
            name: 'OpenAPI test mode',
            plan: 'trial',
            testMode: true,
          });
          return made.apiKey;
        }),
      grant: () =>
        once('grant', async () => {
          const grants = await request(service.url, 'GET', '/v3/grants', { key: service.apiKey });
          return (grants.body.data as Json[]).find((grant) => grant.email === EMAIL)!.id as string;
        }),
      message: () =>
        once('message', async () =>
          create(`/v3/grants/${await f.grant()}/messages/send`, {
            to: [{ email: PEER, name: 'Peer' }],
            subject: 'Report',
            body: '<p>The report is attached.</p>',
            attachments: [
              {
                filename: 'report.txt',
                content_type: 'text/plain',
                content: Buffer.from('the report').toString('base64'),
              },
            ],
          }),
        ),
      attachment: () => once('attachment', async () => ((await f.message()).attachments as Json[])[0]!),
      scheduled: () =>
        once('scheduled', async () => {
          const response = await request(service.url, 'POST', `/v3/grants/${await f.grant()}/messages/send`, {
            key: service.apiKey,
            body: { to: [{ email: 'later@example.com' }], subject: 'Later', body: 'x', send_at: future() },
          });
          return response.body.schedule_id as string;
        }),
      draft: () =>
        once(
          'draft',
          async () =>
            (await create(`/v3/grants/${await f.grant()}/drafts`, { subject: 'Kept draft', body: 'x' })).id as string,
        ),
      folder: () =>
        once(
          'folder',
          async () => (await create(`/v3/grants/${await f.grant()}/folders`, { name: 'Kept' })).id as string,
        ),
      domain: () =>
        once('domain', async () => {
          const domains = await request(service.url, 'GET', '/v3/admin/domains', { key: service.apiKey });
          return (domains.body.data as Json[]).find((domain) => domain.domain_address === DOMAIN)!.id as string;
        }),
      webhook: () =>
        once(
          'webhook',
          async () =>
            (await create('/v3/webhooks', { trigger_types: ['message.created'], webhook_url: receiver.url }))
              .id as string,
        ),
      connector: () =>
        once('connector', async () => {
          await create('/v3/connectors', {
            provider: 'microsoft',
            settings: { client_id: 'id', client_secret: 'secret' },
          });
          return 'microsoft';
        }),
      credential: () =>
        once(
          'credential',
          async () =>
            (
              await create(`/v3/connectors/${await f.connector()}/creds`, {
                name: 'Kept',
                credential_type: 'adminconsent',
                credential_data: { client_id: 'app', client_secret: 'secret' },
              })
            ).id as string,
        ),
      calendar: () =>
        once(
          'calendar',
          async () => (await create(`/v3/grants/${await f.grant()}/calendars`, { name: 'Kept' })).id as string,
        ),
      event: () =>
        once('event', async () => {
          const calendar = await f.calendar();
          return (
            await create(`/v3/grants/${await f.grant()}/events?calendar_id=${calendar}`, {
              calendar_id: calendar,
              notify_participants: false,
              ...event(future()),
            })
          ).id as string;
        }),
      invitation: () =>
        once('invitation', async () => {
          // An invitation received by mail (the organizer is someone else), as test/server/events.test.ts makes one.
          const grantId = await f.grant();
          const grant = (await service.core.deps.db.orm.query.grants.findFirst({
            where: eq(tables.grants.id, grantId),
          }))!;
          const ics = readFileSync(new URL('../fixtures/ics/outlook-windows-tz.ics', import.meta.url), 'utf8')
            .replaceAll('agent@invites.agentpost.localhost', EMAIL)
            .replaceAll('agent@invi\r\n tes.agentpost.localhost', EMAIL);
          const [outcome] = await service.core.calendar.events.applyInvitation(grant, {
            sender: 'bob@contoso.example',
            ics,
          });
          return outcome!.eventId!;
        }),
      connected: () =>
        once('connected', async () =>
          createImapGrant(service.core, {
            applicationId: await service.core.accounts.applications.defaultApplicationId(),
            email: 'connected@openapi.example',
            password: 'unused',
            imapPort: 1,
            smtpPort: 1,
            secrets: service.core.deps.secrets,
          }),
        ),
      connectedMessage: () =>
        once('connectedMessage', async () =>
          addSyncedMessageRow(service.core, {
            applicationId: await service.core.accounts.applications.defaultApplicationId(),
            grantId: await f.connected(),
            uid: 1,
          }),
        ),
      approval: async () => {
        const grantId = await once('gatedGrant', async () => {
          const grant = await create('/v3/connect/custom', {
            provider: 'nylas',
            settings: { email: `gated@${DOMAIN}` },
          });
          await request(service.url, 'PATCH', `/v3/grants/${grant.id as string}`, {
            key: service.apiKey,
            body: { oversight_mode: 'gated_all' },
          });
          return grant.id as string;
        });
        const asker = await once(
          'askerKey',
          async () => (await create('/v3/api-keys', { name: 'asker' })).key as string,
        );
        const held = await request(service.url, 'POST', `/v3/grants/${grantId}/messages/send`, {
          key: asker,
          body: { to: [{ email: PEER }], subject: 'Held', body: 'Waits for a person' },
        });
        return (held.body as Json).approval_id as string;
      },
      review: () =>
        once('review', async () => {
          const grant = await create('/v3/connect/custom', {
            provider: 'nylas',
            settings: { email: `monitored@${DOMAIN}` },
          });
          await request(service.url, 'PATCH', `/v3/grants/${grant.id as string}`, {
            key: service.apiKey,
            body: { oversight_mode: 'monitored' },
          });
          await request(service.url, 'POST', `/v3/grants/${grant.id as string}/messages/send`, {
            key: service.apiKey,
            body: { to: [{ email: PEER }], subject: 'Watched', body: 'Listed for review' },
          });
          const listed = await request(service.url, 'GET', '/v3/send-reviews', { key: service.apiKey });
          return (listed.body as { data: Json[] }).data[0]!.id as string;
        }),
      contact: () =>
        once(
          'contact',
          async () =>
            (
              await create(`/v3/grants/${await f.grant()}/contacts`, {
                given_name: 'Kept',
                emails: [{ email: 'kept@example.com' }],
              })
            ).id as string,
        ),
    };
    return f;
  }

  /** Sends a call of `operation` (with `key`, default the API key) and returns the answer. */
  async function send(
    operation: AnyOperation,
    call: Call,
    key: string | undefined = service.apiKey,
  ): Promise<JsonResponse> {
    const binding = operation.http!;
    const path = binding.path.replace(/:([a-z_]+)/g, (_, name: string) => {
      const value = call.params[name];
      if (value === undefined) throw new Error(`${operation.name}: no value for :${name}`);
      return encodeURIComponent(value);
    });
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    if (call.form) {
      const response = await fetch(`${service.url}/v3${path}${query}`, {
        method: binding.method,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        body: call.form,
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
    }
    return request(service.url, binding.method, `/v3${path}${query}`, {
      key,
      ...(call.body !== undefined ? { body: call.body } : {}),
    });
  }

  const bound = operations.filter((operation) => operation.http);

  it('has a call (or a reason to skip) for every operation of the registry', () => {
    const missing = bound.map((operation) => operation.name).filter((name) => !CALLS[name] && !SKIPPED[name]);
    expect(missing, 'add a call to CALLS in test/server/openapi-live.test.ts').toEqual([]);
    const unknown = [...Object.keys(CALLS), ...Object.keys(SKIPPED)].filter(
      (name) => !bound.some((operation) => operation.name === name),
    );
    expect(unknown, 'calls of operations that are not in the registry').toEqual([]);
  });

  it.each(bound.filter((operation) => CALLS[operation.name]).map((operation) => [operation.name, operation] as const))(
    '%s: the live success response and the request match the document',
    async (_name, operation) => {
      const binding = operation.http!;
      const path = documentPath(binding.path);
      const method = binding.method.toLowerCase();
      const call = await CALLS[operation.name]!(made);
      if (call.body !== undefined) {
        expectValid(
          validatorAt('paths', path, method, 'requestBody', 'content', 'application/json', 'schema'),
          call.body,
          `${operation.name} request body`,
        );
      }
      if (call.form)
        expect(
          document.paths[path][method].requestBody.content['multipart/form-data'],
          `${operation.name}: multipart body documented`,
        ).toBeDefined();
      const response = await send(operation, call, call.key);
      expect(response.status, `${operation.name}: ${response.text}`).toBeLessThan(300);
      expect(
        Object.keys(document.paths[path][method].responses),
        `${operation.name}: status ${response.status} documented`,
      ).toContain(String(response.status));
      expectValid(
        validatorAt(
          'paths',
          path,
          method,
          'responses',
          String(response.status),
          'content',
          'application/json',
          'schema',
        ),
        response.body,
        `${operation.name} ${response.status}`,
      );
    },
  );

  it.each(bound.map((operation) => [operation.name, operation] as const))(
    '%s: error responses match the error schema',
    async (_name, operation) => {
      const binding = operation.http!;
      const path = documentPath(binding.path);
      const validate = validatorAt(
        'paths',
        path,
        binding.method.toLowerCase(),
        'responses',
        'default',
        'content',
        'application/json',
        'schema',
      );
      const params = Object.fromEntries(
        [...binding.path.matchAll(/:([a-z_]+)/g)].map((match) => [match[1]!, 'nonexistent-id']),
      );
      const unauthorized = await send(operation, { params }, 'agp_wrong_key');
      expect(unauthorized.status).toBe(401);
      expectValid(validate, unauthorized.body, `${operation.name} 401`);
      if (Object.keys(params).length === 0) return;
      // An unknown id (or a body that does not fit): a 4xx error envelope.
      const missing = await send(operation, {
        params,
        ...(binding.method === 'GET' || binding.method === 'DELETE' ? {} : { body: {} }),
      });
      expect(missing.status, `${operation.name}: ${missing.text}`).toBeGreaterThanOrEqual(400);
      expect(missing.status).toBeLessThan(500);
      expectValid(validate, missing.body, `${operation.name} ${missing.status}`);
    },
  );

  it('documents the 202 of a scheduled send', async () => {
    const grant = await made.grant();
    const body = { to: [{ email: 'later@example.com' }], subject: 'Scheduled', body: 'x', send_at: future() };
    const path = '/v3/grants/{grant_id}/messages/send';
    expectValid(
      validatorAt('paths', path, 'post', 'requestBody', 'content', 'application/json', 'schema'),
      body,
      'scheduled send request',
    );
    const response = await request(service.url, 'POST', `/v3/grants/${grant}/messages/send`, {
      key: service.apiKey,
      body,
    });
    expect(response.status, response.text).toBe(202);
    expectValid(
      validatorAt('paths', path, 'post', 'responses', '202', 'content', 'application/json', 'schema'),
      response.body,
      'scheduled send 202',
    );
  });

  it('describes the hand-written routes as they answer', async () => {
    const grant = await made.grant();
    const message = await made.message();
    const attachment = (message.attachments as Json[])[0]!;
    const calendar = await made.calendar();
    const key = service.apiKey;
    const checks: { path: string; url: string; auth?: string; status: number; media: string }[] = [
      { path: '/livez', url: '/livez', status: 200, media: 'application/json' },
      { path: '/healthz', url: '/healthz', status: 200, media: 'application/json' },
      { path: '/readyz', url: '/readyz', status: 200, media: 'application/json' },
      { path: '/metrics', url: '/metrics', auth: METRICS_TOKEN, status: 200, media: 'text/plain' },
      { path: '/v3/openapi.json', url: '/v3/openapi.json', status: 200, media: 'application/json' },
      {
        path: '/v3/grants/{grant_id}/attachments/{attachment_id}/download',
        url: `/v3/grants/${grant}/attachments/${attachment.id}/download?message_id=${message.id}`,
        auth: key,
        status: 200,
        media: 'application/octet-stream',
      },
      {
        path: '/v3/grants/{grant_id}/calendars/{calendar_id}/ics',
        url: `/v3/grants/${grant}/calendars/${calendar}/ics`,
        auth: key,
        status: 200,
        media: 'text/calendar',
      },
    ];
    for (const check of checks) {
      const response = await request(service.url, 'GET', check.url, { key: check.auth });
      expect(response.status, `${check.url}: ${response.text.slice(0, 300)}`).toBe(check.status);
      const documented = document.paths[check.path]?.get?.responses?.[String(check.status)];
      expect(documented, `${check.path} ${check.status} documented`).toBeDefined();
      expect(Object.keys(documented.content), `${check.path}: media type`).toContain(check.media);
      if (check.media === 'application/json')
        expectValid(
          validatorAt('paths', check.path, 'get', 'responses', String(check.status), 'content', check.media, 'schema'),
          response.body,
          check.path,
        );
      else if (check.media !== 'application/octet-stream')
        expect(response.headers.get('content-type')).toContain(check.media);
      // The media type actually answered is one the document names, or falls in a range it names (*/*, text/*).
      const answered = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const ranges = Object.keys(documented.content as Json);
      expect(
        ranges.some(
          (range) =>
            range === answered || range === '*/*' || (range.endsWith('/*') && answered.startsWith(range.slice(0, -1))),
        ),
        `${check.path}: answered ${answered}, documented ${ranges.join(', ')}`,
      ).toBe(true);
    }
    // Errors of the hand-written /v3 routes take the error envelope too.
    const missing = await request(service.url, 'GET', `/v3/grants/${grant}/calendars/nonexistent/ics`, { key });
    expect(missing.status).toBe(404);
    expectValid(
      validatorAt(
        'paths',
        '/v3/grants/{grant_id}/calendars/{calendar_id}/ics',
        'get',
        'responses',
        'default',
        'content',
        'application/json',
        'schema',
      ),
      missing.body,
      'ics 404',
    );
    // /mcp is described (as a note on its Streamable HTTP endpoint).
    expect(document.paths['/mcp']?.description).toContain('Streamable HTTP');
  });

  it('declares security on every operation: the API key, or none where a route needs none (the pre-signed upload PUT)', async () => {
    const undeclared = Object.entries(document.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([method, operation]) => METHODS.has(method) && !Array.isArray((operation as Json).security))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undeclared).toEqual([]);
    expect(document.paths['/uploads/{attachment_id}'].put.security).toEqual([]);
    // And it is so: the bytes go to the pre-signed URL without a key.
    const grant = await made.grant();
    const session = await request(service.url, 'POST', `/v3/grants/${grant}/attachment-uploads`, {
      key: service.apiKey,
      body: { filename: 'keyless.txt', content_type: 'text/plain', size: 5 },
    });
    expect(session.status, session.text).toBe(201);
    const put = await fetch(session.body.data.url as string, {
      method: 'PUT',
      body: new TextEncoder().encode('hello'),
    });
    expect(put.status).toBe(200);
  });

  it('documents every route the app registers', () => {
    const app = createApp({ core: service.core });
    const documented = new Set(Object.keys(document.paths));
    const routes = app.routes
      .filter((route) => !route.path.includes('*'))
      .map((route) => `${route.method} ${route.path}`);
    const undocumented = routes.filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const openApi = path.replace(/:([a-z_]+)/g, '{$1}');
      if (!documented.has(openApi)) return true;
      return method !== 'ALL' && !document.paths[openApi][method.toLowerCase()];
    });
    expect(undocumented).toEqual([]);
  });
});
