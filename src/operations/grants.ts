/**
 * Grant operations: Agent Accounts and connected IMAP/SMTP accounts.
 */
import { DeletedSchema } from '../schemas/common.js';
import {
  CreateGrantInputSchema,
  GrantListSchema,
  GrantRefInputSchema,
  GrantSchema,
  ListGrantsInputSchema,
  UpdateGrantInputSchema,
} from '../schemas/grants.js';
import { SuspendGrantInputSchema } from '../schemas/oversight.js';
import { defineOperation } from './define-operation.js';

export const createGrant = defineOperation({
  name: 'create_agent_account',
  title: 'Create an Agent Account or connect a mailbox',
  description:
    'provider "nylas" (or "hosted"): creates a hosted mailbox and calendar (an Agent Account grant) at an address on a registered domain of this application. ' +
    'Sending the same address again returns the existing grant. The new grant has the folders inbox, sent, drafts, trash, junk and archive and a primary calendar. ' +
    'provider "imap": connects an existing IMAP/SMTP mailbox (any address) after logging in to both servers; a refused login, an unreachable server or a failed TLS certificate is a 400 with the server\'s reason. ' +
    'provider "google" or "microsoft" with settings.refresh_token: connects the account of a refresh token the application obtained from the client of its connector (tried at the provider first); ' +
    'with settings.credential_id and email_address instead: a Google service account (domain-wide delegation) or a Microsoft app with admin consent mints the tokens for that mailbox (the first minted at once). ' +
    'The same address again re-authenticates that grant with the new credentials (same id). ' +
    'Use the returned id as grant_id in every other call.',
  input: CreateGrantInputSchema,
  output: GrantSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/connect/custom', status: 201 },
  tool: false,
  stability: 'beta',
  run: async (core, input, { principal }) =>
    (input.provider === 'google' || input.provider === 'microsoft'
      ? await core.accounts.oauth.connectCustom(principal, input)
      : await core.accounts.grants.create(principal, input)
    ).grant,
});

export const listGrants = defineOperation({
  name: 'list_grants',
  title: 'List grants',
  description:
    'Lists the grants (Agent Accounts) of this application, newest first, with offset pagination (limit up to 200).',
  input: ListGrantsInputSchema,
  output: GrantListSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.grants.list(principal, input),
});

export const getGrant = defineOperation({
  name: 'get_grant',
  title: 'Get a grant',
  description: 'Returns one grant by id or email address.',
  input: GrantRefInputSchema,
  output: GrantSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.grants.find(principal, input.grant_id),
});

export const updateGrant = defineOperation({
  name: 'update_grant',
  title: 'Update a grant',
  description:
    'Changes a grant\'s display name, settings (merged; app_password is write-only), scope or workspace; sending: {status: "active"} resumes sending the service paused.',
  input: UpdateGrantInputSchema,
  output: GrantSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/grants/:grant_id' },
  tool: false,
  run: (core, input, { principal, requestId }) => core.accounts.grants.update(principal, input, { requestId }),
});

export const suspendGrant = defineOperation({
  name: 'suspend_grant',
  title: 'Suspend a grant',
  description:
    'The kill switch (extension, docs/oversight.md): from this call on, every send, scheduled send and write (drafts, events, contacts, message changes) of the grant is refused with the reason given, on every face. ' +
    'Scheduled sends that fall due while it is suspended wait and leave after POST /v3/grants/{id}/resume. Suspending a suspended grant replaces the reason. Emits grant.suspended.',
  input: SuspendGrantInputSchema,
  output: GrantSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/grants/:grant_id/suspend' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.grants.suspend(principal, input),
});

export const resumeGrant = defineOperation({
  name: 'resume_grant',
  title: 'Resume a suspended grant',
  description:
    'Lifts a suspension (extension, docs/oversight.md): sends and writes are accepted again, and scheduled sends that fell due while suspended leave now. A grant that is not suspended is returned unchanged. Emits grant.resumed.',
  input: GrantRefInputSchema,
  output: GrantSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/grants/:grant_id/resume' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.grants.resume(principal, input.grant_id),
});

export const deleteGrant = defineOperation({
  name: 'delete_grant',
  title: 'Delete a grant',
  description: 'Deletes a grant and all its mail, folders, calendars and events. This cannot be undone.',
  input: GrantRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true, idempotent: false },
  http: { method: 'DELETE', path: '/grants/:grant_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.accounts.grants.destroy(principal, input.grant_id);
    return {};
  },
});
