/**
 * The dashboard's pages for webhooks, policies and rules, deliverability, calendars and the mailbox viewer
 * (server/dashboard/contracts.ts). The frame mounts every page listed here.
 */
import type { DashboardPage } from '../contracts.js';

export const MORE_PAGES: readonly DashboardPage[] = [];
