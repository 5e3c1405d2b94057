/**
 * The dashboard's API keys (create with a scope and permissions, revoke; the secret is shown once) and the access
 * log (filters by key, grant, operation and status; paging by cursor).
 */
import { html } from 'hono/html';
import { PERMISSIONS } from '../../../src/index.js';
import type { DashboardPage, DashboardRequest, PageAnswer } from '../contracts.js';
import { actionButton, copyable, csrfField, field, pager, table, time } from '../ui.js';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scope: { workspace_ids?: string[]; grant_ids?: string[] };
  permissions: string[];
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  agent: boolean;
}

interface AccessEntry {
  time: number;
  api_key_name: string | null;
  face: string;
  tool: string | null;
  operation: string;
  grant_id: string | null;
  status: number;
  error_type?: string | null;
  address?: string | null;
}

function scopeText(scope: ApiKey['scope']): string {
  const parts = [
    ...(scope.grant_ids?.length ? [`grants: ${scope.grant_ids.join(', ')}`] : []),
    ...(scope.workspace_ids?.length ? [`workspaces: ${scope.workspace_ids.join(', ')}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : 'whole application';
}

/** A comma- or space-separated list from a form field, or undefined when empty. */
function idList(value: string | undefined): string[] | undefined {
  const ids = (value ?? '').split(/[\s,]+/).filter(Boolean);
  return ids.length > 0 ? ids : undefined;
}

function createForm(request: DashboardRequest) {
  const boxes = PERMISSIONS.filter((permission) => request.key.permissions.includes(permission)).map(
    (permission) =>
      html`<label class="inline"
        ><input type="checkbox" name="permission_${permission}" value="on" checked /> ${permission}</label
      >`,
  );
  return html`<form method="post" action="${request.base}/keys" class="stack">
    ${csrfField(request)}<input type="hidden" name="action" value="create" />
    <label for="key_name">Name</label>
    <input id="key_name" name="name" type="text" maxlength="100" required value="key" />
    <label for="key_grants"
      >Grants it reaches (ids or addresses, comma-separated; empty: all the creating key reaches)</label
    >
    <input id="key_grants" name="grant_ids" type="text" />
    <label for="key_workspaces">Workspaces it reaches (ids, comma-separated)</label>
    <input id="key_workspaces" name="workspace_ids" type="text" />
    <fieldset>
      <legend>Permissions</legend>
      ${boxes}
    </fieldset>
    <label for="key_days">Expires after (days; empty: never)</label>
    <input id="key_days" name="expires_in_days" type="number" min="1" max="36500" />
    <label class="inline"><input type="checkbox" name="agent" value="on" /> An agent's key</label>
    <div><button type="submit">Create key</button></div>
  </form>`;
}

async function listKeys(request: DashboardRequest): Promise<PageAnswer> {
  const keys = (await request.run('list_api_keys', {})) as ApiKey[];
  const rows = keys.map(
    (key) =>
      html`<tr>
        <td>
          ${key.name}${key.id === request.key.id ? html` <strong>(this session)</strong>` : ''}<br /><code
            >${key.prefix}…</code
          >
        </td>
        <td>${scopeText(key.scope)}</td>
        <td>${key.permissions.join(', ')}</td>
        <td>${time(key.created_at)}</td>
        <td>${time(key.last_used_at)}</td>
        <td>${key.expires_at ? time(key.expires_at) : html`<span class="muted">never</span>`}</td>
        <td>
          ${
            key.revoked_at !== null
              ? html`revoked ${time(key.revoked_at)}`
              : actionButton(request, '/keys', `Revoke ${key.name}`, {
                  fields: { action: 'revoke', api_key_id: key.id },
                  confirm: `Revoke the key ${key.name}? Requests with it are refused at once.`,
                  danger: true,
                })
          }
        </td>
      </tr>`,
  );
  return {
    title: 'API keys',
    body: html`${table('API keys', ['Name', 'Scope', 'Permissions', 'Created', 'Last used', 'Expires', 'State'], rows)}
      <h2>Create a key</h2>
      <p>A key can only be as wide as the key you signed in with.</p>
      ${createForm(request)}`,
  };
}

async function changeKeys(request: DashboardRequest): Promise<PageAnswer> {
  if (field(request, 'action') === 'revoke') {
    const id = field(request, 'api_key_id') ?? '';
    await request.run('delete_api_key', { api_key_id: id });
    return { redirect: `${request.base}/keys`, notice: 'The key was revoked.' };
  }
  const permissions = PERMISSIONS.filter((permission) => request.form?.[`permission_${permission}`] === 'on');
  const grantIds = idList(field(request, 'grant_ids'));
  const workspaceIds = idList(field(request, 'workspace_ids'));
  const days = Number.parseInt(field(request, 'expires_in_days') ?? '', 10);
  const now = request.now();
  const made = (await request.run('create_api_key', {
    name: field(request, 'name') ?? 'key',
    permissions,
    ...(grantIds || workspaceIds
      ? {
          scope: {
            ...(grantIds ? { grant_ids: grantIds } : {}),
            ...(workspaceIds ? { workspace_ids: workspaceIds } : {}),
          },
        }
      : {}),
    ...(Number.isFinite(days) && days > 0 ? { expires_at: now + days * 86_400 } : {}),
    ...(request.form?.agent === 'on' ? { agent: true } : {}),
  })) as ApiKey & { key: string };
  return {
    title: 'Key created',
    body: html`<p class="notice" role="status">
        The key <strong>${made.name}</strong> was created. Copy its secret now: it is not shown again.
      </p>
      <p>${copyable(made.key, 'the new key')}</p>
      <p>Scope: ${scopeText(made.scope)}. Permissions: ${made.permissions.join(', ')}.</p>
      <p><a href="${request.base}/keys">Back to the keys</a></p>`,
  };
}

/** The filters of the access log the page passes on (the operation's own input names). */
const LOG_FILTERS = ['api_key_id', 'grant_id', 'operation', 'status'] as const;

async function accessLog(request: DashboardRequest): Promise<PageAnswer> {
  const input: Record<string, unknown> = { limit: 50 };
  for (const name of LOG_FILTERS) {
    const value = request.query.get(name)?.trim();
    if (value) input[name] = name === 'status' ? Number(value) : value;
  }
  const pageToken = request.query.get('page_token');
  if (pageToken) input.page_token = pageToken;
  const page = (await request.run('list_access_log', input)) as { data: AccessEntry[]; next_cursor?: string | null };
  const filter = (name: (typeof LOG_FILTERS)[number], label: string) =>
    html`<div>
      <label for="filter_${name}">${label}</label
      ><input id="filter_${name}" name="${name}" type="text" value="${request.query.get(name) ?? ''}" />
    </div>`;
  const rows = page.data.map(
    (entry) =>
      html`<tr>
        <td>${time(entry.time)}</td>
        <td>${entry.api_key_name ?? html`<span class="muted">-</span>`}</td>
        <td>${entry.face}${entry.tool ? ` (${entry.tool})` : ''}</td>
        <td>${entry.operation}</td>
        <td>${entry.grant_id ?? html`<span class="muted">-</span>`}</td>
        <td>${entry.status}</td>
      </tr>`,
  );
  return {
    title: 'Access log',
    body: html`<form method="get" action="${request.base}/access-log" class="stack">
        ${filter('api_key_id', 'Key id')} ${filter('grant_id', 'Grant')} ${filter('operation', 'Operation')}
        ${filter('status', 'Status')}
        <div><button type="submit">Filter</button></div>
      </form>
      ${table('Calls, newest first', ['Time', 'Key', 'Face', 'Operation', 'Grant', 'Status'], rows)}
      ${pager(request, '/access-log', page.next_cursor)}`,
  };
}

/** The keys page (`/keys`) and the access log (`/access-log`). */
export const keyPages: DashboardPage[] = [
  { path: '/keys', nav: { label: 'Keys', order: 80 }, get: listKeys, post: changeKeys },
  { path: '/access-log', nav: { label: 'Access log', order: 85 }, get: accessLog },
];
