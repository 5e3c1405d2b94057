/**
 * @module overview/overview-service
 * The overview (./contracts.ts): which figures a principal may see (its permissions; the application's own objects,
 * webhooks and domains, only for a key that reaches the whole application), "today" in the time zone asked for, and
 * the counts of ./overview-store.ts, read at once.
 */
import type { Permission, Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import type { GetOverviewInput, Overview } from '../schemas/overview.js';
import { addDays, formatDate, parseDate, wallTimeAt, zonedWallTimeToEpoch } from '../time-zones.js';
import type { OverviewService } from './contracts.js';
import {
  countDomains,
  countGrants,
  countJobs,
  countOutboundQueue,
  countPendingApprovals,
  countReceived,
  countScheduled,
  countSent,
  countWebhookDeliveries,
  countWebhooks,
  type Reach,
} from './overview-store.js';

/** Start of the calendar day holding `epochMs` in `timeZone`, and of the next one, in unix ms (DST days included). */
export function dayAround(timeZone: string, epochMs: number): { startMs: number; endMs: number } {
  const wall = wallTimeAt(timeZone, epochMs);
  const midnight = (date: string) => {
    const { year, month, day } = parseDate(date)!;
    return zonedWallTimeToEpoch(timeZone, { year, month, day, hour: 0, minute: 0, second: 0 });
  };
  const today = formatDate(wall);
  return { startMs: midnight(today), endMs: midnight(addDays(today, 1)) };
}

/** Creates the overview service. */
export function createOverviewService({ db, clock }: CoreDeps): OverviewService {
  return {
    async read(principal: Principal, input: GetOverviewInput): Promise<Overview> {
      const may = (permission: Permission) => !principal.permissions || principal.permissions.has(permission);
      const reach: Reach = {
        applicationId: principal.applicationId,
        grantIds: principal.grantIds ? [...principal.grantIds] : undefined,
      };
      const whole = reach.grantIds === undefined;
      const timeZone = input.time_zone ?? 'UTC';
      const nowMs = clock.now().getTime();
      const { startMs, endMs } = dayAround(timeZone, nowMs);
      const when = <T>(allowed: boolean, read: () => Promise<T>) => (allowed ? read() : Promise.resolve(null));
      const [grants, received, sent, outbound, scheduled, deliveries, jobs, webhooks, domains, approvals] =
        await Promise.all([
          countGrants(db, reach),
          when(may('mail.read'), () => countReceived(db, reach, startMs / 1000, endMs / 1000)),
          when(may('mail.read'), () => countSent(db, reach, startMs, endMs)),
          when(may('mail.read'), () => countOutboundQueue(db, reach)),
          when(may('mail.read'), () => countScheduled(db, reach)),
          when(whole && may('webhooks.manage'), () => countWebhookDeliveries(db, reach.applicationId)),
          when(may('admin'), () => countJobs(db, reach, nowMs)),
          when(whole && may('webhooks.manage'), () => countWebhooks(db, reach.applicationId)),
          when(whole && may('admin'), () => countDomains(db, reach.applicationId)),
          when(may('approvals.decide'), () => countPendingApprovals(db, reach)),
        ]);
      return {
        time_zone: timeZone,
        day_start: Math.floor(startMs / 1000),
        day_end: Math.floor(endMs / 1000),
        scoped: !whole,
        grants,
        mail_today: received === null || sent === null ? null : { received, sent },
        queues: { outbound, scheduled_sends: scheduled, webhook_deliveries: deliveries, jobs },
        webhooks,
        domains,
        approvals: approvals === null ? null : { pending: approvals },
      };
    },
  };
}
