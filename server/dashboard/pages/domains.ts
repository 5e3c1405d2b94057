/**
 * The dashboard's domains: the list (with sending state and reputation), registering one, and a domain's page with
 * the DNS records to publish (each with a copy button), a verify button per record and its reputation.
 */
import { html } from 'hono/html';
import type { DashboardPage, DashboardRequest, Html, PageAnswer } from '../contracts.js';
import { actionButton, attempt, copyable, csrfField, errorBox, field, pager, table, time } from '../ui.js';

interface Domain {
  id: string;
  name: string;
  domain_address: string;
  branded: boolean;
  verified_ownership: boolean;
  verified_mx: boolean;
  verified_spf: boolean;
  verified_dkim: boolean;
  verified_dmarc: boolean;
  verified_feedback: boolean;
  sending?: { status: string; reason?: string; paused_at?: number };
  reputation?: {
    sent: number;
    hard_bounces: number;
    soft_bounces: number;
    complaints: number;
    bounce_rate: number;
    complaint_rate: number;
    window_days: number;
  };
  created_at: number;
}

interface Verification {
  attempt: { type: string; options: { host: string; type: string; value: string; priority?: number } };
  status: string;
  message: string;
}

/** The records a custom domain publishes, in the order a person sets them up. */
const RECORD_TYPES = ['ownership', 'mx', 'spf', 'dkim', 'dmarc', 'feedback'] as const;

const percent = (rate: number) => `${(rate * 100).toFixed(2)}%`;

function reputation(domain: Domain): Html {
  const figures = domain.reputation;
  if (!figures) return html`<span class="muted">-</span>`;
  return html`${figures.sent} sent, bounces ${percent(figures.bounce_rate)}, complaints
    ${percent(figures.complaint_rate)} <span class="muted">(${figures.window_days} days)</span>`;
}

function sending(domain: Domain): Html {
  return domain.sending?.status === 'paused'
    ? html`<strong class="error">paused</strong> ${domain.sending.reason ?? ''}`
    : html`<span class="ok">active</span>`;
}

async function listDomains(request: DashboardRequest): Promise<PageAnswer> {
  const page = (await request.run('list_domains', {
    limit: 50,
    ...(request.query.get('page_token') ? { page_token: request.query.get('page_token') } : {}),
  })) as { data: Domain[]; next_cursor?: string | null };
  const rows = page.data.map(
    (domain) =>
      html`<tr>
        <td><a href="${request.base}/domains/${domain.id}">${domain.domain_address}</a></td>
        <td>${domain.branded ? 'trial' : domain.verified_ownership ? 'verified' : 'not verified yet'}</td>
        <td>${sending(domain)}</td>
        <td>${reputation(domain)}</td>
        <td>${time(domain.created_at)}</td>
      </tr>`,
  );
  return {
    title: 'Domains',
    body: html`${table('Domains', ['Domain', 'Ownership', 'Sending', 'Reputation', 'Registered'], rows)}
      ${pager(request, '/domains', page.next_cursor)}
      <h2>Register a domain</h2>
      <form method="post" action="${request.base}/domains" class="stack">
        ${csrfField(request)}
        <label for="domain_address">Domain</label>
        <input id="domain_address" name="domain_address" type="text" required placeholder="agents.example.com" />
        <label for="domain_name">Label</label>
        <input id="domain_name" name="name" type="text" placeholder="Support agents" />
        <div><button type="submit">Register</button></div>
      </form>`,
  };
}

async function createDomain(request: DashboardRequest): Promise<PageAnswer> {
  const address = field(request, 'domain_address') ?? '';
  const created = (await request.run('create_domain', {
    domain_address: address,
    name: field(request, 'name') ?? address,
  })) as Domain;
  return { redirect: `${request.base}/domains/${created.id}`, notice: `Registered ${created.domain_address}.` };
}

async function showDomain(request: DashboardRequest, result?: Verification): Promise<PageAnswer> {
  const domain = (await request.run('get_domain', { domain_id: request.params.id })) as Domain;
  const records = domain.branded
    ? []
    : await Promise.all(
        RECORD_TYPES.map((type) =>
          attempt<Verification>(request, 'get_domain_verification_info', { domain_id: domain.id, type }),
        ),
      );
  const verified = (type: string) => (domain as unknown as Record<string, boolean>)[`verified_${type}`] === true;
  const rows = records.map((record, index) => {
    const type = RECORD_TYPES[index]!;
    if (!record.ok)
      return html`<tr>
        <td>${type}</td>
        <td colspan="4">${record.message}</td>
      </tr>`;
    const options = record.value.attempt.options;
    return html`<tr>
      <td>${type}</td>
      <td>${options.type}${options.priority !== undefined ? ` (priority ${options.priority})` : ''}</td>
      <td>${copyable(options.host, `${type} host`)}</td>
      <td>${copyable(options.value, `${type} value`)}</td>
      <td>
        ${verified(type) ? html`<span class="ok">verified</span>` : html`<span class="muted">not yet</span>`}
        ${actionButton(request, `/domains/${domain.id}`, `Verify ${type}`, { fields: { type } })}
      </td>
    </tr>`;
  });
  const outcome = result
    ? result.status === 'done'
      ? html`<p class="notice" role="status">${result.attempt.type}: verified. ${result.message}</p>`
      : errorBox(`${result.attempt.type}: ${result.message}`)
    : '';
  return {
    title: domain.domain_address,
    body: html`${outcome}
      <dl>
        <dt>Label</dt>
        <dd>${domain.name}</dd>
        <dt>Sending</dt>
        <dd>${sending(domain)}</dd>
        <dt>Reputation</dt>
        <dd>${reputation(domain)}</dd>
        <dt>Registered</dt>
        <dd>${time(domain.created_at)}</dd>
      </dl>
      ${
        domain.branded
          ? html`<p>A trial domain of this service: usable at once, no DNS records to publish.</p>`
          : html`<h2>DNS records to publish</h2>
              ${table('DNS records', ['Record', 'Type', 'Host', 'Value', 'State'], rows)}`
      }
      <p><a href="${request.base}/domains">All domains</a></p>`,
  };
}

async function verifyDomain(request: DashboardRequest): Promise<PageAnswer> {
  const type = field(request, 'type') ?? 'ownership';
  const result = (await request.run('verify_domain', { domain_id: request.params.id, type })) as Verification;
  return showDomain(request, result);
}

/** The domains list (`/domains`) and a domain's page (`/domains/:id`). */
export const domainPages: DashboardPage[] = [
  { path: '/domains', nav: { label: 'Domains', order: 10 }, get: listDomains, post: createDomain },
  { path: '/domains/:id', get: (request) => showDomain(request), post: verifyDomain },
];
