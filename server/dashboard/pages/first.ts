/**
 * The dashboard's first pages, built with its frame: overview, domains, accounts, approvals, keys and the access log
 * (server/dashboard/contracts.ts). The frame mounts every page listed here and in ./more.ts.
 */
import type { DashboardPage } from '../contracts.js';
import { accountsPage } from './accounts.js';
import { approvalPages } from './approvals.js';
import { domainPages } from './domains.js';
import { keyPages } from './keys.js';
import { overviewPage } from './overview.js';

export const FIRST_PAGES: readonly DashboardPage[] = [
  overviewPage,
  ...domainPages,
  accountsPage,
  ...approvalPages,
  ...keyPages,
];
