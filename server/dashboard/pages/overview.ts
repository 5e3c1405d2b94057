/**
 * The dashboard's overview: mailboxes, suspended ones, webhooks by health, paused domains and pending approvals, each
 * read through its list operation as the signed-in key (what the key may not read says so in its card). Mail counts
 * of the day and the queues are not shown: no operation answers them yet (docs/dashboard.md).
 */
import { html } from 'hono/html';
import type { DashboardPage, DashboardRequest, Html } from '../contracts.js';
import { attempt, type Attempt } from '../ui.js';

/** How many objects of a kind the overview counts, at most (one page of the list operation). */
const COUNT_LIMIT = 200;

interface Listed<T> {
  data: T[];
  next_cursor?: string | null;
}

function card(title: string, href: string, result: Attempt<unknown>, figure: (value: never) => Html | string): Html {
  return html`<section class="card" aria-labelledby="card-${href.replace(/\W/g, '')}">
    <h2 id="card-${href.replace(/\W/g, '')}"><a href="${href}">${title}</a></h2>
    ${
      result.ok
        ? html`<div class="figure">${figure(result.value as never)}</div>`
        : html`<p class="muted">${result.status === 403 ? 'Not permitted for this key.' : result.message}</p>`
    }
  </section>`;
}

/** "12", or "200+" when the one page read was full. */
function count(list: { data: unknown[]; more: boolean }): string {
  return `${list.data.length}${list.more ? '+' : ''}`;
}

async function overview(request: DashboardRequest) {
  const { base } = request;
  const [grants, webhooks, domains, approvals] = await Promise.all([
    attempt<{ data: { suspended_at?: number }[]; limit: number }>(request, 'list_grants', { limit: COUNT_LIMIT }),
    attempt<Listed<{ status: string }>>(request, 'list_webhooks', { limit: COUNT_LIMIT }),
    attempt<Listed<{ domain_address: string; sending?: { status: string } }>>(request, 'list_domains', {
      limit: COUNT_LIMIT,
    }),
    attempt<Listed<unknown>>(request, 'list_approvals', { status: 'pending', limit: COUNT_LIMIT }),
  ]);
  const cards = [
    card('Mailboxes', `${base}/accounts`, grants, (value: { data: { suspended_at?: number }[] }) => {
      const suspended = value.data.filter((grant) => grant.suspended_at !== undefined).length;
      return html`${count({ data: value.data, more: value.data.length === COUNT_LIMIT })}
        <span class="muted">(${suspended} suspended)</span>`;
    }),
    card('Webhooks', `${base}/webhooks`, webhooks, (value: Listed<{ status: string }>) => {
      const unhealthy = value.data.filter((hook) => hook.status === 'failing' || hook.status === 'failed').length;
      return html`${count({ data: value.data, more: Boolean(value.next_cursor) })}
        <span class="${unhealthy > 0 ? 'error' : 'muted'}">(${unhealthy} failing or failed)</span>`;
    }),
    card('Paused domains', `${base}/domains`, domains, (value: Listed<{ sending?: { status: string } }>) => {
      const paused = value.data.filter((domain) => domain.sending?.status === 'paused').length;
      return html`${paused}
        <span class="muted">of ${count({ data: value.data, more: Boolean(value.next_cursor) })}</span>`;
    }),
    card('Pending approvals', `${base}/approvals`, approvals, (value: Listed<unknown>) =>
      count({ data: value.data, more: Boolean(value.next_cursor) }),
    ),
  ];
  return {
    title: 'Overview',
    body: html`<p>Signed in as <strong>${request.key.name}</strong>. What this key reaches:</p>
      <div class="cards">${cards}</div>
      <p class="muted">Mail in and out today and the queues are not shown yet: no operation answers them.</p>`,
  };
}

/** The overview page (`/`). */
export const overviewPage: DashboardPage = {
  path: '/',
  nav: { label: 'Overview', order: 0 },
  get: overview,
};
