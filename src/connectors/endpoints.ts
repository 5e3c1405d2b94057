/**
 * @module connectors/endpoints
 * Where a connector's accounts are reached: the real providers' OAuth, IMAP, SMTP, CalDAV and CardDAV endpoints,
 * and the connector's `settings` that override them (how tests point a connector at loopback servers). Pure.
 */
import type { ConnectorEndpoints, ConnectorServer } from './contracts.js';

/** The endpoints a provider has without overrides; absent where the provider has none (or none is known). */
interface ProviderDefaults {
  authorizationUrl?: string;
  tokenUrl?: string;
  revocationUrl?: string;
  userinfoUrl?: string;
  imap?: { host: string; port: number };
  smtp?: { host: string; port: number };
  caldavUrl?: string;
  carddavUrl?: string;
}

/** Microsoft's tenant when the connector names none: any work, school or personal account. */
const MICROSOFT_DEFAULT_TENANT = 'common';

/**
 * The real providers' endpoints. Google: OAuth 2.0 for web server apps, OpenID Connect userinfo, IMAP/SMTP with
 * XOAUTH2, CalDAV v2 and CardDAV v1. Microsoft identity platform v2.0 (no revocation endpoint: a refresh token is
 * revoked by the user or an admin) and Exchange Online IMAP/SMTP (submission on 587 with STARTTLS). iCloud: IMAP,
 * SMTP, CalDAV and CardDAV with an app password (no OAuth).
 */
function providerDefaults(provider: string, tenant: string): ProviderDefaults {
  switch (provider) {
    case 'google':
      return {
        authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        revocationUrl: 'https://oauth2.googleapis.com/revoke',
        userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
        imap: { host: 'imap.gmail.com', port: 993 },
        smtp: { host: 'smtp.gmail.com', port: 465 },
        caldavUrl: 'https://apidata.googleusercontent.com/caldav/v2',
        carddavUrl: 'https://www.googleapis.com/carddav/v1',
      };
    case 'microsoft':
      return {
        authorizationUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
        tokenUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
        userinfoUrl: 'https://graph.microsoft.com/oidc/userinfo',
        imap: { host: 'outlook.office365.com', port: 993 },
        smtp: { host: 'smtp.office365.com', port: 587 },
      };
    case 'icloud':
      return {
        imap: { host: 'imap.mail.me.com', port: 993 },
        smtp: { host: 'smtp.mail.me.com', port: 587 },
        caldavUrl: 'https://caldav.icloud.com',
        carddavUrl: 'https://contacts.icloud.com',
      };
    default:
      return {};
  }
}

/** Ports whose protocol starts with TLS (IMAPS, SMTPS); any other port upgrades with STARTTLS. */
const IMPLICIT_TLS_PORTS = new Set([993, 465]);

/** The default port of a host given without one: the implicit-TLS port of the protocol. */
const DEFAULT_PORTS = { imap: 993, smtp: 465 } as const;

function stringSetting(settings: Record<string, unknown>, key: string): string | undefined {
  const value = settings[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function portSetting(settings: Record<string, unknown>, key: string): number | undefined {
  const value = settings[key];
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 65_536 ? value : undefined;
}

function server(
  settings: Record<string, unknown>,
  kind: 'imap' | 'smtp',
  fallback: { host: string; port: number } | undefined,
): ConnectorServer | undefined {
  const host = stringSetting(settings, `${kind}_host`) ?? fallback?.host;
  if (host === undefined) return undefined;
  const port = portSetting(settings, `${kind}_port`) ?? fallback?.port ?? DEFAULT_PORTS[kind];
  return { host, port, secure: IMPLICIT_TLS_PORTS.has(port) };
}

/**
 * The effective endpoints of a connector of `provider` with these settings: each override in `settings`
 * (`authorization_url`, `token_url`, `revocation_url`, `userinfo_url`, `imap_host`, `imap_port`, `smtp_host`,
 * `smtp_port`, `caldav_url`, `carddav_url`, `allow_insecure_tls`), else the real provider's value, else absent.
 * Microsoft's URLs use `settings.tenant` (default `common`). A port given without a host applies to the default host.
 */
export function connectorEndpoints(provider: string, settings: Record<string, unknown>): ConnectorEndpoints {
  const tenant = stringSetting(settings, 'tenant') ?? MICROSOFT_DEFAULT_TENANT;
  const defaults = providerDefaults(provider, tenant);
  const pick = (key: string, fallback: string | undefined) => stringSetting(settings, key) ?? fallback;
  const endpoints: ConnectorEndpoints = { allowInsecureTls: settings.allow_insecure_tls === true };
  const entries = {
    authorizationUrl: pick('authorization_url', defaults.authorizationUrl),
    tokenUrl: pick('token_url', defaults.tokenUrl),
    revocationUrl: pick('revocation_url', defaults.revocationUrl),
    userinfoUrl: pick('userinfo_url', defaults.userinfoUrl),
    imap: server(settings, 'imap', defaults.imap),
    smtp: server(settings, 'smtp', defaults.smtp),
    caldavUrl: pick('caldav_url', defaults.caldavUrl),
    carddavUrl: pick('carddav_url', defaults.carddavUrl),
  };
  for (const [key, value] of Object.entries(entries)) {
    if (value !== undefined) Object.assign(endpoints, { [key]: value });
  }
  return endpoints;
}
