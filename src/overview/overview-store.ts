/**
 * @module overview/overview-store
 * The overview's counts (./overview-service.ts): one COUNT query per figure, over the tables the other areas write
 * (grants, messages, outbound sends and recipients, scheduled sends, webhooks, domains, approvals, jobs). Reads only.
 * The overview reads these tables itself rather than through seven front doors, each given a count for one page; a
 * figure that an area's rules decide (what a grant's scope is, what state a job is in) follows that area's rule here.
 *
 * A reach is the application's grants, or the grant ids of a scoped key: every count of grant-owned rows is of those.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../storage/index.js';

/** What a key reaches: its application, and its grants when it is scoped (undefined: every grant of it). */
export interface Reach {
  applicationId: string;
  grantIds?: readonly string[] | undefined;
}

/** `column IN (the grants reached)`: a list for a scoped key, the application's grants (by its index) otherwise. */
function inReach(column: SQL, reach: Reach): SQL {
  if (reach.grantIds === undefined)
    return sql`${column} IN (SELECT id FROM grants WHERE application_id = ${reach.applicationId})`;
  if (reach.grantIds.length === 0) return sql`0`;
  return sql`${column} IN (${sql.join(
    reach.grantIds.map((id) => sql`${id}`),
    sql`, `,
  )})`;
}

const number = (value: unknown) => Number(value ?? 0);

/** Grants reached, and how many of them are suspended. */
export async function countGrants(db: Database, reach: Reach): Promise<{ total: number; suspended: number }> {
  const row = await db.orm.get<{ total: number; suspended: number | null }>(sql`
    SELECT count(*) AS total, sum(suspended_at IS NOT NULL) AS suspended FROM grants
    WHERE application_id = ${reach.applicationId} AND ${inReach(sql`id`, reach)}`);
  return { total: number(row?.total), suspended: number(row?.suspended) };
}

/**
 * Messages received in [fromSeconds, toSeconds): a grant's rows by date on its index, less the sent copies and
 * drafts (a message's `date` is its receipt, or its sending for a sent copy).
 */
export async function countReceived(db: Database, reach: Reach, fromSeconds: number, toSeconds: number) {
  const row = await db.orm.get<{ received: number }>(sql`
    SELECT count(*) AS received FROM messages
    WHERE ${inReach(sql`grant_id`, reach)} AND date >= ${fromSeconds} AND date < ${toSeconds}
      AND NOT EXISTS (SELECT 1 FROM json_each(messages.folders) WHERE json_each.value IN ('sent', 'drafts'))`);
  return number(row?.received);
}

/**
 * Sends accepted in [fromMs, toMs) (unix ms): the grants' sends on the index by grant and time, and for the whole
 * application its transactional sends too (they belong to no grant). The service's own mail (webhook alerts) is not
 * the application's.
 */
export async function countSent(db: Database, reach: Reach, fromMs: number, toMs: number) {
  const ofGrants = await db.orm.get<{ sent: number }>(sql`
    SELECT count(*) AS sent FROM outbound_messages
    WHERE ${inReach(sql`grant_id`, reach)} AND accepted_at >= ${fromMs} AND accepted_at < ${toMs}
      AND kind <> 'system'`);
  if (reach.grantIds !== undefined) return number(ofGrants?.sent);
  const withoutGrant = await db.orm.get<{ sent: number }>(sql`
    SELECT count(*) AS sent FROM outbound_messages
    WHERE grant_id IS NULL AND application_id = ${reach.applicationId}
      AND accepted_at >= ${fromMs} AND accepted_at < ${toMs} AND kind <> 'system'`);
  return number(ofGrants?.sent) + number(withoutGrant?.sent);
}

/**
 * The outbound queue: recipients still owed, of sends with a recipient pending (`pending_raw_hash` is set exactly
 * while one is, and indexed, so finished sends are not read).
 */
export async function countOutboundQueue(db: Database, reach: Reach): Promise<{ queued: number; deferred: number }> {
  const owner =
    reach.grantIds === undefined ? sql`m.application_id = ${reach.applicationId}` : inReach(sql`m.grant_id`, reach);
  const row = await db.orm.get<{ queued: number | null; deferred: number | null }>(sql`
    SELECT sum(r.status = 'queued') AS queued, sum(r.status = 'deferred') AS deferred
    FROM outbound_messages m JOIN outbound_recipients r ON r.outbound_id = m.id
    WHERE m.pending_raw_hash IS NOT NULL AND ${owner} AND r.status IN ('queued', 'deferred')`);
  return { queued: number(row?.queued), deferred: number(row?.deferred) };
}

/** Scheduled sends not sent yet (pending, or being sent now). */
export async function countScheduled(db: Database, reach: Reach): Promise<number> {
  const row = await db.orm.get<{ scheduled: number }>(sql`
    SELECT count(*) AS scheduled FROM scheduled_messages
    WHERE ${inReach(sql`grant_id`, reach)} AND status IN ('pending', 'sending')`);
  return number(row?.scheduled);
}

/** The application's webhooks by status (stored `pause` is `paused` on the wire). */
export async function countWebhooks(db: Database, applicationId: string) {
  const rows = await db.orm.all<{ status: string; count: number }>(sql`
    SELECT status, count(*) AS count FROM webhooks WHERE application_id = ${applicationId} GROUP BY status`);
  const of = (status: string) => number(rows.find((row) => row.status === status)?.count);
  return {
    total: rows.reduce((sum, row) => sum + number(row.count), 0),
    active: of('active'),
    paused: of('pause'),
    failing: of('failing'),
    failed: of('failed'),
  };
}

/**
 * Notifications owed to the application's webhooks: their delivery jobs (`webhook.deliver`, src/webhooks/), whose
 * order key starts with the webhook's id; live ones pending, dead ones failed.
 */
export async function countWebhookDeliveries(db: Database, applicationId: string) {
  const row = await db.orm.get<{ pending: number | null; failed: number | null }>(sql`
    SELECT sum(j.dead_at IS NULL) AS pending, sum(j.dead_at IS NOT NULL) AS failed
    FROM jobs j JOIN webhooks w ON w.application_id = ${applicationId}
      AND j.order_key >= w.id || ' ' AND j.order_key < w.id || '!'
    WHERE j.kind = 'webhook.deliver'`);
  return { pending: number(row?.pending), failed: number(row?.failed) };
}

/** The application's domains, and those whose sending is paused. */
export async function countDomains(db: Database, applicationId: string) {
  const row = await db.orm.get<{ total: number; paused: number | null }>(sql`
    SELECT count(*) AS total, sum(sending_paused_at IS NOT NULL) AS paused FROM domains
    WHERE application_id = ${applicationId}`);
  return { total: number(row?.total), paused: number(row?.paused) };
}

/** Approvals waiting for a decision, of the grants reached. */
export async function countPendingApprovals(db: Database, reach: Reach): Promise<number> {
  const row = await db.orm.get<{ pending: number }>(sql`
    SELECT count(*) AS pending FROM approvals
    WHERE application_id = ${reach.applicationId} AND status = 'pending'
      ${reach.grantIds === undefined ? sql`` : sql`AND ${inReach(sql`grant_id`, reach)}`}`);
  return number(row?.pending);
}

/**
 * The grant a job works for, by its kind's payload (the kinds of src/outbound, src/webhooks, src/mail, src/imap and
 * src/deliverability); null for a job of no grant.
 */
const JOB_GRANT = sql`CASE j.kind
  WHEN 'mail.deliver' THEN (SELECT grant_id FROM outbound_messages WHERE id = json_extract(j.payload, '$.outbound_id'))
  WHEN 'mail.send_scheduled' THEN (SELECT grant_id FROM scheduled_messages WHERE id = json_extract(j.payload, '$.schedule_id'))
  WHEN 'webhook.deliver' THEN nullif(substr(j.order_key, instr(j.order_key, ' ') + 1), '')
  WHEN 'mail.invitations' THEN json_extract(j.payload, '$.copies[0].grant_id')
  WHEN 'deliverability.thread_replied' THEN json_extract(j.payload, '$.replies[0].grant_id')
  ELSE json_extract(j.payload, '$.grant_id') END`;

/** The application of a job that works for no grant: a transactional send's delivery, a webhook's delivery or alert. */
const JOB_APPLICATION = sql`CASE j.kind
  WHEN 'mail.deliver' THEN (SELECT application_id FROM outbound_messages WHERE id = json_extract(j.payload, '$.outbound_id'))
  WHEN 'webhook.deliver' THEN (SELECT application_id FROM webhooks WHERE id = substr(j.order_key, 1, instr(j.order_key, ' ') - 1))
  WHEN 'webhook.alert' THEN (SELECT application_id FROM webhooks WHERE id = json_extract(j.payload, '$.webhook_id'))
  END`;

/**
 * Background jobs of what the key reaches, by state at `nowMs` (the states of the service's metrics: running while
 * leased, due, later, dead). The jobs table is the service's; each job is counted for the grant (or, without one,
 * the application) it works for. One pass over the live queue and the dead jobs kept.
 */
export async function countJobs(db: Database, reach: Reach, nowMs: number) {
  const whole = reach.grantIds === undefined;
  const rows = await db.orm.all<{ state: string; count: number }>(sql`
    SELECT state, count(*) AS count FROM (
      SELECT CASE WHEN j.dead_at IS NOT NULL THEN 'dead'
                  WHEN j.lease_expires_at IS NOT NULL AND j.lease_expires_at > ${nowMs} THEN 'running'
                  WHEN j.run_at <= ${nowMs} THEN 'due'
                  ELSE 'later' END AS state,
             ${JOB_GRANT} AS grant_id
             ${whole ? sql`, ${JOB_APPLICATION} AS application_id` : sql``}
      FROM jobs j)
    WHERE ${inReach(sql`grant_id`, reach)}
      ${whole ? sql`OR (grant_id IS NULL AND application_id = ${reach.applicationId})` : sql``}
    GROUP BY state`);
  const of = (state: string) => number(rows.find((row) => row.state === state)?.count);
  return { running: of('running'), due: of('due'), later: of('later'), dead: of('dead') };
}
