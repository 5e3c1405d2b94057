/**
 * @module domains/domain-records
 * The DNS records the domain service (./domain-service.ts) asks an owner to publish: ownership, MX, SPF, DKIM (with
 * the key pair made on first use), the feedback MX and DMARC.
 */
import { generateKeyPairSync } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { VerificationType } from '../schemas/domains.js';
import type { DomainRow } from './domain-mapper.js';
import type { DomainState } from './domain-state.js';

/**
 * The local part of the address DMARC aggregate reports are asked for (`rua=mailto:dmarc-reports@<domain>`). The
 * SMTP listener takes mail to it on every registered domain for the DMARC intake (src/domains/dmarc-reports.ts), so it
 * is not a mailbox name on those domains.
 */
export const DMARC_RUA_LOCAL_PART = 'dmarc-reports';

/** The DMARC record suggested for a domain: monitoring only (`p=none`), aggregate reports to the service. */
export function dmarcRecordFor(domain: string): string {
  return `v=DMARC1; p=none; rua=mailto:${DMARC_RUA_LOCAL_PART}@${domain}`;
}

/** DKIM selector published for custom domains. */
export const DKIM_SELECTOR = 'agentpost';

/** The DNS record a verification type asks the owner to publish. */
export interface ExpectedRecord {
  host: string;
  type: 'TXT' | 'MX';
  value: string;
  priority?: number;
}

/** Makes the DKIM key pair on first use (RSA 2048, published as `p=`). */
export async function ensureDkimKey(state: DomainState, row: DomainRow): Promise<DomainRow> {
  if (row.dkimPublicKey) return row;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const [updated] = await state.db.write((tx) =>
    tx
      .update(tables.domains)
      .set({
        dkimSelector: DKIM_SELECTOR,
        dkimPublicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
        // Sealed at rest; outbound signing opens it (src/outbound/composition.ts).
        dkimPrivateKeyPem: state.secrets.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
        updatedAt: state.now(),
      })
      .where(eq(tables.domains.id, row.id))
      .returning(),
  );
  return updated!;
}

export function expectedRecord(state: DomainState, row: DomainRow, type: VerificationType): ExpectedRecord {
  const { config } = state;
  switch (type) {
    case 'ownership':
      return {
        host: `_agentpost.${row.domainAddress}`,
        type: 'TXT',
        value: `agentpost-verification=${row.verificationToken}`,
      };
    case 'mx':
      return { host: row.domainAddress, type: 'MX', value: config.mxHost, priority: 10 };
    case 'spf':
      return { host: row.domainAddress, type: 'TXT', value: `v=spf1 a:${config.mxHost} ~all` };
    case 'dkim':
      return {
        host: `${DKIM_SELECTOR}._domainkey.${row.domainAddress}`,
        type: 'TXT',
        value: `v=DKIM1; k=rsa; p=${row.dkimPublicKey ?? ''}`,
      };
    case 'feedback':
      return { host: `feedback.${row.domainAddress}`, type: 'MX', value: config.mxHost, priority: 10 };
    case 'dmarc':
      return { host: `_dmarc.${row.domainAddress}`, type: 'TXT', value: dmarcRecordFor(row.domainAddress) };
  }
}
