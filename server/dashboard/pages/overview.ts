/**
 * The dashboard's overview: one read of `get_overview` as the signed-in key (counts in the database, over what the
 * key reaches): mailboxes, mail in and out today in the viewer's time zone, the queues, webhooks by health, paused
 * domains and pending approvals. A figure the key's permissions or scope do not cover says so in its card.
 */
import { html } from 'hono/html';
import type { Overview } from '../../../src/schemas/overview.js';
import { normalizeTimeZone } from '../../../src/time-zones.js';
import type { DashboardPage, DashboardRequest, Html } from '../contracts.js';
import { attempt, errorBox, time } from '../ui.js';

/** A card: its title (a link when the figure has a page), the figure, or why this key does not see it. */
function card<T>(title: string, href: string | undefined, value: T | null, figure: (value: T) => Html | string): Html {
  const id = `card-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return html`<section class="card" aria-labelledby="${id}">
    <h2 id="${id}">${href ? html`<a href="${href}">${title}</a>` : title}</h2>
    ${
      value === null
        ? html`<p class="muted">Not for this key (its permissions or scope).</p>`
        : html`<div class="figure">${figure(value)}</div>`
    }
  </section>`;
}

/**
 * The zone the day is counted in: `?time_zone=` (the page's form), else the one the script reported, else UTC; a
 * name that is not a time zone is answered with UTC and said so.
 */
function zoneOf(request: DashboardRequest): { zone: string; refused?: string } {
  const asked = request.query.get('time_zone')?.trim();
  if (!asked) return { zone: request.timeZone ?? 'UTC' };
  const zone = normalizeTimeZone(asked);
  return zone ? { zone } : { zone: 'UTC', refused: asked };
}

function cards(request: DashboardRequest, overview: Overview): Html[] {
  const { base } = request;
  const { queues } = overview;
  return [
    card(
      'Mailboxes',
      `${base}/accounts`,
      overview.grants,
      (grants) => html`${grants.total} <span class="muted">(${grants.suspended} suspended)</span>`,
    ),
    card('Mail today', `${base}/mail`, overview.mail_today, (mail) => html`${mail.received} in · ${mail.sent} out`),
    card(
      'Outbound queue',
      `${base}/deliverability`,
      queues.outbound,
      (outbound) =>
        html`${outbound.queued + outbound.deferred}
          <span class="muted">(${outbound.deferred} waiting for a retry)</span>`,
    ),
    card('Scheduled sends', undefined, queues.scheduled_sends, (scheduled) => String(scheduled)),
    card(
      'Webhooks',
      `${base}/webhooks`,
      overview.webhooks,
      (hooks) =>
        html`${hooks.total}
          <span class="${hooks.failing + hooks.failed > 0 ? 'error' : 'muted'}"
            >(${hooks.failing} failing, ${hooks.failed} failed, ${hooks.paused} paused)</span
          >`,
    ),
    card(
      'Webhook deliveries',
      `${base}/webhooks`,
      queues.webhook_deliveries,
      (deliveries) => html`${deliveries.pending} <span class="muted">pending (${deliveries.failed} given up)</span>`,
    ),
    card(
      'Jobs',
      undefined,
      queues.jobs,
      (jobs) =>
        html`${jobs.running + jobs.due + jobs.later}
          <span class="muted"
            >(${jobs.running} running, ${jobs.due} due, ${jobs.later} later, ${jobs.dead} dead)</span
          >`,
    ),
    card(
      'Paused domains',
      `${base}/domains`,
      overview.domains,
      (domains) => html`${domains.paused} <span class="muted">of ${domains.total}</span>`,
    ),
    card('Pending approvals', `${base}/approvals`, overview.approvals, (approvals) => String(approvals.pending)),
  ];
}

async function overview(request: DashboardRequest) {
  const { zone, refused } = zoneOf(request);
  const result = await attempt<Overview>(request, 'get_overview', { time_zone: zone });
  if (!result.ok) return { title: 'Overview', body: errorBox(result.message), status: result.status };
  const value = result.value;
  const zoneForm = html`<form method="get" action="${request.base}/" class="inline">
    <label for="overview-zone">Time zone of "today"</label>
    <input id="overview-zone" name="time_zone" type="text" value="${value.time_zone}" maxlength="64" />
    <button type="submit">Show</button>
  </form>`;
  return {
    title: 'Overview',
    body: html`<p>
        Signed in as <strong>${request.key.name}</strong>. What this key
        reaches${value.scoped ? ' (its grants only)' : ''}:
      </p>
      ${refused === undefined ? '' : errorBox(`${refused} is not a time zone: today is counted in UTC.`)}
      <div class="cards">${cards(request, value)}</div>
      <p class="muted">Mail today is counted for the day in ${value.time_zone}, since ${time(value.day_start)}.</p>
      ${zoneForm}`,
  };
}

/** The overview page (`/`). */
export const overviewPage: DashboardPage = {
  path: '/',
  nav: { label: 'Overview', order: 0 },
  get: overview,
};
