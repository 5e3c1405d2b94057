/**
 * @module schemas/applications
 * The Applications resource (application details and redirect URIs), as in the Nylas SDK's
 * `models/applicationDetails.ts` and `models/redirectUri.ts`.
 */
import { z } from 'zod';
import { IdSchema, UnixSecondsSchema } from './common.js';

/** Where a redirect URI is used; Nylas defaults it to `web`. */
export const RedirectUriPlatformSchema = z
  .enum(['web', 'js', 'ios', 'android', 'desktop'])
  .describe('Platform: web (default), js, ios, android or desktop');
export type RedirectUriPlatform = z.infer<typeof RedirectUriPlatformSchema>;

export const RedirectUriSettingsSchema = z
  .strictObject({
    origin: z.string().max(2048).optional().describe('Allowed origin (js platform)'),
    bundle_id: z.string().max(256).optional().describe('iOS bundle id'),
    app_store_id: z.string().max(256).optional().describe('iOS App Store id'),
    team_id: z.string().max(256).optional().describe('iOS team id'),
    package_name: z.string().max(256).optional().describe('Android package name'),
    sha1_certificate_fingerprint: z
      .string()
      .max(256)
      .optional()
      .describe('Android signing certificate SHA-1 fingerprint'),
  })
  .describe('Platform settings');

export const RedirectUriSchema = z
  .object({
    id: z.string().describe('Redirect URI id'),
    url: z.string().describe('Redirect URL'),
    platform: RedirectUriPlatformSchema,
    settings: RedirectUriSettingsSchema.optional(),
  })
  .meta({ id: 'RedirectUri' });
export type RedirectUri = z.infer<typeof RedirectUriSchema>;

/** An absolute URL: http(s) for web and js, a custom scheme (`myapp://cb`) for native platforms. */
const RedirectUrlSchema = z
  .string()
  .max(2048)
  .regex(/^[a-z][a-z0-9+.-]*:\/\/\S+$/i, 'must be an absolute URL such as https://example.com/callback')
  .describe('Redirect URL (absolute)');

export const ListRedirectUrisInputSchema = z.object({});
export const RedirectUriRefInputSchema = z.object({ redirect_uri_id: IdSchema.describe('Redirect URI id') });
export const CreateRedirectUriInputSchema = z.object({
  url: RedirectUrlSchema,
  platform: RedirectUriPlatformSchema.optional(),
  settings: RedirectUriSettingsSchema.optional(),
});
export type CreateRedirectUriInput = z.infer<typeof CreateRedirectUriInputSchema>;
export const UpdateRedirectUriInputSchema = z.object({
  redirect_uri_id: IdSchema.describe('Redirect URI id'),
  url: RedirectUrlSchema.optional(),
  platform: RedirectUriPlatformSchema.optional(),
  settings: RedirectUriSettingsSchema.optional().describe('Platform settings (replaces the stored ones)'),
});
export type UpdateRedirectUriInput = z.infer<typeof UpdateRedirectUriInputSchema>;

export const GetApplicationInputSchema = z.object({});
export const ApplicationDetailsSchema = z
  .object({
    application_id: z.string().describe('The calling application'),
    organization_id: z.string().describe('The owning organization (the application itself on a self-hosted service)'),
    region: z.string().describe('Always "us" on a self-hosted service'),
    environment: z.string().describe('"production", or "sandbox" for a trial application'),
    branding: z.object({ name: z.string().describe('Application name') }).describe('Branding'),
    callback_uris: z.array(RedirectUriSchema).describe('Redirect URIs (manage them under /applications/redirect-uris)'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'ApplicationDetails' });
export type ApplicationDetails = z.infer<typeof ApplicationDetailsSchema>;
