/**
 * @module providers
 * The provider registry: the {@link MailboxProvider} of a grant, chosen by `grant.provider` (./contracts.ts). A
 * grant of a kind without a provider of its own is served as a hosted mailbox.
 */
import { eq } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';
import type { JobHandler } from '../jobs/index.js';
import type { MailboxProvider, ProviderGrant } from './contracts.js';
import { hostedProvider } from './hosted.js';

export {
  HOSTED_PROVIDER,
  IMAP_PROVIDER,
  type AccountLogin,
  type AccountRequest,
  type ConnectedAccounts,
  type DraftRef,
  type MailboxProvider,
  type MailboxSync,
  type PendingRecipient,
  type ProviderGrant,
  type Submitter,
} from './contracts.js';
export { hostedProvider } from './hosted.js';
export type { CollectionGrant, CollectionHome, RemoteCollections } from '../ports/index.js';

/** Chooses the provider of each grant. */
export interface Providers {
  /** The provider of `grant`. */
  of(grant: Pick<ProviderGrant, 'provider'>): MailboxProvider;
  /** The provider of the grant with this id (one primary-key read); hosted when the grant is gone. */
  ofGrantId(
    executor: Pick<Executor, 'select'>,
    grantId: string,
  ): Promise<{ grant: ProviderGrant; provider: MailboxProvider }>;
  /** Every provider's job handlers. */
  readonly handlers: Record<string, JobHandler>;
}

/** The registry of `providers` (by their `name`), with the hosted mailbox as the default. */
export function createProviders(providers: readonly MailboxProvider[] = []): Providers {
  const byName = new Map<string, MailboxProvider>([[hostedProvider.name, hostedProvider]]);
  for (const provider of providers) byName.set(provider.name, provider);
  const of = (grant: Pick<ProviderGrant, 'provider'>) => byName.get(grant.provider) ?? hostedProvider;
  return {
    of,
    async ofGrantId(executor, grantId) {
      const [row] = await executor
        .select({ id: tables.grants.id, provider: tables.grants.provider })
        .from(tables.grants)
        .where(eq(tables.grants.id, grantId))
        .limit(1);
      const grant = row ?? { id: grantId, provider: hostedProvider.name };
      return { grant, provider: of(grant) };
    },
    handlers: Object.assign({}, ...[...byName.values()].map((provider) => provider.handlers)) as Record<
      string,
      JobHandler
    >,
  };
}
