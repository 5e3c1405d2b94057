/**
 * @module server/openapi-connect
 * Hosted OAuth's hand-written routes in the OpenAPI document (server/routes/connect.ts): the browser's two steps, the
 * token endpoint and revocation. They answer OAuth's own wire, so their errors are OAuth errors (RFC 6749 §5.2).
 */
import { AuthorizeQuerySchema } from '../src/schemas/oauth.js';
import { ERROR_RESPONSE, parametersOf, type JsonSchema } from './openapi-routes.js';

const REDIRECT = {
  description: 'A redirect (Location)',
  headers: { Location: { schema: { type: 'string' } } },
};

const OAUTH_ERROR: JsonSchema = {
  description: 'An OAuth error (RFC 6749 §5.2): 400, or 401 for invalid_client',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          error: {
            type: 'string',
            description: 'invalid_request, invalid_client, invalid_grant, unsupported_grant_type',
          },
          error_code: { type: 'string', description: 'The same as error' },
          error_description: { type: 'string' },
          request_id: { type: 'string' },
        },
        required: ['error', 'error_description'],
      },
    },
  },
};

const TOKEN_REQUEST: JsonSchema = {
  type: 'object',
  properties: {
    grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
    client_id: { type: 'string', description: "The application's id" },
    client_secret: { type: 'string', description: 'The API key (or send it as the bearer; PKCE needs none)' },
    code: { type: 'string' },
    redirect_uri: { type: 'string' },
    code_verifier: { type: 'string' },
    refresh_token: { type: 'string' },
    grant_id: { type: 'string', description: 'client_credentials: the grant to issue a token for' },
  },
  required: ['grant_type', 'client_id'],
};

/** The routes, keyed by OpenAPI path and method. */
export const CONNECT_ROUTES: Record<string, Record<string, unknown>> = {
  '/v3/connect/auth': {
    get: {
      operationId: 'connect_auth',
      summary: 'Start hosted OAuth',
      description:
        "The browser's first step: sends it to the provider's consent page (google, microsoft: the application's connector), or, for provider imap, icloud or yahoo, answers the hosted IMAP login form (text/html; it posts to /v3/connect/imap). An unregistered redirect_uri is a 400 here; any later problem goes back to the redirect URI as error and error_description, with state. No API key.",
      parameters: parametersOf(AuthorizeQuerySchema, []),
      responses: {
        '200': { description: 'The hosted IMAP login form', content: { 'text/html': { schema: { type: 'string' } } } },
        '302': REDIRECT,
        default: ERROR_RESPONSE,
      },
      security: [],
    },
  },
  '/v3/connect/imap': {
    post: {
      operationId: 'connect_imap_form',
      summary: 'Post the hosted IMAP login form',
      description:
        "The form /v3/connect/auth shows for an IMAP account, posted by the browser: its hidden flow and csrf_token, the preset (icloud, yahoo, fastmail, other), email, password, an optional login name, and the servers (blank ones take the preset's). The logins are checked as POST /v3/connect/custom checks them; then the browser goes to the application's redirect URI with code and state (302), or sees the form again with the server's reason (400). action=cancel sends access_denied to the redirect URI. A post without the flow's CSRF token is a 403, from another browser a 400. No API key; the cookie set by /v3/connect/auth must come with it.",
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              properties: Object.fromEntries(
                [
                  'flow',
                  'csrf_token',
                  'action',
                  'preset',
                  'email',
                  'password',
                  'username',
                  'imap_host',
                  'imap_port',
                  'smtp_host',
                  'smtp_port',
                  'caldav_url',
                  'carddav_url',
                ].map((name) => [name, { type: 'string' }]),
              ),
              required: ['flow', 'csrf_token'],
            },
          },
        },
      },
      responses: {
        '302': REDIRECT,
        '400': { description: 'The form again, with why', content: { 'text/html': { schema: { type: 'string' } } } },
        '403': { description: 'No or a wrong CSRF token', content: { 'text/html': { schema: { type: 'string' } } } },
        default: ERROR_RESPONSE,
      },
      security: [],
    },
  },
  '/v3/connect/callback': {
    get: {
      operationId: 'connect_callback',
      summary: "The provider's redirect back",
      description:
        "Registered at the provider as the connector's redirect URI: exchanges the provider's code, creates or re-authenticates the grant, and sends the browser to the application's redirect URI with code and state. No API key; the cookie set by /v3/connect/auth must come with it.",
      parameters: [
        { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'state', in: 'query', required: true, schema: { type: 'string' } },
        { name: 'error', in: 'query', required: false, schema: { type: 'string' } },
      ],
      responses: { '302': REDIRECT, default: ERROR_RESPONSE },
      security: [],
    },
  },
  '/v3/connect/token': {
    post: {
      operationId: 'connect_token',
      summary: 'Exchange a code or refresh token',
      description:
        'authorization_code (with code_verifier when the sign-in had a PKCE challenge), refresh_token, or client_credentials (an access token for grant_id). The answer is not enveloped.',
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: TOKEN_REQUEST },
          'application/x-www-form-urlencoded': { schema: TOKEN_REQUEST },
        },
      },
      responses: {
        '200': {
          description: 'The tokens',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  access_token: { type: 'string' },
                  token_type: { type: 'string' },
                  expires_in: { type: 'integer' },
                  refresh_token: { type: 'string' },
                  id_token: { type: 'string' },
                  scope: { type: 'string' },
                  email: { type: 'string' },
                  grant_id: { type: 'string' },
                  provider: { type: 'string' },
                },
                required: ['access_token', 'token_type', 'expires_in', 'scope', 'email', 'grant_id', 'provider'],
              },
            },
          },
        },
        default: OAUTH_ERROR,
      },
      security: [{ apiKey: [] }, {}],
    },
  },
  '/v3/connect/revoke': {
    post: {
      operationId: 'connect_revoke',
      summary: 'Revoke a token',
      description:
        'Revokes an access or refresh token issued to the application (RFC 7009: an unknown token is no error).',
      parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'Revoked',
          content: {
            'application/json': { schema: { type: 'object', properties: { request_id: { type: 'string' } } } },
          },
        },
        default: OAUTH_ERROR,
      },
      security: [{ apiKey: [] }],
    },
  },
};
