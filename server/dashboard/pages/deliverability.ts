/**
 * @module server/dashboard/pages/deliverability
 * Deliverability: each sending domain's reputation now and its sending over time (list_domain_sending_days, drawn
 * by ./chart.ts), the bounces and complaints recorded (list_delivery_reports), and the suppression list with a
 * remove button per address and a form that adds one. Each list pages on its own query parameter.
 */
import { html } from 'hono/html';
import type { Domain, DomainSendingDays } from '../../../src/schemas/domains.js';
import type { DeliveryReport, Suppression } from '../../../src/schemas/suppressions.js';
import type { DashboardRequest } from '../contracts.js';
import { sendingChart } from './chart.js';
import {
  afterPost,
  buttonForm,
  csrfField,
  field,
  guarded,
  hrefOf,
  intParam,
  pager,
  pageToken,
  runOne,
  runPage,
  table,
  timeOf,
  type MorePage,
} from './kit.js';

/** Domains charted on one page (each is one more read). */
const DOMAINS_PER_PAGE = 5;
const PER_PAGE = 50;
const REPORT_KINDS = ['bounce', 'complaint'] as const;

const here = (request: DashboardRequest) => `${request.base}/deliverability`;

/** A rate as a percentage with two decimals. */
const percent = (rate: number) => `${(rate * 100).toFixed(2)}%`;

/** The domains section: reputation now and a chart of the last `days` days each. */
async function domainsSection(request: DashboardRequest, days: number) {
  const token = pageToken(request, 'domains_page');
  const domains = await runPage<Domain>(request, 'list_domains', {
    limit: DOMAINS_PER_PAGE,
    ...(token ? { page_token: token } : {}),
  });
  const charts = await Promise.all(
    domains.data.map(async (domain, index) => {
      const history = await runOne<DomainSendingDays>(request, 'list_domain_sending_days', {
        domain_id: domain.id,
        days,
      });
      const reputation = domain.reputation;
      return html`<section>
        <h3>${domain.domain_address}</h3>
        <p>
          Sending ${domain.sending.status}${domain.sending.reason ? html`: ${domain.sending.reason}` : html``}.
          ${
            reputation
              ? html`Over ${reputation.window_days} days: ${reputation.sent} sent, hard-bounce rate
                ${percent(reputation.bounce_rate)}, complaint rate ${percent(reputation.complaint_rate)}.`
              : html``
          }
        </p>
        ${sendingChart(domain.domain_address, history.data, `domain-chart-${index}`)}
        <details>
          <summary>The numbers</summary>
          ${table(
            `${domain.domain_address} per day`,
            ['Day', 'Sent', 'Hard bounces', 'Soft bounces', 'Complaints', 'Bounce rate', 'Complaint rate'],
            history.data.map(
              (day) =>
                html`<tr>
                  <td>${day.day}</td>
                  <td>${day.sent}</td>
                  <td>${day.hard_bounces}</td>
                  <td>${day.soft_bounces}</td>
                  <td>${day.complaints}</td>
                  <td>${percent(day.bounce_rate)}</td>
                  <td>${percent(day.complaint_rate)}</td>
                </tr>`,
            ),
            'No days.',
          )}
        </details>
      </section>`;
    }),
  );
  const spans = [7, 30, 90].map(
    (span) =>
      html`<a
        href="${hrefOf(here(request), { days: String(span) })}"
        ${span === days ? html`aria-current="page"` : html``}
        >${span} days</a
      >`,
  );
  return html`<h2>Sending domains</h2>
    <nav aria-label="Period">${spans}</nav>
    ${charts.length > 0 ? charts : html`<p class="empty">No sending domains.</p>`}
    ${pager(request, here(request), domains.next_cursor, 'domains_page')}`;
}

/** The bounces and complaints, newest first, narrowed to one kind by `kind`. */
async function reportsSection(request: DashboardRequest) {
  const kindParam = request.query.get('kind') ?? '';
  const kind = (REPORT_KINDS as readonly string[]).includes(kindParam) ? kindParam : undefined;
  const token = pageToken(request, 'reports_page');
  const reports = await runPage<DeliveryReport>(request, 'list_delivery_reports', {
    limit: PER_PAGE,
    ...(kind ? { kind } : {}),
    ...(token ? { page_token: token } : {}),
  });
  const rows = reports.data.map(
    (report) =>
      html`<tr>
        <td>${timeOf(report.at)}</td>
        <td>${report.kind}${report.bounce_type ? ` (${report.bounce_type})` : ''}</td>
        <td>${report.recipient}</td>
        <td>${[report.smtp_code, report.status_code].filter(Boolean).join(' ')}</td>
        <td>${report.reason}</td>
        <td>${report.source}</td>
      </tr>`,
  );
  const kinds = [undefined, ...REPORT_KINDS].map(
    (value) =>
      html`<a href="${hrefOf(here(request), { kind: value })}" ${value === kind ? html`aria-current="page"` : html``}
        >${value ?? 'all'}</a
      >`,
  );
  return html`<h2>Bounces and complaints</h2>
    <nav aria-label="Kinds">${kinds}</nav>
    ${table('Bounces and complaints', ['When', 'Kind', 'Recipient', 'Code', 'Reason', 'Source'], rows, 'None recorded.')}
    ${pager(request, here(request), reports.next_cursor, 'reports_page')}`;
}

/** The suppression list with a remove button per address, and the form that adds one. */
async function suppressionsSection(request: DashboardRequest) {
  const token = pageToken(request, 'suppressions_page');
  const list = await runPage<Suppression>(request, 'list_suppressions', {
    limit: PER_PAGE,
    ...(token ? { page_token: token } : {}),
  });
  const rows = list.data.map(
    (entry) =>
      html`<tr>
        <td>${entry.email}</td>
        <td>${entry.reason}</td>
        <td>${timeOf(entry.created_at)}</td>
        <td>${buttonForm(request, here(request), { action: 'remove', email: entry.email }, 'Remove')}</td>
      </tr>`,
  );
  return html`<h2>Suppression list</h2>
    <p>Sends to these addresses are refused until they are removed.</p>
    ${table('Suppressed addresses', ['Address', 'Why', 'Since', ''], rows, 'No suppressed addresses.')}
    ${pager(request, here(request), list.next_cursor, 'suppressions_page')}
    <form method="post" action="${here(request)}" class="create">
      ${csrfField(request)}
      <input type="hidden" name="action" value="add" />
      <label for="suppress-email">Add an address</label>
      <input id="suppress-email" name="email" type="email" required maxlength="320" />
      <button type="submit">Suppress</button>
    </form>`;
}

/** `/deliverability`: domains, bounces and complaints, suppressions; POST adds or removes a suppression. */
const deliverability: MorePage = {
  path: '/deliverability',
  nav: { label: 'Deliverability', order: 70 },
  async get(request) {
    const days = intParam(request, 'days', 30, 1, 92);
    const [domains, reports, suppressions] = await Promise.all([
      domainsSection(request, days),
      reportsSection(request),
      suppressionsSection(request),
    ]);
    return {
      title: 'Deliverability',
      body: html`${domains} ${reports} ${suppressions}`,
    };
  },
  async post(request) {
    const email = field(request, 'email') ?? '';
    if (field(request, 'action') === 'add')
      return afterPost(here(request), `${email} suppressed.`, () => request.run('add_suppression', { email }));
    return afterPost(here(request), `${email} removed from the suppression list.`, () =>
      request.run('remove_suppression', { email }),
    );
  },
};

/** Deliverability. */
export const DELIVERABILITY_PAGES: readonly MorePage[] = [deliverability].map(guarded);
