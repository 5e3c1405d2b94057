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

/** An http(s) URL of a page or an image (branding, hosted authentication, login and logout). */
const WebUrlSchema = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/[^\s/]+\S*$/i, 'must be an http(s) URL such as https://example.com/logo.png');

/** Branding fields beside the name (replaced whole by an update that gives `branding`). */
const brandingExtras = {
  icon_url: WebUrlSchema.optional().describe('URL of the application icon'),
  website_url: WebUrlSchema.optional().describe('Application or publisher website'),
  description: z.string().max(1024).optional().describe('Description of the application'),
};

/** A color such as #1a73e8. */
const ColorSchema = z.string().regex(/^#[0-9A-Fa-f]{3}(?:[0-9A-Fa-f]{3})?$/, 'must be a color such as #1a73e8');

export const HostedAuthenticationSchema = z
  .strictObject({
    background_image_url: WebUrlSchema.optional().describe('URL of the background image'),
    alignment: z.string().max(32).optional().describe('Alignment of the background image'),
    color_primary: ColorSchema.optional().describe('Primary color'),
    color_secondary: ColorSchema.optional().describe('Secondary color'),
    title: z.string().max(256).optional().describe('Title'),
    subtitle: z.string().max(256).optional().describe('Subtitle'),
    background_color: ColorSchema.optional().describe('Background color'),
    spacing: z.number().int().min(0).max(512).optional().describe('CSS spacing in px'),
    terms_of_service_url: WebUrlSchema.optional().describe('URL of the terms of service'),
    privacy_policy_url: WebUrlSchema.optional().describe('URL of the privacy policy'),
  })
  .describe('Hosted authentication branding (replaced whole by an update)');

export const IdpSettingsSchema = z
  .strictObject({
    origins: z.string().max(4096).optional().describe('Comma-separated allowed origins (absolute URLs, no path)'),
    issuers: z.string().max(4096).optional().describe('Comma-separated allowed issuers'),
  })
  .describe('Identity provider (IdP) settings (replaced whole by an update)');

const WhiteLabelDomainSchema = z
  .string()
  .max(253)
  .regex(
    /^(?:$|([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})$/,
    'must be a domain name such as auth.example.com ("" clears it)',
  );

export const GetApplicationInputSchema = z.object({});
export const ApplicationDetailsSchema = z
  .object({
    application_id: z.string().describe('The calling application'),
    organization_id: z.string().describe('The owning organization (the application itself on a self-hosted service)'),
    region: z.string().describe('Always "us" on a self-hosted service'),
    environment: z.string().describe('"production", or "sandbox" for a trial application'),
    domain: z.string().optional().describe('White-label domain (absent when none)'),
    branding: z.object({ name: z.string().describe('Application name'), ...brandingExtras }).describe('Branding'),
    hosted_authentication: HostedAuthenticationSchema.optional(),
    idp_settings: IdpSettingsSchema.optional(),
    callback_uris: z
      .array(RedirectUriSchema)
      .describe('Redirect URIs (manage them under /applications/redirect-uris, or replace them all with an update)'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'ApplicationDetails' });
export type ApplicationDetails = z.infer<typeof ApplicationDetailsSchema>;

/** Most redirect URIs an application keeps (also the most one update may give). */
export const MAX_REDIRECT_URIS = 100;

/**
 * `PATCH /v3/applications` (the SDK's `applications.update`): each field given replaces that part whole (no deep
 * merge); fields not given are kept.
 */
export const UpdateApplicationInputSchema = z
  .object({
    branding: z
      .strictObject({ name: z.string().min(1).max(256).optional().describe('Application name'), ...brandingExtras })
      .optional()
      .describe('Branding: the name changes when given; icon_url, website_url and description are replaced whole'),
    hosted_authentication: HostedAuthenticationSchema.optional(),
    idp_settings: IdpSettingsSchema.optional(),
    callback_uris: z
      .array(
        z.strictObject({
          id: IdSchema.optional().describe('Id of an existing redirect URI to keep or change; absent: a new one'),
          url: RedirectUrlSchema,
          platform: RedirectUriPlatformSchema.optional(),
          settings: RedirectUriSettingsSchema.optional(),
        }),
      )
      .max(MAX_REDIRECT_URIS)
      .optional()
      .describe(
        `The whole list of redirect URIs (at most ${MAX_REDIRECT_URIS}): entries with an id change that one, entries without one are added, and redirect URIs not listed are removed`,
      ),
    domain: WhiteLabelDomainSchema.optional().describe('White-label domain ("" clears it)'),
    additional_settings: z
      .strictObject({
        login_url: WebUrlSchema.optional().describe('Login URL'),
        logout_url: WebUrlSchema.optional().describe('Logout URL'),
        refresh_token_expiration_absolute: z
          .number()
          .int()
          .min(0)
          .max(10 * 365 * 86_400)
          .optional()
          .describe('Absolute refresh-token lifetime in seconds'),
        refresh_token_expiration_idle: z
          .number()
          .int()
          .min(0)
          .max(10 * 365 * 86_400)
          .optional()
          .describe('Idle refresh-token lifetime in seconds'),
        rotate_refresh_token: z.boolean().optional().describe('Rotate the refresh token on use'),
        allow_query_param_in_redirect_uri: z.boolean().optional().describe('Allow query parameters in redirect URIs'),
      })
      .optional()
      .describe('Additional settings: kept but never answered (write-only, as in Nylas)'),
  })
  .meta({ id: 'UpdateApplicationInput' });
export type UpdateApplicationInput = z.infer<typeof UpdateApplicationInputSchema>;
