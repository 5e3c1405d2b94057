/**
 * @module applications/application-details
 * The Nylas Applications API for the calling application: its details (`GET /v3/applications`) and its redirect
 * URIs (`/v3/applications/redirect-uris`). Every query is scoped to the principal's application, so another
 * application's redirect URI is a 404.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, invalid, notFound } from '../errors.js';
import {
  MAX_REDIRECT_URIS,
  type ApplicationDetails,
  type CreateRedirectUriInput,
  type RedirectUri,
  type UpdateApplicationInput,
  type UpdateRedirectUriInput,
} from '../schemas/applications.js';
import type { Principal } from '../access.js';
import type { ApplicationDetailsService } from './contracts.js';
import { countRedirectUris, redirectUrisOf } from './application-store.js';

type RedirectUriRow = typeof tables.redirectUris.$inferSelect;

/** The fields of `value` that are set (zod's optional fields may hold undefined; the stored JSON never does). */
function defined<V>(value: Record<string, V | undefined>): Record<string, V> {
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, V] => entry[1] !== undefined));
}

/**
 * Makes `wanted` the application's whole list of redirect URIs, in one transaction: an entry with an id changes that
 * redirect URI (it must be one of this application's, named once), one without is added, the others are removed.
 */
async function replaceRedirectUris(
  tx: Tx,
  applicationId: string,
  wanted: NonNullable<UpdateApplicationInput['callback_uris']>,
  { newId, at }: { newId: () => string; at: number },
): Promise<void> {
  const existing = new Set((await redirectUrisOf(tx, applicationId)).map((row) => row.id));
  const kept = new Set<string>();
  wanted.forEach((entry, index) => {
    if (entry.id === undefined) return;
    if (!existing.has(entry.id))
      throw invalid(`callback_uris.${index}.id`, `no redirect URI ${JSON.stringify(entry.id)} in this application.`);
    if (kept.has(entry.id)) throw invalid(`callback_uris.${index}.id`, `${JSON.stringify(entry.id)} is listed twice.`);
    kept.add(entry.id);
  });
  const removed = [...existing].filter((id) => !kept.has(id));
  if (removed.length > 0) await tx.delete(tables.redirectUris).where(inArray(tables.redirectUris.id, removed));
  for (const entry of wanted) {
    const values = {
      url: entry.url,
      platform: entry.platform ?? 'web',
      settings: entry.settings ? defined(entry.settings) : {},
      updatedAt: at,
    };
    if (entry.id !== undefined)
      await tx.update(tables.redirectUris).set(values).where(eq(tables.redirectUris.id, entry.id));
    else await tx.insert(tables.redirectUris).values({ id: newId(), applicationId, ...values, createdAt: at });
  }
}

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
      const { settings } = row;
      return {
        application_id: row.id,
        organization_id: row.id,
        region: 'us',
        environment: row.plan === 'trial' ? 'sandbox' : 'production',
        ...(settings.domain ? { domain: settings.domain } : {}),
        branding: { name: row.name, ...settings.branding },
        ...(settings.hosted_authentication ? { hosted_authentication: settings.hosted_authentication } : {}),
        ...(settings.idp_settings ? { idp_settings: settings.idp_settings } : {}),
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

    async update(principal: Principal, input: UpdateApplicationInput): Promise<ApplicationDetails> {
      await db.write(async (tx) => {
        const [row] = await tx
          .select()
          .from(tables.applications)
          .where(eq(tables.applications.id, principal.applicationId))
          .limit(1);
        if (!row) throw notFound('Application', principal.applicationId);
        // Each part given replaces the stored one whole, as in Nylas (no deep merge).
        const settings = { ...row.settings };
        const { name, ...branding } = input.branding ?? {};
        if (input.branding) settings.branding = defined(branding);
        if (input.hosted_authentication) settings.hosted_authentication = defined(input.hosted_authentication);
        if (input.idp_settings) settings.idp_settings = defined(input.idp_settings);
        if (input.additional_settings) settings.additional_settings = defined(input.additional_settings);
        if (input.domain === '') delete settings.domain;
        else if (input.domain !== undefined) settings.domain = input.domain.toLowerCase();
        const at = now();
        await tx
          .update(tables.applications)
          .set({ settings, ...(name !== undefined ? { name } : {}), updatedAt: at })
          .where(eq(tables.applications.id, row.id));
        if (input.callback_uris) await replaceRedirectUris(tx, row.id, input.callback_uris, { newId, at });
      });
      return this.details(principal);
    },
  };
}

export type { ApplicationDetailsService } from './contracts.js';
