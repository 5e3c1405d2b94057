/**
 * The dashboard's Agent Accounts and connected accounts (grants): the list with provider, placement (workspace),
 * state and sending, creating an Agent Account, and suspending or resuming one.
 */
import { html } from 'hono/html';
import type { DashboardPage, DashboardRequest, PageAnswer } from '../contracts.js';
import { actionButton, csrfField, field, table, time } from '../ui.js';

interface Grant {
  id: string;
  provider: string;
  grant_status: string;
  email: string;
  name?: string;
  workspace_id?: string;
  blocked: boolean;
  suspended_at?: number;
  suspended_reason?: string;
  created_at: number;
}

/** Accounts a page shows. */
const PAGE_SIZE = 50;

function row(request: DashboardRequest, grant: Grant) {
  const suspended = grant.suspended_at !== undefined;
  return html`<tr>
    <td>${grant.email}${grant.name ? html`<br /><span class="muted">${grant.name}</span>` : ''}</td>
    <td>${grant.provider === 'nylas' ? 'Agent Account' : `connected (${grant.provider})`}</td>
    <td>${grant.workspace_id ?? html`<span class="muted">-</span>`}</td>
    <td>
      ${grant.grant_status}${
        suspended ? html`, <strong class="error">suspended</strong> ${grant.suspended_reason ?? ''}` : ''
      }${grant.blocked ? ', sending blocked' : ''}
    </td>
    <td>${time(grant.created_at)}</td>
    <td>
      ${
        suspended
          ? actionButton(request, '/accounts', 'Resume', { fields: { action: 'resume', grant_id: grant.id } })
          : html`<form method="post" action="${request.base}/accounts" class="inline">
              ${csrfField(request)}<input type="hidden" name="action" value="suspend" /><input
                type="hidden"
                name="grant_id"
                value="${grant.id}"
              /><label class="inline"
                >Reason <input type="text" name="reason" value="Suspended from the dashboard" maxlength="1000"
              /></label>
              <button type="submit" class="danger">Suspend</button>
            </form>`
      }
    </td>
  </tr>`;
}

async function listAccounts(request: DashboardRequest): Promise<PageAnswer> {
  const offset = Math.max(0, Number.parseInt(request.query.get('offset') ?? '0', 10) || 0);
  const page = (await request.run('list_grants', { limit: PAGE_SIZE, offset })) as { data: Grant[] };
  const links = [
    offset > 0
      ? html`<a href="${request.base}/accounts?offset=${Math.max(0, offset - PAGE_SIZE)}">Previous page</a>`
      : '',
    page.data.length === PAGE_SIZE
      ? html`<a href="${request.base}/accounts?offset=${offset + PAGE_SIZE}" rel="next">Next page</a>`
      : '',
  ];
  return {
    title: 'Accounts',
    body: html`${table(
        'Agent Accounts and connected accounts',
        ['Address', 'Kind', 'Workspace', 'State', 'Created', 'Actions'],
        page.data.map((grant) => row(request, grant)),
      )}
      <nav class="pager" aria-label="Pages">${links}</nav>
      <h2>Create an Agent Account</h2>
      <form method="post" action="${request.base}/accounts" class="stack">
        ${csrfField(request)}<input type="hidden" name="action" value="create" />
        <label for="email">Address (on a registered domain)</label>
        <input id="email" name="email" type="email" required placeholder="agent@agents.example.com" />
        <label for="account_name">Display name</label>
        <input id="account_name" name="name" type="text" maxlength="256" />
        <div><button type="submit">Create</button></div>
      </form>`,
  };
}

async function changeAccount(request: DashboardRequest): Promise<PageAnswer> {
  const base = `${request.base}/accounts`;
  const grantId = field(request, 'grant_id') ?? '';
  switch (field(request, 'action')) {
    case 'create': {
      const name = field(request, 'name');
      const grant = (await request.run('create_agent_account', {
        provider: 'nylas',
        settings: { email: field(request, 'email') ?? '' },
        ...(name ? { name } : {}),
      })) as Grant;
      return { redirect: base, notice: `Created ${grant.email}.` };
    }
    case 'suspend': {
      const grant = (await request.run('suspend_grant', {
        grant_id: grantId,
        reason: field(request, 'reason') ?? 'Suspended from the dashboard',
      })) as Grant;
      return { redirect: base, notice: `Suspended ${grant.email}.` };
    }
    case 'resume': {
      const grant = (await request.run('resume_grant', { grant_id: grantId })) as Grant;
      return { redirect: base, notice: `Resumed ${grant.email}.` };
    }
    default:
      return { redirect: base, notice: 'Nothing was done: unknown action.' };
  }
}

/** The accounts page (`/accounts`). */
export const accountsPage: DashboardPage = {
  path: '/accounts',
  nav: { label: 'Accounts', order: 20 },
  get: listAccounts,
  post: changeAccount,
};
