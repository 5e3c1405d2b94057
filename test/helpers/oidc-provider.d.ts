/**
 * The little of `oidc-provider` 9 (which ships no types; `@types/oidc-provider` is not a dependency) that the tests'
 * authorization server uses (test/helpers/oidc.ts).
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: Record<string, unknown>[];
    findAccount?: (context: unknown, id: string) => Promise<Account | undefined>;
    claims?: Record<string, string[]>;
    scopes?: string[];
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    ttl?: Record<string, number>;
    cookies?: { keys: string[] };
    [key: string]: unknown;
  }

  interface StoredToken {
    destroy(): Promise<void>;
  }

  /** A client credentials token (also what the tests' custom grants issue), before it is saved. */
  interface ClientCredentialsToken {
    readonly expiration: number;
    save(): Promise<string>;
  }

  /** The request context of a token endpoint's grant handler (Koa's, with the provider's `oidc`). */
  export interface KoaContextWithOIDC {
    method: string;
    path: string;
    req: IncomingMessage;
    body: unknown;
    is(type: string): string | false | null;
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      params?: Record<string, unknown>;
    };
  }

  export class Provider {
    readonly AccessToken: { find(value: string): Promise<StoredToken | undefined> };
    readonly ClientCredentials: {
      new (values: { client: unknown; scope?: string | undefined }): ClientCredentialsToken;
      find(value: string): Promise<StoredToken | undefined>;
    };
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** Adds a grant type of the token endpoint, or replaces a built-in one's handler. */
    registerGrantType(name: string, handler: (context: KoaContextWithOIDC) => Promise<void>, params?: string[]): void;
    /** A Koa middleware in front of the provider's routes. */
    use(middleware: (context: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
  }

  /** The OAuth errors a handler throws (the token endpoint answers them as `{ error, error_description }`). */
  export const errors: {
    InvalidGrant: new (description?: string) => Error;
  };
  export default Provider;
}
