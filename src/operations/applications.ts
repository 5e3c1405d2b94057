/**
 * The Applications API (`/v3/applications`): the calling application's details and its redirect URIs.
 * HTTP-only, like the other administrative operations.
 */
import { z } from 'zod';
import { DeletedSchema } from '../schemas/common.js';
import {
  ApplicationDetailsSchema,
  CreateRedirectUriInputSchema,
  GetApplicationInputSchema,
  ListRedirectUrisInputSchema,
  RedirectUriRefInputSchema,
  RedirectUriSchema,
  UpdateApplicationInputSchema,
  UpdateRedirectUriInputSchema,
} from '../schemas/applications.js';
import { defineOperation } from './define-operation.js';

export const getApplication = defineOperation({
  name: 'get_application',
  title: 'Get application details',
  description:
    'Returns the calling application: its id, environment (sandbox for a trial application), name and redirect URIs.',
  input: GetApplicationInputSchema,
  output: ApplicationDetailsSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/applications' },
  tool: false,
  run: (core, _input, { principal }) => core.accounts.applicationDetails.details(principal),
});

export const updateApplication = defineOperation({
  name: 'update_application',
  title: 'Update the application',
  description:
    'Updates the calling application: branding (name, icon_url, website_url, description), hosted_authentication, idp_settings, the white-label domain, additional_settings (kept, never answered) and callback_uris (the whole list of redirect URIs: entries with an id change that one, entries without are added, the others are removed). Each part given replaces that part whole; parts not given are kept. Answers the details as they are then.',
  input: UpdateApplicationInputSchema,
  output: ApplicationDetailsSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/applications' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.applicationDetails.update(principal, input),
});

export const listRedirectUris = defineOperation({
  name: 'list_redirect_uris',
  title: 'List redirect URIs',
  description: 'Lists the redirect URIs of the calling application, oldest first.',
  input: ListRedirectUrisInputSchema,
  output: z.object({ data: z.array(RedirectUriSchema).describe('Redirect URIs') }),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/applications/redirect-uris', envelope: 'list' },
  tool: false,
  run: async (core, _input, { principal }) => ({
    data: await core.accounts.applicationDetails.listRedirectUris(principal),
  }),
});

export const getRedirectUri = defineOperation({
  name: 'get_redirect_uri',
  title: 'Get a redirect URI',
  description: "Returns one redirect URI of the calling application (another application's is a 404).",
  input: RedirectUriRefInputSchema,
  output: RedirectUriSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/applications/redirect-uris/:redirect_uri_id' },
  tool: false,
  run: (core, input, { principal }) =>
    core.accounts.applicationDetails.findRedirectUri(principal, input.redirect_uri_id),
});

export const createRedirectUri = defineOperation({
  name: 'create_redirect_uri',
  title: 'Add a redirect URI',
  description: 'Adds a redirect URI (absolute URL; platform defaults to web) to the calling application. At most 100.',
  input: CreateRedirectUriInputSchema,
  output: RedirectUriSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/applications/redirect-uris' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.applicationDetails.createRedirectUri(principal, input),
});

export const updateRedirectUri = defineOperation({
  name: 'update_redirect_uri',
  title: 'Change a redirect URI',
  description: 'Changes the url, platform or settings (replaced whole) of a redirect URI.',
  input: UpdateRedirectUriInputSchema,
  output: RedirectUriSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PATCH', path: '/applications/redirect-uris/:redirect_uri_id' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.applicationDetails.updateRedirectUri(principal, input),
});

export const deleteRedirectUri = defineOperation({
  name: 'delete_redirect_uri',
  title: 'Delete a redirect URI',
  description: 'Removes a redirect URI from the calling application.',
  input: RedirectUriRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/applications/redirect-uris/:redirect_uri_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.accounts.applicationDetails.destroyRedirectUri(principal, input.redirect_uri_id);
    return {};
  },
});
