/**
 * @module schemas/oauth
 * Hosted OAuth on the wire (Nylas v3 `/v3/connect/*`, `/v3/providers/detect`), as the nylas SDK's `auth` resource
 * sends and reads them (`models/auth.ts`): the authorization request's query, the token request, token info and
 * provider detection.
 */
import { z } from 'zod';

/** Most characters of the `state` an application passes through the flow (Nylas: 256). */
export const MAX_STATE_LENGTH = 256;

/** The query of `GET /v3/connect/auth` (the browser's request; no API key). */
export const AuthorizeQuerySchema = z.object({
  client_id: z.string().min(1).max(256).describe("The application's id (its client id)"),
  redirect_uri: z.string().min(1).max(2048).describe('One of the redirect URIs registered for the application'),
  response_type: z.string().max(32).optional().describe('"code" (default) or "adminconsent"'),
  provider: z.string().max(32).optional().describe('google or microsoft; absent: detected from login_hint'),
  scope: z.string().max(4096).optional().describe("Space-separated scopes; absent: the connector's"),
  prompt: z.string().max(128).optional().describe('select_provider, detect, consent, … (comma-separated)'),
  state: z.string().max(MAX_STATE_LENGTH).optional().describe('Opaque value given back on the redirect'),
  login_hint: z.string().max(320).optional().describe("The user's address, passed to the provider"),
  access_type: z.enum(['online', 'offline']).optional().describe('offline: the token exchange gives a refresh token'),
  code_challenge: z.string().min(1).max(256).optional().describe('PKCE challenge'),
  code_challenge_method: z.enum(['plain', 's256', 'S256']).optional().describe('PKCE method (default plain)'),
  credential_id: z.string().max(256).optional().describe('Admin consent: the credential of the Microsoft app'),
  include_grant_scopes: z.string().max(8).optional().describe('Ask the provider for the scopes granted before too'),
  options: z.string().max(256).optional().describe('smtp_required, …'),
});
export type AuthorizeQuery = z.infer<typeof AuthorizeQuerySchema>;

/** The body of `POST /v3/connect/token` (JSON, or form-encoded as OAuth clients send it). */
export const TokenRequestSchema = z.object({
  grant_type: z.enum(['authorization_code', 'refresh_token', 'client_credentials']),
  client_id: z.string().min(1).max(256),
  client_secret: z.string().max(512).optional(),
  code: z.string().max(512).optional(),
  redirect_uri: z.string().max(2048).optional(),
  code_verifier: z.string().min(1).max(256).optional(),
  refresh_token: z.string().max(512).optional(),
  grant_id: z.string().max(256).optional(),
  scope: z.string().max(4096).optional(),
});
export type TokenRequest = z.infer<typeof TokenRequestSchema>;

/** The answer of `POST /v3/connect/token` (not enveloped, as OAuth answers are). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope: string;
  email: string;
  grant_id: string;
  provider: string;
}

export const TokenInfoInputSchema = z
  .object({
    id_token: z.string().min(1).max(16_384).optional().describe('An ID token given by /v3/connect/token'),
    access_token: z.string().min(1).max(512).optional().describe('An access token given by /v3/connect/token'),
  })
  .meta({ id: 'TokenInfoInput' });
export type TokenInfoInput = z.infer<typeof TokenInfoInputSchema>;

export const TokenInfoSchema = z
  .object({
    iss: z.string().describe('Who issued the token'),
    aud: z.string().describe('Whom it was issued to (the application for an access token)'),
    sub: z.string().optional().describe("The account's subject at the provider"),
    email: z.string().optional().describe("The account's address"),
    iat: z.number().int().describe('Issued at (Unix seconds)'),
    exp: z.number().int().describe('Expires at (Unix seconds)'),
  })
  .meta({ id: 'TokenInfo' });
export type TokenInfo = z.infer<typeof TokenInfoSchema>;

export const DetectProviderInputSchema = z
  .object({
    email: z.string().min(3).max(320).describe('The address whose provider to detect'),
    all_provider_types: z.boolean().optional().describe('Also name providers connected with a password (imap, yahoo)'),
  })
  .meta({ id: 'DetectProviderInput' });
export type DetectProviderInput = z.infer<typeof DetectProviderInputSchema>;

export const DetectProviderSchema = z
  .object({
    email_address: z.string().describe('The address asked about'),
    detected: z.boolean().describe('Whether a provider was recognised'),
    provider: z.string().optional().describe('google, microsoft, icloud, yahoo or imap'),
    type: z.string().optional().describe('The kind of account: gmail, google_workspace, outlook, microsoft_365, …'),
  })
  .meta({ id: 'DetectProvider' });
export type DetectProvider = z.infer<typeof DetectProviderSchema>;
