/**
 * @module server/dashboard/pages/webhooks
 * Webhooks: the application's subscriptions with their health, a form that creates one (the endpoint is challenged
 * first, as over /v3), and a webhook's delivery log (list_webhook_deliveries: what is still queued for it, retrying
 * with its last error, or given up) with a retry button on each (retry_webhook_delivery).
 */
import { html } from 'hono/html';
import { AppError } from '../../../src/errors.js';
import { TRIGGER_TYPES } from '../../../src/schemas/webhooks.js';
import type { Webhook, WebhookDelivery, WebhookWithSecret } from '../../../src/schemas/webhooks.js';
import type { DashboardRequest } from '../contracts.js';
import {
  afterPost,
  buttonForm,
  csrfField,
  facts,
  field,
  guarded,
  hrefOf,
  pager,
  pageToken,
  runOne,
  runPage,
  seg,
  table,
  timeOf,
  type MorePage,
} from './kit.js';

const PER_PAGE = 50;
const DELIVERY_STATUSES = ['queued', 'retrying', 'failed'] as const;

const listHref = (request: DashboardRequest) => `${request.base}/webhooks`;
const webhookHref = (request: DashboardRequest, id: string) => `${listHref(request)}/${seg(id)}`;

/** The form that creates a webhook. */
function createForm(request: DashboardRequest) {
  return html`<form method="post" action="${listHref(request)}" class="create">
    <h2>Create a webhook</h2>
    ${csrfField(request)}
    <p>
      <label for="webhook-url">Endpoint URL (https; it must answer the challenge)</label>
      <input id="webhook-url" name="webhook_url" type="url" required maxlength="2048" />
    </p>
    <p>
      <label for="webhook-description">Description</label>
      <input id="webhook-description" name="description" maxlength="1024" />
    </p>
    <p>
      <label for="webhook-triggers">Trigger types, separated by commas or spaces</label>
      <input id="webhook-triggers" name="trigger_types" value="message.created" required list="trigger-types" />
      <datalist id="trigger-types">${TRIGGER_TYPES.map((type) => html`<option value="${type}"></option>`)}</datalist>
    </p>
    <button type="submit">Create</button>
  </form>`;
}

/** The trigger types a form names (one text field: a form's fields reach a page one value per name). */
function chosenTriggers(request: DashboardRequest): string[] {
  const raw = field(request, 'trigger_types') ?? '';
  return [...new Set(raw.split(/[\s,]+/).filter(Boolean))];
}

/** `/webhooks`: the list, with a create form. */
const webhooks: MorePage = {
  path: '/webhooks',
  nav: { label: 'Webhooks', order: 50 },
  async get(request) {
    const page = await runPage<Webhook>(request, 'list_webhooks', {
      limit: PER_PAGE,
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const rows = page.data.map(
      (webhook) =>
        html`<tr class="${webhook.status === 'failing' || webhook.status === 'failed' ? 'warn' : ''}">
          <td><a href="${webhookHref(request, webhook.id)}">${webhook.webhook_url}</a></td>
          <td>${webhook.description ?? ''}</td>
          <td>${webhook.status}</td>
          <td>${webhook.trigger_types.join(', ')}</td>
          <td>${timeOf(webhook.created_at)}</td>
        </tr>`,
    );
    return {
      title: 'Webhooks',
      body: html`${table('Webhooks', ['Endpoint', 'Description', 'Status', 'Triggers', 'Created'], rows, 'No webhooks yet.')}
      ${pager(request, listHref(request), page.next_cursor)} ${createForm(request)}`,
    };
  },
  async post(request) {
    const url = field(request, 'webhook_url');
    const description = field(request, 'description');
    const triggers = chosenTriggers(request);
    let created: WebhookWithSecret | undefined;
    const answer = await afterPost(listHref(request), 'Webhook created.', async () => {
      created = await runOne<WebhookWithSecret>(request, 'create_webhook', {
        webhook_url: url ?? '',
        trigger_types: triggers,
        ...(description ? { description } : {}),
      });
    });
    if (!created) return answer;
    // The secret is shown once, as /v3 answers it once: on this page, not in a redirect's notice or URL.
    return {
      title: 'Webhook created',
      body: html`<p>Keep the signing secret now: it is not shown again (rotate it to get a new one).</p>
        ${facts([
          ['Endpoint', created.webhook_url],
          ['Signing secret', html`<code class="secret">${created.webhook_secret}</code>`],
        ])}
        <p><a href="${webhookHref(request, created.id)}">Open the webhook</a></p>`,
    };
  },
};

/** The delivery log's rows, each with a retry button unless an attempt is on its way. */
function deliveryRows(request: DashboardRequest, webhookId: string, deliveries: readonly WebhookDelivery[]) {
  return deliveries.map(
    (delivery) =>
      html`<tr class="${delivery.status === 'queued' ? '' : 'warn'}">
        <td>${delivery.type}</td>
        <td><code>${delivery.notification_id}</code></td>
        <td>${delivery.status}</td>
        <td>${delivery.attempts}</td>
        <td>${delivery.last_error ?? ''}</td>
        <td>${delivery.status === 'failed' ? timeOf(delivery.failed_at) : timeOf(delivery.next_attempt_at)}</td>
        <td>
          ${
            delivery.status === 'queued'
              ? html``
              : buttonForm(request, webhookHref(request, webhookId), { delivery_id: delivery.id }, 'Retry now')
          }
        </td>
      </tr>`,
  );
}

/** `/webhooks/:webhook_id`: one webhook, its health and its delivery log; POST retries a delivery. */
const webhook: MorePage = {
  path: '/webhooks/:webhook_id',
  async get(request) {
    const found = await runOne<Webhook>(request, 'get_webhook', { webhook_id: request.params.webhook_id! });
    const status = request.query.get('status') ?? undefined;
    const filter = (DELIVERY_STATUSES as readonly string[]).includes(status ?? '') ? status : undefined;
    const deliveries = await runPage<WebhookDelivery>(request, 'list_webhook_deliveries', {
      webhook_id: found.id,
      limit: PER_PAGE,
      ...(filter ? { status: filter } : {}),
      ...(pageToken(request) ? { page_token: pageToken(request) } : {}),
    });
    const here = webhookHref(request, found.id);
    const filters = html`<nav aria-label="Delivery states">
      <a href="${here}" ${filter ? html`` : html`aria-current="page"`}>All</a>
      ${DELIVERY_STATUSES.map(
        (state) =>
          html` ·
            <a href="${hrefOf(here, { status: state })}" ${filter === state ? html`aria-current="page"` : html``}
              >${state}</a
            >`,
      )}
    </nav>`;
    return {
      title: `Webhook · ${found.webhook_url}`,
      body: html`<p><a href="${listHref(request)}">All webhooks</a></p>
        ${facts([
          ['Status', found.status],
          ['Description', found.description],
          ['Triggers', found.trigger_types.join(', ')],
          ['Status since', timeOf(found.status_updated_at)],
          ['Created', timeOf(found.created_at)],
        ])}
        <h2>Delivery log</h2>
        <p>
          Notifications still owed to this endpoint: queued, retrying after a failed attempt, or given up. A delivered
          notification leaves the log.
        </p>
        ${filters}
        ${table(
          'Deliveries',
          ['Type', 'Notification', 'State', 'Attempts', 'Last error', 'Next attempt / given up', ''],
          deliveryRows(request, found.id, deliveries.data),
          'Nothing queued: every notification was delivered.',
        )}
        ${pager(request, here, deliveries.next_cursor)}`,
    };
  },
  async post(request) {
    const webhookId = request.params.webhook_id!;
    // The webhook itself is read first: one the key cannot reach stays a 404 page.
    await runOne<Webhook>(request, 'get_webhook', { webhook_id: webhookId });
    return afterPost(webhookHref(request, webhookId), 'Delivery retried: it is due now.', async () => {
      try {
        await request.run('retry_webhook_delivery', {
          webhook_id: webhookId,
          delivery_id: field(request, 'delivery_id') ?? '',
        });
      } catch (error) {
        // A delivery that left the log since the page was drawn (a retry of the same mailbox's chain delivered it):
        // the log, drawn again, says where things stand; the operation's words say why.
        if (error instanceof AppError && error.code === 'not_found')
          throw new AppError('invalid_request', error.message);
        throw error;
      }
    });
  },
};

/** The webhook list and a webhook. */
export const WEBHOOK_PAGES: readonly MorePage[] = [webhooks, webhook].map(guarded);
