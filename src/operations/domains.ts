/**
 * Manage Domains operations (`/v3/admin/domains`), reachable with an API key or a service-account signature. They
 * are the domains of Agent Accounts, which are in beta: each is marked `stability: 'beta'`.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  CreateDomainInputSchema,
  DomainRefInputSchema,
  DomainSchema,
  DomainVerificationInputSchema,
  DomainVerificationResultSchema,
  DmarcReportSchema,
  DomainSendingDaysSchema,
  ListDmarcReportsInputSchema,
  ListDomainSendingDaysInputSchema,
  ListDomainsInputSchema,
  UpdateDomainInputSchema,
} from '../schemas/domains.js';
import { defineOperation } from './define-operation.js';

const admin = 'api_key_or_service_account' as const;

export const listDomains = defineOperation({
  name: 'list_domains',
  title: 'List domains',
  description: 'Lists the domains registered to this application, oldest first.',
  input: ListDomainsInputSchema,
  output: pageOf(DomainSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/admin/domains', envelope: 'list', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal }) => core.accounts.domains.list(principal, input),
});

export const getDomain = defineOperation({
  name: 'get_domain',
  title: 'Get a domain',
  description: 'Returns one domain with its verification flags.',
  input: DomainRefInputSchema,
  output: DomainSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/admin/domains/:domain_id', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal }) => core.accounts.domains.find(principal, input.domain_id),
});

export const createDomain = defineOperation({
  name: 'create_domain',
  title: 'Register a domain',
  description:
    "Registers a domain for Agent Accounts. A subdomain of the service's trial domain is usable at once; a custom domain is usable once its ownership TXT record is verified (see domain info and verify).",
  input: CreateDomainInputSchema,
  output: DomainSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/admin/domains', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal }) => core.accounts.domains.create(principal, input),
});

export const updateDomain = defineOperation({
  name: 'update_domain',
  title: 'Update a domain',
  description:
    'Changes a domain\'s label, its warm-up, or resumes its paused sending (`sending: {status: "active"}`). The address cannot change: delete and register again instead.',
  input: UpdateDomainInputSchema,
  output: DomainSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/admin/domains/:domain_id', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal, requestId }) => core.accounts.domains.update(principal, input, { requestId }),
});

export const deleteDomain = defineOperation({
  name: 'delete_domain',
  title: 'Delete a domain',
  description: 'Removes a registered domain. Existing Agent Accounts on it keep their mail.',
  input: DomainRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/admin/domains/:domain_id', envelope: 'empty', auth: admin },
  tool: false,
  stability: 'beta',
  run: async (core, input, { principal }) => {
    await core.accounts.domains.destroy(principal, input.domain_id);
    return {};
  },
});

export const domainInfo = defineOperation({
  name: 'get_domain_verification_info',
  title: 'DNS record for a domain check',
  description:
    'Returns the DNS record to publish for one verification type (ownership, mx, spf, dkim, feedback, and the extension dmarc) and its current status.',
  input: DomainVerificationInputSchema,
  output: DomainVerificationResultSchema,
  hints: { readOnly: true },
  http: { method: 'POST', path: '/admin/domains/:domain_id/info', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal }) => core.accounts.domains.info(principal, input),
});

export const verifyDomain = defineOperation({
  name: 'verify_domain',
  title: 'Verify a domain record',
  description: 'Looks up one DNS record of the domain now and marks it verified when it matches.',
  input: DomainVerificationInputSchema,
  output: DomainVerificationResultSchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'POST', path: '/admin/domains/:domain_id/verify', auth: admin },
  tool: false,
  stability: 'beta',
  run: (core, input, { principal }) => core.accounts.domains.verify(principal, input),
});

export const listDmarcReports = defineOperation({
  name: 'list_domain_dmarc_reports',
  title: 'List DMARC reports of a domain',
  description:
    "Extension: the DMARC aggregate reports receivers mailed to the domain's rua address (dmarc-reports@<domain>), newest first, each with its reporter, period and pass/fail counts by source address.",
  input: ListDmarcReportsInputSchema,
  output: pageOf(DmarcReportSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/admin/domains/:domain_id/dmarc-reports', envelope: 'list', auth: admin },
  tool: false,
  run: (core, input, { principal }) => core.deliverability.dmarcReports.list(principal, input),
});

export const listDomainSendingDays = defineOperation({
  name: 'list_domain_sending_days',
  title: 'List the sending days of a domain',
  description:
    'Extension: recipients sent to from the domain, hard and soft bounces and complaints, and the bounce and complaint rates, per UTC day over the last days (default 30, at most 92), oldest first, days without sending as zeros. ' +
    "A resume of the domain's sending zeroes the bounces and complaints of its window.",
  input: ListDomainSendingDaysInputSchema,
  output: DomainSendingDaysSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/admin/domains/:domain_id/sending-days', envelope: 'list', auth: admin },
  tool: false,
  run: (core, input, { principal }) => core.accounts.domains.sendingDays(principal, input),
});
