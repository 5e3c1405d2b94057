/**
 * @module applications/application-details
 * The Nylas Applications API for the calling application: its details (`GET /v3/applications`) and its redirect
 * URIs (`/v3/applications/redirect-uris`). Every query is scoped to the principal's application, so another
 * application's redirect URI is a 404.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import type {
  ApplicationDetails,
  CreateRedirectUriInput,
  RedirectUri,
  UpdateRedirectUriInput,
} from '../schemas/applications.js';
import type { Principal } from '../access.js';
import type { ApplicationDetailsService } from './contracts.js';
import { countRedirectUris, redirectUrisOf } from './application-store.js';

type RedirectUriRow = typeof tables.redirectUris.$inferSelect;

/** An application may keep this many redirect URIs (a bound on what one caller can store). */
export const MAX_REDIRECT_URIS = 100;

function toRedirectUri(row: RedirectUriRow): RedirectUri {
  return {
    id: row.id,
    url: row.url,
    platform: row.platform,
    ...(Object.keys(row.settings).length > 0 ? { settings: row.settings } : {}),
  };
}

/** Creates the application-details service. */
export function createApplicationDetailsService({ db, clock, newId }: CoreDeps): ApplicationDetailsService {
  const now = () => unixSeconds(clock.now());

  async function requireRedirectUri(principal: Principal, id: string): Promise<RedirectUriRow> {
    const row = await db.orm.query.redirectUris.findFirst({
      where: and(eq(tables.redirectUris.id, id), eq(tables.redirectUris.applicationId, principal.applicationId)),
    });
    if (!row) throw notFound('Redirect URI', id);
    return row;
  }

  async function listRedirectUris(principal: Principal): Promise<RedirectUri[]> {
    const rows = await redirectUrisOf(db.orm, principal.applicationId);
    return rows.map(toRedirectUri);
  }

  return {
    /** The calling application's details, with its redirect URIs as `callback_uris`. */
    async details(principal: Principal): Promise<ApplicationDetails> {
      const row = await db.orm.query.applications.findFirst({
        where: eq(tables.applications.id, principal.applicationId),
      });
      if (!row) throw notFound('Application', principal.applicationId);
      return {
        application_id: row.id,
        organization_id: row.id,
        region: 'us',
        environment: row.plan === 'trial' ? 'sandbox' : 'production',
        branding: { name: row.name },
        callback_uris: await listRedirectUris(principal),
        created_at: row.createdAt,
        updated_at: row.updatedAt,
      };
    },

    listRedirectUris,

    async findRedirectUri(principal: Principal, id: string): Promise<RedirectUri> {
      return toRedirectUri(await requireRedirectUri(principal, id));
    },

    async createRedirectUri(principal: Principal, input: CreateRedirectUriInput): Promise<RedirectUri> {
      const id = newId();
      await db.write(async (tx) => {
        if ((await countRedirectUris(tx, principal.applicationId)) >= MAX_REDIRECT_URIS) {
          throw new AppError(
            'invalid_request',
            `An application may have at most ${MAX_REDIRECT_URIS} redirect URIs; delete one first.`,
          );
        }
        const at = now();
        await tx.insert(tables.redirectUris).values({
          id,
          applicationId: principal.applicationId,
          url: input.url,
          platform: input.platform ?? 'web',
          settings: input.settings ?? {},
          createdAt: at,
          updatedAt: at,
        });
      });
      return this.findRedirectUri(principal, id);
    },

    async updateRedirectUri(principal: Principal, input: UpdateRedirectUriInput): Promise<RedirectUri> {
      const row = await requireRedirectUri(principal, input.redirect_uri_id);
      await db.write((tx) =>
        tx
          .update(tables.redirectUris)
          .set({
            ...(input.url !== undefined ? { url: input.url } : {}),
            ...(input.platform !== undefined ? { platform: input.platform } : {}),
            ...(input.settings !== undefined ? { settings: input.settings } : {}),
            updatedAt: now(),
          })
          .where(eq(tables.redirectUris.id, row.id)),
      );
      return toRedirectUri(await requireRedirectUri(principal, row.id));
    },

    async destroyRedirectUri(principal: Principal, id: string): Promise<void> {
      const row = await requireRedirectUri(principal, id);
      await db.write((tx) => tx.delete(tables.redirectUris).where(eq(tables.redirectUris.id, row.id)));
    },
  };
}

export type { ApplicationDetailsService } from './contracts.js';
