/**
 * @module oauth/detect
 * Which provider an address belongs to (`POST /v3/providers/detect`): the consumer domains of Google, Microsoft,
 * Apple and Yahoo by name, and any other domain by its MX hosts (Google Workspace, Microsoft 365). Pure, apart from
 * the MX look-up given in.
 */
import type { DetectProvider } from '../schemas/oauth.js';

/** Consumer domains, each with its provider and the kind of account. */
const CONSUMER_DOMAINS: Record<string, { provider: string; type: string; oauth: boolean }> = {
  'gmail.com': { provider: 'google', type: 'gmail', oauth: true },
  'googlemail.com': { provider: 'google', type: 'gmail', oauth: true },
  'outlook.com': { provider: 'microsoft', type: 'outlook', oauth: true },
  'hotmail.com': { provider: 'microsoft', type: 'outlook', oauth: true },
  'live.com': { provider: 'microsoft', type: 'outlook', oauth: true },
  'msn.com': { provider: 'microsoft', type: 'outlook', oauth: true },
  'icloud.com': { provider: 'icloud', type: 'icloud', oauth: false },
  'me.com': { provider: 'icloud', type: 'icloud', oauth: false },
  'mac.com': { provider: 'icloud', type: 'icloud', oauth: false },
  'yahoo.com': { provider: 'yahoo', type: 'yahoo', oauth: false },
  'ymail.com': { provider: 'yahoo', type: 'yahoo', oauth: false },
};

/** MX host suffixes of hosted business mail. */
const MX_SUFFIXES: { suffix: string; provider: string; type: string }[] = [
  { suffix: '.google.com', provider: 'google', type: 'google_workspace' },
  { suffix: '.googlemail.com', provider: 'google', type: 'google_workspace' },
  { suffix: '.protection.outlook.com', provider: 'microsoft', type: 'microsoft_365' },
  { suffix: '.mail.icloud.com', provider: 'icloud', type: 'icloud' },
  { suffix: '.yahoodns.net', provider: 'yahoo', type: 'yahoo' },
];

function domainOf(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at < 1) return undefined;
  const domain = email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
  return /^[a-z0-9.-]{1,253}$/.test(domain) && domain.includes('.') ? domain : undefined;
}

/** The OAuth provider of a consumer address (`google`, `microsoft`), by its domain alone; undefined otherwise. */
export function detectByDomain(email: string): string | undefined {
  const known = CONSUMER_DOMAINS[domainOf(email) ?? ''];
  return known?.oauth ? known.provider : undefined;
}

/**
 * The provider of `email`: by its domain, else by its MX hosts (`lookupMx`; a failed look-up detects nothing).
 * Providers connected with a password (icloud, yahoo, and `imap` for any domain with MX) only with `allProviderTypes`.
 */
export async function detectProvider(
  email: string,
  allProviderTypes: boolean,
  lookupMx: (domain: string) => Promise<{ exchange: string }[]>,
): Promise<DetectProvider> {
  const none: DetectProvider = { email_address: email, detected: false };
  const domain = domainOf(email);
  if (domain === undefined) return none;
  const found = (provider: string, type: string, oauth: boolean): DetectProvider =>
    oauth || allProviderTypes ? { email_address: email, detected: true, provider, type } : none;
  const known = CONSUMER_DOMAINS[domain];
  if (known) return found(known.provider, known.type, known.oauth);
  let hosts: string[];
  try {
    hosts = (await lookupMx(domain)).map((record) => `.${record.exchange.toLowerCase().replace(/\.$/, '')}`);
  } catch {
    return none;
  }
  for (const { suffix, provider, type } of MX_SUFFIXES) {
    if (hosts.some((host) => host.endsWith(suffix)))
      return found(provider, type, provider === 'google' || provider === 'microsoft');
  }
  return hosts.length > 0 ? found('imap', 'imap', false) : none;
}
