/**
 * The dashboard's pages for webhooks, policies and rules, deliverability, calendars and the mailbox viewer
 * (server/dashboard/contracts.ts). The frame mounts every page listed here.
 *
 * Their answers may carry two optional members beyond the seam's (./kit.ts PageExtras): `status` (404 or 403 for
 * what the key cannot reach or may not do) and `download` (an attachment's bytes, served as a file).
 */
import type { DashboardPage } from '../contracts.js';
import { CALENDAR_PAGES } from './calendars.js';
import { DELIVERABILITY_PAGES } from './deliverability.js';
import { MAIL_LIST_PAGES } from './mail.js';
import { MESSAGE_PAGES } from './message.js';
import { RULE_PAGES } from './rules.js';
import { WEBHOOK_PAGES } from './webhooks.js';

export const MORE_PAGES: readonly DashboardPage[] = [
  ...MAIL_LIST_PAGES,
  ...MESSAGE_PAGES,
  ...CALENDAR_PAGES,
  ...WEBHOOK_PAGES,
  ...RULE_PAGES,
  ...DELIVERABILITY_PAGES,
];
