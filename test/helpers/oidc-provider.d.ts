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

  export class Provider {
    readonly AccessToken: { find(value: string): Promise<StoredToken | undefined> };
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
  export default Provider;
}
